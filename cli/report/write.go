package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/inventory"
	"github.com/nodeproof/nodeproof/phrase"
	"github.com/nodeproof/nodeproof/reportview"
)

// runMerge writes the report of the campaign's shards in o.Merge into
// o.Out, with the result files o names, and fails when a unit failed.
func (o *Options) runMerge(stdout, stderr io.Writer) error {
	r, err := o.merge(o.Merge)
	if err != nil {
		return cli.UsageError(fmt.Errorf("--merge: %v", err))
	}
	if err := cli.OutDir(o.Out); err != nil {
		return cli.UsageError(err)
	}
	r.Mutants, r.Conformance, r.PluginCheck, r.Node, r.Upstream = o.report.Mutants, o.report.Conformance, o.report.PluginCheck, o.report.Node, o.report.Upstream
	r.Finish(inventory.Subsystems(), o.known, 0)
	paths, err := write(o.Out, r)
	if err != nil {
		return cli.UsageError(err)
	}
	c := r.Campaign
	fmt.Fprintf(stderr, "merged %s of %s: %s\n", phrase.Count(c.Shards, "shard"), phrase.Count(c.Units, "unit"), r.Verdict().Headline)
	for _, p := range c.Problems() {
		fmt.Fprintf(stderr, "  %s\n", p)
	}
	reportview.PrintNotRun(stderr, r.NotRun)
	for _, p := range paths {
		fmt.Fprintln(stdout, p)
	}
	if !r.Passed {
		return cli.Exit(cli.StatusFailed)
	}
	return nil
}

// write writes the three renderings of r into dir and returns their paths.
func write(dir string, r *reportview.Report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	renderers := []struct {
		name   string
		render func(io.Writer, *reportview.Report) error
	}{
		{"index.html", reportview.WriteHTML},
		{"report.md", reportview.WriteMarkdown},
		{"report.json", func(w io.Writer, r *reportview.Report) error { return cli.WriteJSON(w, r) }},
	}
	var paths []string
	for _, x := range renderers {
		path := filepath.Join(dir, x.name)
		if err := writeFile(path, r, x.render); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func writeFile(path string, r *reportview.Report, render func(io.Writer, *reportview.Report) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := render(f, r); err != nil {
		f.Close()
		return fmt.Errorf("%s: %v", path, err)
	}
	return f.Close()
}
