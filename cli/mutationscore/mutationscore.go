// Package mutationscore is the mutationscore command (cmd/mutationscore,
// the last step of `make mutation`): it prints nodeproof's mutation score
// from the JSON reports gremlins wrote (one per directory of core/, named
// after it), and fails when docs/mutation.md's table of surviving mutants is
// not true of those runs. Package mutants/score reads the reports and the
// table and compares them; this package reads the files its flags name and
// prints the result.
//
// Exit status: 0 when the table accounts for every survivor, 1 when it does
// not, 2 for bad flags or an unreadable report or table.
package mutationscore

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/mutants/score"
)

// Run is the command with its arguments and output, returning the exit status.
func Run(args []string, stdout, stderr io.Writer) int {
	var reportsDir, tablePath, root string
	status := 0
	cmd := &cobra.Command{
		Use:           "mutationscore --reports DIR --table FILE",
		Short:         "score gremlins' mutants of core/ against docs/mutation.md",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(*cobra.Command, []string) error {
			report, table, err := load(reportsDir, tablePath, root)
			if err != nil {
				return err
			}
			s := score.Summarize(report, table)
			fmt.Fprintf(stdout, "mutation score %.1f%%: %d killed of %d non-equivalent (%d lived, of which %d equivalent); "+
				"%d not covered, %d timed out, %d not viable, shown apart; gremlins tested for %.0f s\n",
				100*s.Score(), s.Killed, s.Killed+s.Lived-s.Equivalent, s.Lived, s.Equivalent,
				s.NotCovered, s.TimedOut, s.NotViable, s.Seconds)
			if s.Unmeasured > 0 {
				fmt.Fprintf(stdout, "%d rows of the table are about directories without a report here, and were not checked\n", s.Unmeasured)
			}
			for _, p := range s.Problems {
				fmt.Fprintf(stderr, "%s: %s\n", tablePath, p)
				status = 1
			}
			return nil
		},
	}
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	fl := cmd.Flags()
	fl.StringVar(&reportsDir, "reports", "report/mutation", "the `DIR` of gremlins' JSON reports, X.json for the run over ROOT/X")
	fl.StringVar(&tablePath, "table", "docs/mutation.md", "the `FILE` whose table lists every surviving mutant")
	fl.StringVar(&root, "root", "core", "the `ROOT` whose directories gremlins mutated, relative to the module root")
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(stderr, "mutationscore: %v\n", err)
		return 2
	}
	return status
}

// load reads every report in reportsDir, as one, and the survivors table.
func load(reportsDir, tablePath, root string) (score.Report, []score.Verdict, error) {
	paths, err := filepath.Glob(filepath.Join(reportsDir, "*.json"))
	if err != nil || len(paths) == 0 {
		return score.Report{}, nil, fmt.Errorf("--reports: %s holds no gremlins reports (*.json); run make mutation", reportsDir)
	}
	var all score.Report
	for _, path := range paths {
		r, err := readReport(path, root+"/"+strings.TrimSuffix(filepath.Base(path), ".json"))
		if err != nil {
			return score.Report{}, nil, fmt.Errorf("--reports: %v", err)
		}
		all.Mutants = append(all.Mutants, r.Mutants...)
		all.Dirs = append(all.Dirs, r.Dirs...)
		all.Seconds += r.Seconds
	}
	tf, err := os.Open(tablePath)
	if err != nil {
		return score.Report{}, nil, fmt.Errorf("--table: %v", err)
	}
	defer tf.Close()
	table, err := score.ParseTable(tf)
	if err != nil {
		return score.Report{}, nil, fmt.Errorf("--table %s: %v", tablePath, err)
	}
	return all, table, nil
}

func readReport(path, dir string) (score.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return score.Report{}, err
	}
	defer f.Close()
	r, err := score.Decode(f, dir)
	if err != nil {
		return score.Report{}, fmt.Errorf("%s: %v", path, err)
	}
	return r, nil
}
