package cgroups

import (
	"strings"

	"github.com/nodeproof/nodeproof/core/pod"
)

// Cgroup names, built as upstream's CgroupName: a list of components under
// the cgroup root, turned into a path by the driver (§5.7).
//
//	                    cgroupfs                       systemd
//	kubepods            kubepods                       kubepods.slice
//	tier                kubepods/burstable             kubepods.slice/kubepods-burstable.slice
//	Burstable pod       kubepods/burstable/pod<uid>    .../kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice
//	Guaranteed pod      kubepods/pod<uid>              kubepods.slice/kubepods-pod<uid_>.slice
//	container           <pod>/<id>                     <pod slice>/cri-containerd-<id>.scope
//
// The systemd driver replaces '-' with '_' in every component (so a UID's
// dashes become underscores) and expands the joined name into the slice's
// ancestry, as systemd places slices. Container cgroups are the runtime's:
// containerd puts a container's cgroup directly under the pod with the
// cgroupfs driver and names it cri-containerd-<id>.scope with systemd. The
// ID is the container's RuntimeID; where it is unknown, the container's name
// stands in for it (container names are unique within a pod and valid in
// both forms).

// Fixed names of the hierarchy.
const (
	KubepodsName   = "kubepods"
	BurstableName  = "burstable"
	BestEffortName = "besteffort"
	// PodPrefix starts every pod cgroup's name: "pod" + UID.
	PodPrefix = "pod"
	// SystemdScopePrefix starts a container's scope with the systemd driver.
	SystemdScopePrefix = "cri-containerd-"
)

// cgroupPath turns components into a path relative to the cgroup
// filesystem's root, without a leading slash.
func cgroupPath(d Driver, components []string) string {
	if d != DriverSystemd {
		return strings.Join(components, "/")
	}
	escaped := make([]string, len(components))
	for i, c := range components {
		escaped[i] = strings.ReplaceAll(c, "-", "_")
	}
	// Expanding "a-b-c.slice" gives a.slice/a-b.slice/a-b-c.slice.
	slices := make([]string, len(escaped))
	for i := range escaped {
		slices[i] = strings.Join(escaped[:i+1], "-") + ".slice"
	}
	return strings.Join(slices, "/")
}

// names computes the components of the kubelet's cgroups under c.
type names struct {
	driver Driver
	root   []string
}

func newNames(c Config) (names, error) {
	root, err := rootComponents(c.CgroupRoot)
	if err != nil {
		return names{}, err
	}
	return names{driver: c.CgroupDriver, root: root}, nil
}

func (n names) kubepods() []string {
	return append(append([]string(nil), n.root...), KubepodsName)
}

// tier returns the components of a QoS class's parent: kubepods itself for
// Guaranteed.
func (n names) tier(q pod.QOSClass) []string {
	switch q {
	case pod.Burstable:
		return append(n.kubepods(), BurstableName)
	case pod.BestEffort:
		return append(n.kubepods(), BestEffortName)
	}
	return n.kubepods()
}

func (n names) pod(q pod.QOSClass, uid string) []string {
	return append(n.tier(q), PodPrefix+uid)
}

func (n names) path(components []string) string { return cgroupPath(n.driver, components) }

// containerPath names a container's cgroup after its runtime ID, or after
// its name where the ID is unknown.
func (n names) containerPath(podPath string, c pod.Container) string {
	leaf := c.Name
	if c.RuntimeID != "" {
		leaf = c.RuntimeID
	}
	if n.driver == DriverSystemd {
		return podPath + "/" + SystemdScopePrefix + leaf + ".scope"
	}
	return podPath + "/" + leaf
}

// KubepodsPath is kubepods' path under c ("kubepods", "kubepods.slice").
func KubepodsPath(c Config) (string, error) {
	n, err := newNames(c)
	if err != nil {
		return "", err
	}
	return n.path(n.kubepods()), nil
}

// PodPath is the path of a pod's cgroup under c.
func PodPath(c Config, q pod.QOSClass, uid string) (string, error) {
	n, err := newNames(c)
	if err != nil {
		return "", err
	}
	return n.path(n.pod(q, uid)), nil
}
