package plugincheck

import (
	"fmt"
	"time"

	"github.com/nodeproof/nodeproof/verify"
)

// Invocation is how `nodeproof plugin-check` was asked to find its plugin
// and run: the replay line that repeats a run and the report's target are
// written from it, so that both say what the command line said.
type Invocation struct {
	// Dir is the directory of a plugin already running (--dir); empty
	// when Exec starts one.
	Dir string
	// Exec is the command that starts the plugin (--exec), ExecEnv the
	// variable that hands it its directory (--exec-env).
	Exec, ExecEnv string
	// Checks, Restart and the timeouts are the run's settings.
	Checks                                   int
	Restart                                  bool
	RegisterTimeout, CallTimeout, ShrinkTime time.Duration
}

// ReplayCommand repeats the run's flags but --seed and --mute, which the
// checker adds; flags at their default are left out.
func (i Invocation) ReplayCommand() string {
	words := []string{"nodeproof", "plugin-check"}
	if i.Exec == "" {
		words = append(words, "--dir", i.Dir)
	} else {
		words = append(words, "--exec", i.Exec)
		if i.ExecEnv != DefaultDirEnv {
			words = append(words, "--exec-env", i.ExecEnv)
		}
	}
	words = append(words, "--checks", fmt.Sprint(i.Checks))
	// --restart defaults to true with --exec.
	if i.Restart != (i.Exec != "") {
		words = append(words, fmt.Sprintf("--restart=%t", i.Restart))
	}
	if i.RegisterTimeout != DefaultRegisterTimeout {
		words = append(words, "--register-timeout", i.RegisterTimeout.String())
	}
	if i.CallTimeout != DefaultCallTimeout {
		words = append(words, "--call-timeout", i.CallTimeout.String())
	}
	if i.ShrinkTime != DefaultShrinkTime {
		words = append(words, "--shrink-time", i.ShrinkTime.String())
	}
	return verify.CommandLine(words...)
}

// Target says how the plugin is found, for the report: "--exec 'CMD'" or
// "--dir DIR".
func (i Invocation) Target() string {
	if i.Exec != "" {
		return verify.CommandLine("--exec", i.Exec)
	}
	return verify.CommandLine("--dir", i.Dir)
}
