package plugincheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	pc "github.com/nodeproof/nodeproof/agent/plugincheck"
	"github.com/nodeproof/nodeproof/cli"
)

// maxChecks bounds --checks: 100 times the default. Each sequence makes real
// gRPC calls to the plugin, about 0.1 s of them.
const maxChecks = 100 * pc.DefaultChecks

// Options are the flags of `nodeproof plugin-check`, as typed, and what
// Complete and Validate derive from them.
type Options struct {
	// Dir is the directory of a plugin already running; Exec the command
	// that starts one, ExecEnv the variable that hands it its directory.
	Dir, Exec, ExecEnv string
	// Out is the directory of the report's files; "" for none.
	Out string
	// Mute are the checks the generated calls judge but do not report.
	Mute []string
	// Checks is the number of generated sequences per property, Seed their
	// seed (0 picks one), Restart plays a kubelet restart at the end.
	Checks  int
	Seed    uint64
	Restart bool
	// The bounds of the registration, of each call and of shrinking.
	RegisterTimeout, CallTimeout, ShrinkTime time.Duration

	// changed says which flags were given (Complete); check is the
	// checker's options (Validate).
	changed func(name string) bool
	check   pc.Options
	// invocation is the command line as the replay line and the report
	// repeat it.
	invocation pc.Invocation
}

// NewCommand is `nodeproof plugin-check`.
func NewCommand() *cobra.Command {
	var o Options
	cmd := &cobra.Command{
		Use:   "plugin-check (--dir DIR | --exec 'CMD ARGS') [--exec-env NAME] [--checks N] [--seed N] [--mute CHECK,...] [--restart] [--register-timeout D] [--call-timeout D] [--shrink-time D] [--out DIR]",
		Short: "check a device plugin against the v1beta1 device plugin API by playing the kubelet",
		Long: `Plays the kubelet against a device plugin (package agent/plugincheck): serves kubelet.sock, waits for
the plugin to register and drives it with the calls a kubelet makes, drawn at random and shrunk on a
failure. With --dir it serves kubelet.sock in DIR and waits for a plugin already running there; with
--exec it makes a directory of its own, starts the command (through /bin/sh) with the directory in the
environment variable --exec-env and in place of {dir} in the command line, and stops it afterwards,
showing its output when the run fails. Every failing check is reported: after a failure, the
generated calls run again with that check muted (judged, never stopping a case), so each finding has
its own shrunk calls and a replay line with --seed and --mute. Prints one line per check (severity, how
often it ran and had something to judge, result), then every finding with its shrunk kubelet calls and
replay line; --out writes index.html, report.md and report.json.
Exit status: 1 when a contract or kubelet check fails (advice does not fail a run), 2 for bad flags or
when the check cannot start (no registration in time, a command that does not start, --out unwritable),
130 when SIGINT or SIGTERM stops the run (not a finding: the report says it was interrupted).`,
		Example: `  nodeproof plugin-check --exec 'testplugin'
  nodeproof plugin-check --exec 'my-plugin --socket-dir {dir}' --exec-env '' --checks 300 --out plugin-report
  nodeproof plugin-check --dir /var/lib/kubelet/device-plugins --restart`,
		DisableFlagsInUseLine: true,
		Args:                  cli.NoArguments,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Complete(cmd)
			if err := o.Validate(); err != nil {
				return err
			}
			ctx, stop := cli.InterruptContext(cmd.Context())
			defer stop()
			return o.Run(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Dir, "dir", "", "serve kubelet.sock in `DIR` and wait for a plugin running there")
	fl.StringVar(&o.Exec, "exec", "", "start the plugin with this shell `COMMAND` in a directory of its own, and stop it after")
	fl.StringVar(&o.ExecEnv, "exec-env", pc.DefaultDirEnv, "the environment variable `NAME` that hands --exec's plugin its directory; empty for none")
	fl.IntVar(&o.Checks, "checks", pc.DefaultChecks, "`N` generated kubelet-call sequences per property")
	fl.Uint64Var(&o.Seed, "seed", 0, "the seed `N` of the generated calls; 0 picks one and prints it")
	fl.StringSliceVar(&o.Mute, "mute", nil, "`CHECK`s the generated calls judge and count but neither report nor stop at (the smoke pass still reports them; replay lines set them)")
	fl.BoolVar(&o.Restart, "restart", false, "play a kubelet restart at the end: sockets removed, kubelet.sock served anew, the plugin must register again (default true with --exec)")
	fl.DurationVar(&o.RegisterTimeout, "register-timeout", pc.DefaultRegisterTimeout, "how long to wait for the plugin to register, at the start and after the restart")
	fl.DurationVar(&o.CallTimeout, "call-timeout", pc.DefaultCallTimeout, "the bound on every call to the plugin and on ListAndWatch's first list")
	fl.DurationVar(&o.ShrinkTime, "shrink-time", pc.DefaultShrinkTime, "the bound on shrinking each failing sequence of generated calls; past it, the smallest failing sequence found is reported, marked bounded")
	fl.StringVar(&o.Out, "out", "", "write index.html, report.md and report.json of the run into `DIR`")
	_ = cmd.MarkFlagDirname("dir")
	_ = cmd.MarkFlagDirname("out")
	return cmd
}

// Complete notes which flags were given: --dir and --exec exclude each
// other, and --restart defaults to true with --exec.
func (o *Options) Complete(cmd *cobra.Command) {
	o.changed = cmd.Flags().Changed
	o.Exec = strings.TrimSpace(o.Exec)
	if !o.changed("restart") {
		o.Restart = o.Exec != ""
	}
}

// Validate refuses bad flags with a usage error naming the flag, and
// derives the checker's options and the replay line.
func (o *Options) Validate() error {
	if err := o.validate(); err != nil {
		return cli.UsageError(err)
	}
	o.invocation = pc.Invocation{Dir: o.Dir, Exec: o.Exec, ExecEnv: o.ExecEnv, Checks: o.Checks, Restart: o.Restart,
		RegisterTimeout: o.RegisterTimeout, CallTimeout: o.CallTimeout, ShrinkTime: o.ShrinkTime}
	o.check = pc.Options{Dir: o.Dir, RegisterTimeout: o.RegisterTimeout, CallTimeout: o.CallTimeout, ShrinkTime: o.ShrinkTime,
		Checks: o.Checks, Seed: o.Seed, Mute: o.Mute, Restart: o.Restart, ReplayCommand: o.invocation.ReplayCommand()}
	return nil
}

func (o *Options) validate() error {
	changed := o.changed
	switch {
	case changed("dir") == changed("exec"):
		return errors.New("give exactly one of --dir (a plugin already running) and --exec (a plugin to start)")
	case changed("dir") && o.Dir == "":
		return errors.New("--dir must name a directory")
	case changed("exec") && o.Exec == "":
		return errors.New("--exec must name a command")
	case changed("exec-env") && !changed("exec"):
		return errors.New("--exec-env goes with --exec")
	case o.ExecEnv != "" && (strings.ContainsAny(o.ExecEnv, "= \t\n") || o.ExecEnv[0] >= '0' && o.ExecEnv[0] <= '9'):
		return fmt.Errorf("--exec-env must be an environment variable name (no '=', no white space, not starting with a digit), got %q", o.ExecEnv)
	case o.Checks <= 0:
		return fmt.Errorf("--checks must be positive, got %d", o.Checks)
	case o.Checks > maxChecks:
		return fmt.Errorf("--checks: %d exceeds the bound of %d", o.Checks, maxChecks)
	case o.RegisterTimeout <= 0:
		return fmt.Errorf("--register-timeout must be positive, got %v", o.RegisterTimeout)
	case o.CallTimeout <= 0:
		return fmt.Errorf("--call-timeout must be positive, got %v", o.CallTimeout)
	case o.ShrinkTime <= 0:
		return fmt.Errorf("--shrink-time must be positive, got %v", o.ShrinkTime)
	case changed("out") && o.Out == "":
		return errors.New("--out must name a directory")
	}
	for _, id := range o.Mute {
		if !slices.Contains(pc.PropertyChecks(), id) {
			return fmt.Errorf("--mute: %q is not a check of the generated kubelet calls; they are %s", id, strings.Join(pc.PropertyChecks(), ", "))
		}
	}
	if o.Dir != "" {
		info, err := os.Stat(o.Dir)
		if err != nil {
			return fmt.Errorf("--dir %q must be an existing directory: %v", o.Dir, err)
		}
		if !info.IsDir() {
			return fmt.Errorf("--dir %q must be a directory, not a file", o.Dir)
		}
	}
	return nil
}

// Run runs the checker, starting and stopping the plugin for --exec,
// prints the summary and writes --out. It fails when a contract or kubelet
// check fails, is a usage error when the check cannot start, and ends with
// status 130 when ctx is cancelled (SIGINT, SIGTERM).
func (o *Options) Run(ctx context.Context, stdout, stderr io.Writer) error {
	check := o.check
	if o.Out != "" {
		if err := cli.OutDir(o.Out); err != nil {
			return cli.UsageError(err)
		}
	}
	var plugin *pc.Process
	if o.Exec != "" {
		// A directory of the run's own, under $TMPDIR: short enough for
		// the socket paths (108 bytes at most), and never a kubelet's.
		dir, err := os.MkdirTemp("", "plugin-check-")
		if err != nil {
			return cli.UsageError(fmt.Errorf("making the plugin's directory: %v", err))
		}
		defer os.RemoveAll(dir)
		check.Dir = dir
		plugin = pc.NewProcess(o.Exec, o.ExecEnv, dir)
		check.Launch = plugin.Launch
	}
	var bar cli.Progress
	if cli.IsTerminal(stderr) {
		bar = cli.NewProgress(stderr, true, "plugin-check", "cases", len("plugin-check"))
		check.Progress = bar.Update
	}
	started := time.Now()
	res, err := pc.Check(ctx, check)
	if bar != nil {
		bar.Finish()
	}
	if plugin != nil {
		if stopErr := plugin.Stop(); stopErr != nil && err == nil && res.Passed() {
			fmt.Fprintf(stderr, "nodeproof plugin-check: stopping the plugin: %v\n", stopErr)
		}
	}
	if err != nil {
		if plugin != nil {
			plugin.WriteOutput(stderr)
		}
		return cli.UsageError(err)
	}
	section := pc.NewReport(res, started, cli.Version(), o.invocation.Target())
	section.WriteText(stdout)
	if !section.Passed && !section.Interrupted && plugin != nil {
		plugin.WriteOutput(stderr)
	}
	if o.Out != "" {
		paths, err := writeFiles(o.Out, section)
		if err != nil {
			return cli.UsageError(fmt.Errorf("--out: %v", err))
		}
		for _, p := range paths {
			fmt.Fprintln(stdout, p)
		}
	}
	switch {
	case section.Interrupted:
		return cli.InterruptedError()
	case !section.Passed:
		return cli.Exit(cli.StatusFailed)
	}
	return nil
}

// writeFiles writes index.html, report.md and report.json of the run into
// dir and returns their paths.
func writeFiles(dir string, s pc.Report) ([]string, error) {
	html, md, js := filepath.Join(dir, "index.html"), filepath.Join(dir, "report.md"), filepath.Join(dir, "report.json")
	if err := writeFile(html, s.WriteHTML); err != nil {
		return nil, err
	}
	if err := writeFile(md, func(w io.Writer) error {
		_, err := io.WriteString(w, s.Markdown())
		return err
	}); err != nil {
		return nil, err
	}
	if err := cli.WriteJSONFile(js, s); err != nil {
		return nil, fmt.Errorf("%s: %v", js, err)
	}
	return []string{html, md, js}, nil
}

// writeFile creates path and renders into it.
func writeFile(path string, render func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := render(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %v", path, err)
	}
	return f.Close()
}
