package cgroupfs

import (
	"fmt"
	"log/slog"

	"github.com/containerd/cgroups/v3"

	corecg "github.com/nodeproof/nodeproof/core/cgroups"
)

// Where the cgroup filesystems are mounted on a standard host.
const (
	// DefaultMountpoint holds one mount per controller on cgroup v1 and the
	// unified mount on cgroup v2.
	DefaultMountpoint = "/sys/fs/cgroup"
	// HybridV2Mountpoint is the cgroup2 mount of a hybrid host, the one a
	// manager forced to v2 uses there.
	HybridV2Mountpoint = "/sys/fs/cgroup/unified"
)

// Options configure a Manager. Only Root is required.
type Options struct {
	// Root is the manager's own path below each v1 controller mount or the
	// v2 mount, e.g. "nodeproof-test-1a2b": relative, slash separated, with
	// no empty, "." or ".." elements. Every cgroup Apply creates lives below
	// it; Delete removes its last element and everything below. Tests pass a
	// fresh root of their own, never the host's kubepods.
	Root string
	// Version is 1 or 2. Zero detects it with cgroups.Mode(): v2 on a
	// unified host, v1 on legacy and hybrid hosts (as the kubelet does).
	Version corecg.Version
	// Mountpoint is the directory holding the controller mounts (v1) or the
	// cgroup2 mount (v2). Empty means DefaultMountpoint, or
	// HybridV2Mountpoint for v2 on a hybrid host.
	Mountpoint string
	// Logger receives the manager's records. Nil means slog.Default().
	Logger *slog.Logger
}

// resolve fills in the detected version and mountpoint.
func (o Options) resolve() (Options, error) {
	if err := checkPath("Options.Root", o.Root); err != nil {
		return o, err
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	mode := cgroups.Mode()
	switch o.Version {
	case 0:
		switch mode {
		case cgroups.Unified:
			o.Version = corecg.V2
		case cgroups.Legacy, cgroups.Hybrid:
			o.Version = corecg.V1
		default:
			return o, fmt.Errorf("cgroupfs: no cgroup filesystem mounted at %s", DefaultMountpoint)
		}
	case corecg.V1, corecg.V2:
	default:
		return o, &InputError{Field: "Options.Version", Value: fmt.Sprint(int(o.Version)),
			Rule: "must be 0 (detect), 1 or 2"}
	}
	if o.Mountpoint == "" {
		o.Mountpoint = DefaultMountpoint
		if o.Version == corecg.V2 && mode == cgroups.Hybrid {
			o.Mountpoint = HybridV2Mountpoint
		}
	}
	return o, nil
}
