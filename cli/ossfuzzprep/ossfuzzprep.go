// Package ossfuzzprep is the ossfuzzprep command (cmd/ossfuzzprep), the
// part of fuzz/oss-fuzz/build.sh that reads Go: it lists the module's native
// fuzz targets with whether go-118-fuzz-build can run each (targets), and
// writes each runnable target's seed corpus, converted to libFuzzer inputs,
// as <name>_seed_corpus.zip (seeds). Package fuzz/libfuzzer finds the
// targets and converts the corpora; this package is the command line
// build.sh calls.
//
// Exit status: 0 on success, 1 on an error (a corpus file that does not
// parse or fit its harness, an unreadable tree), 2 for bad arguments.
package ossfuzzprep

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/fuzz/libfuzzer"
)

// Run is the command with its arguments and output, returning the exit status.
func Run(args []string, stdout, stderr io.Writer) int {
	var root, outDir string
	usageError := true
	root0 := &cobra.Command{
		Use:           "ossfuzzprep",
		Short:         "prepare nodeproof's native Go fuzz targets for OSS-Fuzz's libFuzzer build",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root0.PersistentFlags().StringVar(&root, "root", ".", "the module's root directory")
	targets := &cobra.Command{
		Use:   "targets",
		Short: "print one line per fuzz target: name, package, function, and why go-118-fuzz-build cannot run it (empty if it can), tab-separated",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			usageError = false
			found, err := libfuzzer.Discover(root)
			if err != nil {
				return err
			}
			for _, t := range found {
				fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\n", t.Name, t.Package, t.Func, t.Unsupported)
			}
			return nil
		},
	}
	seeds := &cobra.Command{
		Use:   "seeds --out DIR",
		Short: "write DIR/<name>_seed_corpus.zip for every target go-118-fuzz-build can run, from its testdata/fuzz/<Func> files",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if outDir == "" {
				return fmt.Errorf("--out: required")
			}
			usageError = false
			found, err := libfuzzer.Discover(root)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(outDir, 0o755); err != nil {
				return err
			}
			for _, t := range found {
				if t.Unsupported != "" {
					continue
				}
				zipPath := filepath.Join(outDir, t.Name+"_seed_corpus.zip")
				n, err := libfuzzer.WriteSeedZip(filepath.Join(root, t.SeedDir()), t.Params, zipPath)
				if err != nil {
					return fmt.Errorf("%s: %w", t.Name, err)
				}
				if n == 0 {
					fmt.Fprintf(stdout, "%s: no seed corpus in %s (OSS-Fuzz ignores f.Add)\n", t.Name, t.SeedDir())
					continue
				}
				fmt.Fprintf(stdout, "%s: %d seed inputs from %s\n", zipPath, n, t.SeedDir())
			}
			return nil
		},
	}
	seeds.Flags().StringVar(&outDir, "out", "", "directory for the seed corpus zips (OSS-Fuzz's $OUT)")
	root0.AddCommand(targets, seeds)
	root0.SetArgs(args)
	root0.SetOut(stdout)
	root0.SetErr(stderr)
	if err := root0.Execute(); err != nil {
		fmt.Fprintln(stderr, "ossfuzzprep:", err)
		if usageError {
			return 2
		}
		return 1
	}
	return 0
}
