package deviceplugin

import (
	"log/slog"
	"time"

	"github.com/nodeproof/nodeproof/core/devicemanager"
)

// Clock tells the time. The core takes time as an argument; the agent reads
// it from here, so tests can move past the 5-minute grace period at once.
type Clock interface {
	Now() time.Time
}

// Defaults the agent uses for zero Options fields.
const (
	// DefaultAllocateTimeout bounds GetPreferredAllocation and Allocate.
	// Upstream sets no deadline, so a hung plugin blocks admission forever.
	DefaultAllocateTimeout = 10 * time.Second
	// DefaultDialTimeout is upstream's bound on dialing a plugin.
	DefaultDialTimeout = 10 * time.Second
)

// Options configure an Agent. Only Dir is required.
type Options struct {
	// Dir is the device plugin directory (upstream
	// /var/lib/kubelet/device-plugins/): the agent creates it with mode 0750
	// if missing and keeps kubelet.sock, the checkpoint and the plugins'
	// sockets in it. The socket path <Dir>/kubelet.sock must fit the 107
	// bytes a Unix socket address holds.
	Dir string
	// Clock gives the time of disconnects and capacity queries. Nil means
	// the wall clock.
	Clock Clock
	// AllocateTimeout bounds each GetPreferredAllocation and Allocate RPC.
	// Zero means DefaultAllocateTimeout.
	AllocateTimeout time.Duration
	// DialTimeout bounds connecting to a registering plugin and asking for
	// its options. Zero means DefaultDialTimeout.
	DialTimeout time.Duration
	// Logger receives the agent's log records. Nil means slog.Default().
	Logger *slog.Logger
	// Limits bound the core's collections. A zero field takes the value of
	// devicemanager.DefaultLimits().
	Limits devicemanager.Limits
	// Containers are the containers the runtime reports when the agent
	// starts, for the kubelet restart path (PR #118635): a running container
	// keeps the devices the checkpoint records for it without a new Allocate
	// until SetSourcesReady, and its pod counts as active.
	Containers []devicemanager.ContainerRef
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// withDefaults fills the zero fields.
func (o Options) withDefaults() Options {
	if o.Clock == nil {
		o.Clock = wallClock{}
	}
	if o.AllocateTimeout <= 0 {
		o.AllocateTimeout = DefaultAllocateTimeout
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	d := devicemanager.DefaultLimits()
	for _, f := range []struct {
		v   *int
		def int
	}{
		{&o.Limits.Resources, d.Resources},
		{&o.Limits.DevicesPerResource, d.DevicesPerResource},
		{&o.Limits.Pods, d.Pods},
		{&o.Limits.PendingPlans, d.PendingPlans},
		{&o.Limits.NameLength, d.NameLength},
	} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	return o
}
