package findings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/nodeproof/nodeproof/verify"
)

// Load reads the searches `nodeproof findings --json` wrote, for the
// findings known. A file that holds no finding while findings are known
// is refused: it would show a search that never ran as passed; so is one
// naming a finding not known, or a finding searched from no seed.
func Load(path string, known []verify.Finding) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: not a findings file (nodeproof findings --json): %v", path, err)
	}
	if f.Findings == nil {
		return nil, fmt.Errorf("%s: findings: required, a list of searches", path)
	}
	if len(f.Findings) == 0 && len(known) > 0 {
		return nil, fmt.Errorf("%s: findings: empty, while %d findings are known: the file is not the result of a search", path, len(known))
	}
	for i, r := range f.Findings {
		if !slices.ContainsFunc(known, func(k verify.Finding) bool { return k.ID == r.ID }) {
			return nil, fmt.Errorf("%s: findings[%d].id: no known finding %q", path, i, r.ID)
		}
		if len(r.Searches) == 0 {
			return nil, fmt.Errorf("%s: findings[%d].searches: empty; every finding is searched from at least one seed", path, i)
		}
	}
	return &f, nil
}
