package cli

import (
	"fmt"

	"github.com/nodeproof/nodeproof/agent/outpath"
)

// OutDir creates dir and proves it writable, so that a bad --out fails at
// once rather than after the work (report, plugin-check, campaign).
func OutDir(dir string) error {
	if err := outpath.Dir(dir); err != nil {
		return fmt.Errorf("--out %q must be a writable directory nodeproof can create: %v", dir, err)
	}
	return nil
}
