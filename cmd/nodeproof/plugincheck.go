package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nodeproof/nodeproof/agent/plugincheck"
	"github.com/nodeproof/nodeproof/cli"
)

// maxPluginChecks bounds --checks: 100 times the default. Each sequence
// makes real gRPC calls to the plugin, about 0.1 s of them.
const maxPluginChecks = 100 * plugincheck.DefaultChecks

// pluginCheckFlags are the flags of `nodeproof plugin-check` as typed.
type pluginCheckFlags struct {
	dir, exec, execEnv, out      string
	mute                         []string
	checks                       int
	seed                         uint64
	restart                      bool
	registerTimeout, callTimeout time.Duration
	shrinkTime                   time.Duration
}

// pluginCheckOptions are the validated flags.
type pluginCheckOptions struct {
	// dir is --dir; empty with --exec, whose directory is made per run.
	dir     string
	exec    string
	execEnv string
	out     string
	check   plugincheck.Options
}

func newPluginCheckCommand() *cobra.Command {
	var f pluginCheckFlags
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
			opts, err := f.options(cmd.Flags().Changed)
			if err != nil {
				return cli.UsageError(err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runPluginCheck(ctx, opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.define(cmd.Flags())
	_ = cmd.MarkFlagDirname("dir")
	_ = cmd.MarkFlagDirname("out")
	return cmd
}

func (f *pluginCheckFlags) define(fl *pflag.FlagSet) {
	fl.StringVar(&f.dir, "dir", "", "serve kubelet.sock in `DIR` and wait for a plugin running there")
	fl.StringVar(&f.exec, "exec", "", "start the plugin with this shell `COMMAND` in a directory of its own, and stop it after")
	fl.StringVar(&f.execEnv, "exec-env", plugincheck.DefaultDirEnv, "the environment variable `NAME` that hands --exec's plugin its directory; empty for none")
	fl.IntVar(&f.checks, "checks", plugincheck.DefaultChecks, "`N` generated kubelet-call sequences per property")
	fl.Uint64Var(&f.seed, "seed", 0, "the seed `N` of the generated calls; 0 picks one and prints it")
	fl.StringSliceVar(&f.mute, "mute", nil, "`CHECK`s the generated calls judge and count but neither report nor stop at (the smoke pass still reports them; replay lines set them)")
	fl.BoolVar(&f.restart, "restart", false, "play a kubelet restart at the end: sockets removed, kubelet.sock served anew, the plugin must register again (default true with --exec)")
	fl.DurationVar(&f.registerTimeout, "register-timeout", plugincheck.DefaultRegisterTimeout, "how long to wait for the plugin to register, at the start and after the restart")
	fl.DurationVar(&f.callTimeout, "call-timeout", plugincheck.DefaultCallTimeout, "the bound on every call to the plugin and on ListAndWatch's first list")
	fl.DurationVar(&f.shrinkTime, "shrink-time", plugincheck.DefaultShrinkTime, "the bound on shrinking each failing sequence of generated calls; past it, the smallest failing sequence found is reported, marked bounded")
	fl.StringVar(&f.out, "out", "", "write index.html, report.md and report.json of the run into `DIR`")
}

// options validates the flags; changed says whether a flag was given.
func (f pluginCheckFlags) options(changed func(string) bool) (pluginCheckOptions, error) {
	opts := pluginCheckOptions{dir: f.dir, exec: strings.TrimSpace(f.exec), execEnv: f.execEnv, out: f.out}
	switch {
	case changed("dir") == changed("exec"):
		return opts, errors.New("give exactly one of --dir (a plugin already running) and --exec (a plugin to start)")
	case changed("dir") && f.dir == "":
		return opts, errors.New("--dir must name a directory")
	case changed("exec") && opts.exec == "":
		return opts, errors.New("--exec must name a command")
	case changed("exec-env") && !changed("exec"):
		return opts, errors.New("--exec-env goes with --exec")
	case f.execEnv != "" && (strings.ContainsAny(f.execEnv, "= \t\n") || f.execEnv[0] >= '0' && f.execEnv[0] <= '9'):
		return opts, fmt.Errorf("--exec-env must be an environment variable name (no '=', no white space, not starting with a digit), got %q", f.execEnv)
	case f.checks <= 0:
		return opts, fmt.Errorf("--checks must be positive, got %d", f.checks)
	case f.checks > maxPluginChecks:
		return opts, fmt.Errorf("--checks: %d exceeds the bound of %d", f.checks, maxPluginChecks)
	case f.registerTimeout <= 0:
		return opts, fmt.Errorf("--register-timeout must be positive, got %v", f.registerTimeout)
	case f.callTimeout <= 0:
		return opts, fmt.Errorf("--call-timeout must be positive, got %v", f.callTimeout)
	case f.shrinkTime <= 0:
		return opts, fmt.Errorf("--shrink-time must be positive, got %v", f.shrinkTime)
	case changed("out") && f.out == "":
		return opts, errors.New("--out must name a directory")
	}
	for _, id := range f.mute {
		if !slices.Contains(plugincheck.PropertyChecks(), id) {
			return opts, fmt.Errorf("--mute: %q is not a check of the generated kubelet calls; they are %s", id, strings.Join(plugincheck.PropertyChecks(), ", "))
		}
	}
	if opts.dir != "" {
		info, err := os.Stat(opts.dir)
		if err != nil {
			return opts, fmt.Errorf("--dir %q must be an existing directory: %v", opts.dir, err)
		}
		if !info.IsDir() {
			return opts, fmt.Errorf("--dir %q must be a directory, not a file", opts.dir)
		}
	}
	restart := f.restart
	if !changed("restart") {
		restart = opts.exec != ""
	}
	opts.check = plugincheck.Options{Dir: opts.dir, RegisterTimeout: f.registerTimeout, CallTimeout: f.callTimeout, ShrinkTime: f.shrinkTime,
		Checks: f.checks, Seed: f.seed, Mute: f.mute, Restart: restart, ReplayCommand: f.replayCommand(changed, restart)}
	return opts, nil
}

// replayCommand repeats the run's flags but --seed and --mute, which the
// checker adds.
func (f pluginCheckFlags) replayCommand(changed func(string) bool, restart bool) string {
	parts := []string{"nodeproof plugin-check"}
	if changed("dir") {
		parts = append(parts, "--dir", shellQuote(f.dir))
	} else {
		parts = append(parts, "--exec", shellQuote(f.exec))
		if f.execEnv != plugincheck.DefaultDirEnv {
			parts = append(parts, "--exec-env", shellQuote(f.execEnv))
		}
	}
	parts = append(parts, "--checks", fmt.Sprint(f.checks))
	if restart != (f.exec != "") {
		parts = append(parts, fmt.Sprintf("--restart=%t", restart))
	}
	if f.registerTimeout != plugincheck.DefaultRegisterTimeout {
		parts = append(parts, "--register-timeout", f.registerTimeout.String())
	}
	if f.callTimeout != plugincheck.DefaultCallTimeout {
		parts = append(parts, "--call-timeout", f.callTimeout.String())
	}
	if f.shrinkTime != plugincheck.DefaultShrinkTime {
		parts = append(parts, "--shrink-time", f.shrinkTime.String())
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// target says how the plugin is found, for the report.
func (o pluginCheckOptions) target() string {
	if o.exec != "" {
		return "--exec " + shellQuote(o.exec)
	}
	return "--dir " + shellQuote(o.dir)
}

// runPluginCheck runs the checker, starting and stopping the plugin for
// --exec, prints the summary and writes --out.
func runPluginCheck(ctx context.Context, opts pluginCheckOptions, stdout, stderr io.Writer) error {
	if opts.out != "" {
		if err := checkOutDir(opts.out); err != nil {
			return cli.UsageError(err)
		}
	}
	var plugin *plugincheck.Process
	if opts.exec != "" {
		// A directory of the run's own, under $TMPDIR: short enough for
		// the socket paths (108 bytes at most), and never a kubelet's.
		dir, err := os.MkdirTemp("", "plugin-check-")
		if err != nil {
			return cli.UsageError(fmt.Errorf("making the plugin's directory: %v", err))
		}
		defer os.RemoveAll(dir)
		opts.check.Dir = dir
		plugin = plugincheck.NewProcess(opts.exec, opts.execEnv, dir)
		opts.check.Launch = plugin.Launch
	}
	var bar cli.Progress
	if cli.IsTerminal(stderr) {
		bar = cli.NewProgress(stderr, true, "plugin-check", "cases", len("plugin-check"))
		opts.check.Progress = bar.Update
	}
	started := time.Now()
	res, err := plugincheck.Check(ctx, opts.check)
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
	section := plugincheck.NewReport(res, started, cli.Version(), opts.target())
	section.WriteText(stdout)
	if !section.Passed && !section.Interrupted && plugin != nil {
		plugin.WriteOutput(stderr)
	}
	if opts.out != "" {
		paths, err := writePluginCheckReport(opts.out, section)
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
