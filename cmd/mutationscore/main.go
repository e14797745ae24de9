// Command mutationscore prints nodeproof's mutation score from gremlins'
// reports of `make mutation` and checks docs/mutation.md's table of
// surviving mutants against them; the command is package cli/mutationscore.
package main

import (
	"os"

	"github.com/nodeproof/nodeproof/cli/mutationscore"
)

func main() {
	os.Exit(mutationscore.Run(os.Args[1:], os.Stdout, os.Stderr))
}
