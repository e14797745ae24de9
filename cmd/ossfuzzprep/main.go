// Command ossfuzzprep is the part of fuzz/oss-fuzz/build.sh that reads Go:
// the fuzz targets go-118-fuzz-build can run, and their seed corpora as
// libFuzzer inputs; the command is package cli/ossfuzzprep.
package main

import (
	"os"

	"github.com/nodeproof/nodeproof/cli/ossfuzzprep"
)

func main() {
	os.Exit(ossfuzzprep.Run(os.Args[1:], os.Stdout, os.Stderr))
}
