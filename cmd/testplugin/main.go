// Command testplugin runs a real device plugin whose faults are chosen on
// the command line, to try `nodeproof plugin-check --exec` or a real
// kubelet against a plugin that breaks the rules in a known way; the
// command is package cli/testplugin.
package main

import (
	"os"

	"github.com/nodeproof/nodeproof/cli/testplugin"
)

func main() {
	os.Exit(testplugin.Run(os.Args[1:], os.Getenv, os.Stderr, testplugin.WaitForSignal))
}
