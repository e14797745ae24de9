package main

import (
	"fmt"
	"io"

	"github.com/nodeproof/nodeproof/cli"
)

// maxManifestBytes bounds what -f and --plan read: far more than the
// manifests of a node's 110 pods or a campaign plan take, and a stop for a
// path such as /dev/zero.
const maxManifestBytes = 32 << 20

// readManifestFile reads FILE, or stdin for "-", up to maxManifestBytes.
func readManifestFile(path string, stdin io.Reader) ([]byte, error) {
	name, b, err := cli.ReadInput(path, stdin, maxManifestBytes)
	if err != nil {
		return nil, err
	}
	if len(b) > maxManifestBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB; the manifests of a whole node, or a plan, are far smaller", name, maxManifestBytes>>20)
	}
	return b, nil
}
