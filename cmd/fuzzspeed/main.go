// Command fuzzspeed measures each decoder fuzz target against the fuzzing
// engine's ceiling and an empty target in its own binary (`make fuzz-speed`,
// docs/commands/fuzzspeed.md); the command is package cli/fuzzspeed.
package main

import (
	"os"

	"github.com/nodeproof/nodeproof/cli/fuzzspeed"
)

func main() {
	os.Exit(fuzzspeed.Run(os.Args[1:], os.Stdout, os.Stderr))
}
