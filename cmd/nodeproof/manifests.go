package main

import (
	"fmt"
	"io"
	"os"
)

// maxManifestBytes bounds what -f reads: far more than the manifests of a
// node's 110 pods take, and a stop for a path such as /dev/zero.
const maxManifestBytes = 32 << 20

// readManifestFile reads FILE, or stdin for "-", up to maxManifestBytes.
func readManifestFile(path string, stdin io.Reader) ([]byte, error) {
	r := stdin
	name := "stdin"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r, name = f, path
	}
	b, err := io.ReadAll(io.LimitReader(r, maxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(b) > maxManifestBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB; manifests of a whole node are far smaller", name, maxManifestBytes>>20)
	}
	return b, nil
}
