package upstream

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/agent/outpath"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/upstream"
	"github.com/nodeproof/nodeproof/verify"
)

// Deps are what the command needs beyond its flags: production runs the
// go command, tests a stand-in.
type Deps struct {
	Run func(ctx context.Context, dir string, r upstream.Release, opts upstream.RunOptions) (upstream.Column, error)
}

// Production runs the conformance module for real.
func Production() Deps { return Deps{Run: upstream.Run} }

// Options are the flags of `nodeproof upstream`.
type Options struct {
	// Releases is the comma-separated list of versions, or "all".
	Releases string
	// Module is the conformance module's directory.
	Module string
	// Dir receives each release's test events and column.
	Dir string
	// JSONPath is where the matrix is written; "" for nowhere.
	JSONPath string
	// ConformancePath and PluginCheckPath are where the modelled release's
	// run writes the conformance results and the plugin checker's upstream
	// runs, which nodeproof report reads.
	ConformancePath, PluginCheckPath string
	// Checks is the generated cases per comparison on every release but
	// the modelled one; 0 for the module's default.
	Checks int

	releases []upstream.Release
}

// NewCommand is `nodeproof upstream`.
func NewCommand(deps Deps) *cobra.Command {
	var o Options
	cmd := &cobra.Command{
		Use:   "upstream [--releases V1,V2|all] [--json FILE] [--dir DIR]",
		Short: "run the conformance module against upstream kubelet releases and write the release matrix",
		Long: `Builds the conformance module (conformance/) against each release's own kubelet packages (the
release's module file, conformance/releases/<v>.mod, and build tag; ` + upstream.Modelled + `, the release nodeproof
models, uses go.mod) and runs its tests. Prints, per confirmed finding, whether each release shows the bug
(present), keeps the promise (absent) or could not be driven (broken), and which comparisons of nodeproof's
core differ on a release: a behaviour change since ` + upstream.Modelled + `, not a failure. Writes each release's
test events to DIR/<v>.jsonl and the matrix to --json.
Releases: ` + strings.Join(upstream.Versions(), ", ") + `.
Exit status: 1 when a test fails on ` + upstream.Modelled + `, a release does not build, a finding's test breaks on
a release, or a finding's record (docs/findings.md) says the opposite of a cell, or the output cannot be
written; 2 for bad flags; 130 on SIGINT or SIGTERM.`,
		Example: `  nodeproof upstream --releases v1.36.3,v1.37.2 --json report/upstream.json
  nodeproof upstream --releases all`,
		DisableFlagsInUseLine: true,
		Args:                  cli.NoArguments,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			ctx, stop := cli.InterruptContext(cmd.Context())
			defer stop()
			return o.Run(ctx, deps, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Releases, "releases", upstream.Modelled, "the releases `V1,V2`, or all")
	fl.StringVar(&o.Module, "module", "conformance", "the conformance module's `DIR`")
	fl.StringVar(&o.Dir, "dir", "report/upstream", "write each release's test events to `DIR`")
	fl.StringVar(&o.JSONPath, "json", "", "write the matrix as JSON to this `FILE`")
	fl.IntVar(&o.Checks, "checks", 0, "generated cases `N` per comparison on every release but "+upstream.Modelled+" (0: the module's 10,000); "+upstream.Modelled+" always runs the module's default, as make conformance does")
	fl.StringVar(&o.ConformancePath, "conformance", "report/conformance.json", "the modelled release's conformance results `FILE`")
	fl.StringVar(&o.PluginCheckPath, "plugin-check", "report/plugincheck.json", "the modelled release's plugin checker runs `FILE`")
	return cmd
}

// Validate refuses bad flags before anything is built.
func (o *Options) Validate() error {
	if err := o.validate(); err != nil {
		return cli.UsageError(err)
	}
	return nil
}

func (o *Options) validate() error {
	o.releases = nil
	if o.Checks < 0 {
		return fmt.Errorf("--checks: %d is not a number of cases (0 for the module's default)", o.Checks)
	}
	if o.Releases == "all" {
		o.releases = upstream.Releases
	} else {
		for _, v := range strings.Split(o.Releases, ",") {
			r, err := upstream.Find(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("--releases: %w", err)
			}
			if slices.Contains(o.releases, r) {
				return fmt.Errorf("--releases: %s given twice", r.Version)
			}
			o.releases = append(o.releases, r)
		}
	}
	if info, err := os.Stat(filepath.Join(o.Module, "go.mod")); err != nil || info.IsDir() {
		return fmt.Errorf("--module %s: no go.mod there (run from the repository's root, or name the conformance module)", o.Module)
	}
	for _, r := range o.releases {
		if r.ModFile != "" {
			if _, err := os.Stat(filepath.Join(o.Module, r.ModFile)); err != nil {
				return fmt.Errorf("--releases: %s: its module file %s is missing from %s", r.Version, r.ModFile, o.Module)
			}
		}
	}
	for flag, path := range map[string]string{"--json": o.JSONPath, "--conformance": o.ConformancePath, "--plugin-check": o.PluginCheckPath} {
		if path == "" {
			continue
		}
		if err := outpath.File(path); err != nil {
			return fmt.Errorf("%s: %v", flag, err)
		}
	}
	return nil
}

// Run runs each release in turn, printing each test as it ends, then the
// matrix; it writes the events, the columns and the matrix, and fails as
// the command's help says.
func (o *Options) Run(ctx context.Context, deps Deps, out io.Writer) error {
	w := &cli.Writer{W: out}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return cli.OutputError(fmt.Errorf("--dir: %w", err))
	}
	var columns []upstream.Column
	for _, r := range o.releases {
		col, err := o.runRelease(ctx, deps, r, w)
		if ctx.Err() != nil {
			return cli.InterruptedError()
		}
		if err != nil {
			return cli.Failed(fmt.Errorf("%s: %w", r.Version, err))
		}
		if err := cli.WriteJSONFile(filepath.Join(o.Dir, r.Version+".json"), col); err != nil {
			return cli.OutputError(err)
		}
		columns = append(columns, col)
	}
	m := upstream.Build(verify.Findings(), columns)
	fmt.Fprint(w, upstream.Text(m))
	if w.Err != nil {
		return cli.OutputError(w.Err)
	}
	if o.JSONPath != "" {
		if err := os.MkdirAll(filepath.Dir(o.JSONPath), 0o755); err != nil {
			return cli.OutputError(fmt.Errorf("--json: %w", err))
		}
		if err := cli.WriteJSONFile(o.JSONPath, m); err != nil {
			return cli.OutputError(fmt.Errorf("--json: %w", err))
		}
	}
	if len(m.Failures()) > 0 {
		return cli.Exit(cli.StatusFailed)
	}
	return nil
}

func (o *Options) runRelease(ctx context.Context, deps Deps, r upstream.Release, w *cli.Writer) (upstream.Column, error) {
	events, err := os.Create(filepath.Join(o.Dir, r.Version+".jsonl"))
	if err != nil {
		return upstream.Column{}, err
	}
	defer events.Close()
	opts := upstream.RunOptions{Events: events, Done: func(t upstream.Test) {
		verdict := "ok  "
		if !t.Passed {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "  %s %s %s (%.1f s)\n", r.Version, verdict, t.Name, t.Seconds)
	}}
	if r.Version != upstream.Modelled {
		opts.Checks = o.Checks
	}
	if r.Version == upstream.Modelled {
		env, err := absEnv(map[string]string{"NODEPROOF_CONFORMANCE_JSON": o.ConformancePath, "NODEPROOF_PLUGINCHECK_JSON": o.PluginCheckPath})
		if err != nil {
			return upstream.Column{}, err
		}
		opts.Env = env
	}
	fmt.Fprintf(w, "%s: building the conformance module (%s) and running its tests\n", r.Version, strings.Join(append([]string{"go test -c"}, r.BuildFlags()...), " "))
	col, err := deps.Run(ctx, o.Module, r, opts)
	if err != nil {
		return col, err
	}
	if col.Error != "" {
		fmt.Fprintf(w, "%s: %s\n", r.Version, col.Error)
	}
	budget := "the module's 10,000"
	if col.Checks > 0 {
		budget = strconv.Itoa(col.Checks)
	}
	fmt.Fprintf(w, "%s: built in %.0f s, ran %d tests in %.0f s (%s cases a comparison), %d failed\n", r.Version, col.BuildSeconds, len(col.Tests), col.RunSeconds, budget, len(col.Failed()))
	return col, events.Close()
}

// absEnv is the environment entries for the paths, made absolute, with
// their directories made: the test binary runs in the conformance module's
// directory.
func absEnv(paths map[string]string) ([]string, error) {
	var env []string
	for _, name := range slices.Sorted(maps.Keys(paths)) {
		if paths[name] == "" {
			continue
		}
		abs, err := filepath.Abs(paths[name])
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return nil, err
		}
		env = append(env, name+"="+abs)
	}
	return env, nil
}
