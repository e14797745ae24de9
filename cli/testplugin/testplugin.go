// Package testplugin is the testplugin command (cmd/testplugin): it runs
// agent/deviceplugin/testplugin as a process, a real device plugin whose
// faults are chosen on the command line, so that `nodeproof plugin-check
// --exec` (or a real kubelet) can be tried against a plugin that breaks the
// rules in a known way. This package turns the flags into the plugin's
// configuration and serves it until told to stop.
//
// It reads the device plugin directory from --dir, else from the
// PLUGIN_SOCK_DIR environment variable (the name the Kubernetes sample
// device plugin reads), else /var/lib/kubelet/device-plugins. It serves
// until SIGINT or SIGTERM, then removes its socket and exits 0; a refused
// registration exits 1. Being a test fixture with a flat set of knobs, it
// uses the standard flag package rather than nodeproof's cobra tree.
package testplugin

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	plugin "github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
)

// dirEnv is the environment variable the directory is read from when --dir
// is not given.
const dirEnv = "PLUGIN_SOCK_DIR"

// WaitForSignal blocks until the process is asked to stop.
func WaitForSignal() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
}

// Run parses args, starts the plugin, waits for wait to return (in the
// command, WaitForSignal) and stops it. getenv reads the environment. It
// returns the exit status: 2 for bad flags, 1 when the plugin
// cannot start or register.
func Run(args []string, getenv func(string) string, stderr io.Writer, wait func()) int {
	cfg, err := parse(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "testplugin: %v\n", err)
		return 2
	}
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	p, err := plugin.Start(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "testplugin: %v\n", err)
		return 1
	}
	cfg.Logger.Info("serving", "dir", cfg.Dir, "endpoint", cfg.Endpoint, "resource", cfg.ResourceName)
	wait()
	p.Stop()
	return 0
}

// faultFlags collects repeated --fault RPC=KIND flags.
type faultFlags map[plugin.RPC]plugin.Fault

func (f faultFlags) String() string { return "" }

// Set reads one RPC=KIND; several for one RPC combine.
func (f faultFlags) Set(value string) error {
	name, kind, ok := strings.Cut(value, "=")
	if !ok {
		return fmt.Errorf("%q: want RPC=KIND", value)
	}
	rpc := plugin.RPC(name)
	if !slices.Contains(rpcs, rpc) {
		return fmt.Errorf("%q: unknown RPC; RPCs: %s", name, joinRPCs())
	}
	fault := f[rpc]
	switch {
	case kind == "error":
		fault.Err = fmt.Errorf("testplugin: --fault %s", value)
	case kind == "hang":
		fault.Hang = true
	case kind == "crash":
		fault.Crash = true
	case strings.HasPrefix(kind, "delay:"):
		d, err := time.ParseDuration(strings.TrimPrefix(kind, "delay:"))
		if err != nil || d <= 0 {
			return fmt.Errorf("%q: delay:DURATION needs a positive duration such as 2s", value)
		}
		fault.Delay = d
	default:
		m, known := malformations[kind]
		if !known {
			return fmt.Errorf("%q: unknown kind %q; kinds: error, hang, crash, delay:DURATION, %s", value, kind, strings.Join(sortedNames(), ", "))
		}
		fault.Malformed = m
	}
	f[rpc] = fault
	return nil
}

var rpcs = []plugin.RPC{plugin.GetDevicePluginOptions, plugin.ListAndWatch, plugin.GetPreferredAllocation,
	plugin.Allocate, plugin.PreStartContainer}

func joinRPCs() string {
	names := make([]string, len(rpcs))
	for i, r := range rpcs {
		names[i] = string(r)
	}
	return strings.Join(names, ", ")
}

// malformations are the malformed answers by the name --fault takes.
var malformations = map[string]plugin.Malformation{
	"no-container-responses":       plugin.NoContainerResponses,
	"extra-container-responses":    plugin.ExtraContainerResponses,
	"unknown-ids":                  plugin.UnknownDeviceIDs,
	"duplicate-ids":                plugin.DuplicateDeviceIDs,
	"wrong-preferred-size":         plugin.WrongPreferredSize,
	"missing-must-include":         plugin.MissingMustInclude,
	"relative-device-paths":        plugin.RelativeDevicePaths,
	"ends-stream":                  plugin.EndsStream,
	"reversed-container-responses": plugin.ReversedContainerResponses,
}

func sortedNames() []string {
	names := make([]string, 0, len(malformations))
	for n := range malformations {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// parse reads the flags into a plugin configuration.
func parse(args []string, getenv func(string) string, stderr io.Writer) (plugin.Config, error) {
	fs := flag.NewFlagSet("testplugin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	faults := faultFlags{}
	dir := fs.String("dir", "", "the device plugin `DIR` holding kubelet.sock (default $"+dirEnv+", else "+v1beta1.DevicePluginPath+")")
	endpoint := fs.String("endpoint", "testplugin.sock", "the `NAME` of the plugin's socket in the directory")
	resource := fs.String("resource", "example.com/testplugin", "the extended resource `NAME` to register")
	healthy := fs.Int("devices", 4, "`N` healthy devices, dev-0 to dev-N-1")
	unhealthy := fs.Int("unhealthy", 1, "`N` unhealthy devices after the healthy ones")
	health := fs.String("health", v1beta1.Unhealthy, "the health `VALUE` the unhealthy devices report (anything, to try a kubelet)")
	version := fs.String("version", v1beta1.Version, "the API `VERSION` sent in Register")
	preStart := fs.Bool("prestart", true, "ask the kubelet to call PreStartContainer")
	preferred := fs.Bool("preferred", true, "offer GetPreferredAllocation")
	acceptUnknown := fs.Bool("accept-unknown", false, "answer Allocate of unknown or unhealthy devices instead of failing")
	noReregister := fs.Bool("no-reregister", false, "never register again when kubelet.sock is created anew")
	registerTimeout := fs.Duration("register-timeout", 10*time.Second, "bound on each Register call")
	registerEndpoint := fs.String("register-endpoint", "", "the endpoint `NAME` sent in Register, if not --endpoint (which is still the socket served)")
	registerOptions := fs.String("register-options", "", "the options sent in Register, if not the ones GetDevicePluginOptions answers: a comma `LIST` of prestart and preferred, or none")
	failDeviceAfter := fs.Int("fail-device-after", 0, "legal: after `N` Allocate calls, the first that asks for the last healthy device finds it failed: listed Unhealthy from then on, and refused")
	reregisterEndpoint := fs.String("reregister-endpoint", "", "legal: the socket `NAME` to serve and register after a kubelet restart removed the first one")
	idsPerHostDevice := fs.Int("ids-per-host-device", 0, "legal: list each host device under `N` consecutive device IDs; Allocate answers its device spec and mount once per ID")
	fs.Var(faults, "fault", "`RPC=KIND`, repeatable: KIND is error, hang, crash, delay:DURATION or a malformed answer ("+
		strings.Join(sortedNames(), ", ")+")")
	if err := fs.Parse(args); err != nil {
		return plugin.Config{}, err
	}
	if fs.NArg() > 0 {
		return plugin.Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *healthy < 0 || *unhealthy < 0 || *healthy+*unhealthy > 1000 {
		return plugin.Config{}, fmt.Errorf("--devices and --unhealthy must not be negative and add up to at most 1000, got %d and %d", *healthy, *unhealthy)
	}
	registered, err := parseOptions(*registerOptions)
	if err != nil {
		return plugin.Config{}, err
	}
	if *idsPerHostDevice < 0 {
		return plugin.Config{}, fmt.Errorf("--ids-per-host-device must not be negative, got %d", *idsPerHostDevice)
	}
	var failure *plugin.DeviceFailure
	if given(fs, "fail-device-after") {
		if *failDeviceAfter < 0 || *healthy == 0 {
			return plugin.Config{}, fmt.Errorf("--fail-device-after needs a healthy device (--devices at least 1) and a count of 0 or more, got --devices %d and %d", *healthy, *failDeviceAfter)
		}
		failure = &plugin.DeviceFailure{ID: fmt.Sprintf("dev-%d", *healthy-1), AfterAllocates: *failDeviceAfter}
	}
	if *dir == "" {
		*dir = getenv(dirEnv)
	}
	if *dir == "" {
		*dir = v1beta1.DevicePluginPath
	}
	cfg := plugin.Config{
		Dir: *dir, Endpoint: *endpoint, ResourceName: *resource, Version: *version,
		PreStartRequired: *preStart, GetPreferredAllocationAvailable: *preferred,
		RejectUnknownIDs: !*acceptUnknown, NoReregister: *noReregister, RegisterTimeout: *registerTimeout,
		Faults: faults, RegisteredEndpoint: *registerEndpoint, RegisteredOptions: registered,
		DeviceFailure: failure, ReregisterEndpoint: *reregisterEndpoint, IDsPerHostDevice: *idsPerHostDevice,
	}
	for i := range *healthy + *unhealthy {
		d := plugin.Device{ID: fmt.Sprintf("dev-%d", i), Health: v1beta1.Healthy}
		if i >= *healthy {
			d.Health = *health
		}
		cfg.Devices = append(cfg.Devices, d)
	}
	return cfg, nil
}

// given reports whether the flag name was set on the command line.
func given(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// parseOptions reads --register-options: "" for none given, "none" or a
// comma list of prestart and preferred.
func parseOptions(list string) (*v1beta1.DevicePluginOptions, error) {
	if list == "" {
		return nil, nil
	}
	opts := &v1beta1.DevicePluginOptions{}
	if list == "none" {
		return opts, nil
	}
	for _, name := range strings.Split(list, ",") {
		switch name {
		case "prestart":
			opts.PreStartRequired = true
		case "preferred":
			opts.GetPreferredAllocationAvailable = true
		default:
			return nil, fmt.Errorf("--register-options: %q is not an option; want a comma list of prestart and preferred, or none", name)
		}
	}
	return opts, nil
}
