package plugincheck

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/nodeproof/nodeproof/phrase"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// maxDeviceID is the longest device ID api.proto allows.
const maxDeviceID = 63

// snapshotIDsProblem says what is wrong with a list's IDs, or "".
func snapshotIDsProblem(devs []*v1beta1.Device) string {
	seen := map[string]bool{}
	for i, d := range devs {
		switch id := d.GetID(); {
		case id == "":
			return fmt.Sprintf("device %d of %d has an empty ID", i, len(devs))
		case len(id) > maxDeviceID:
			return fmt.Sprintf("device ID %q is %d characters, over %d", id, len(id), maxDeviceID)
		case seen[id]:
			return fmt.Sprintf("device ID %q is listed twice", id)
		default:
			seen[id] = true
		}
	}
	return ""
}

// healthProblem says which device has a health the kubelet does not know.
func healthProblem(devs []*v1beta1.Device) string {
	for _, d := range devs {
		if h := d.GetHealth(); h != v1beta1.Healthy && h != v1beta1.Unhealthy {
			return fmt.Sprintf("device %q has health %q; the kubelet knows %q and %q only", d.GetID(), h, v1beta1.Healthy, v1beta1.Unhealthy)
		}
	}
	return ""
}

// topologyProblem says which device has a malformed topology.
func topologyProblem(devs []*v1beta1.Device) string {
	for _, d := range devs {
		seen := map[int64]bool{}
		for _, n := range d.GetTopology().GetNodes() {
			switch {
			case n.GetID() < 0:
				return fmt.Sprintf("device %q lists NUMA node %d", d.GetID(), n.GetID())
			case seen[n.GetID()]:
				return fmt.Sprintf("device %q lists NUMA node %d twice", d.GetID(), n.GetID())
			}
			seen[n.GetID()] = true
		}
	}
	return ""
}

// hasTopology reports whether any device lists a NUMA node.
func hasTopology(devs []*v1beta1.Device) bool {
	return slices.ContainsFunc(devs, func(d *v1beta1.Device) bool { return len(d.GetTopology().GetNodes()) > 0 })
}

// preferredProblems checks one container's preferred allocation against its
// request and returns the failed check with its reason, or "" and "".
func preferredProblem(req *v1beta1.ContainerPreferredAllocationRequest, ids []string) (string, string) {
	available := req.GetAvailableDeviceIDs()
	seen := map[string]bool{}
	for _, id := range ids {
		if !slices.Contains(available, id) {
			return PrefAvailable, fmt.Sprintf("preferred %q, which is not among the available %v", id, available)
		}
		if seen[id] {
			return PrefAvailable, fmt.Sprintf("preferred %q twice: %v", id, ids)
		}
		seen[id] = true
	}
	for _, id := range req.GetMustIncludeDeviceIDs() {
		if !seen[id] {
			return PrefMustInclude, fmt.Sprintf("preferred %v without %q, which must be included (must include %v)", ids, id, req.GetMustIncludeDeviceIDs())
		}
	}
	if len(ids) != int(req.GetAllocationSize()) {
		return PrefSize, fmt.Sprintf("preferred %d devices %v for an allocation size of %d", len(ids), ids, req.GetAllocationSize())
	}
	return "", ""
}

// allocateProblem checks an Allocate answer against its request and
// returns the failed check with its reason, or "" and "".
func allocateProblem(req *v1beta1.AllocateRequest, resp *v1beta1.AllocateResponse) (string, string) {
	if got, want := len(resp.GetContainerResponses()), len(req.GetContainerRequests()); got != want {
		return AllocAnswer, fmt.Sprintf("%s answered %s to %s", describeAllocate(req), phrase.Count(got, "container response"), phrase.Count(want, "container request"))
	}
	for i, r := range resp.GetContainerResponses() {
		if p := allocateSpecsProblem(r); p != "" {
			return AllocSpecs, fmt.Sprintf("%s, container %d: %s", describeAllocate(req), i, p)
		}
	}
	return "", ""
}

// orderProblem says which container response of an Allocate answer names
// devices of another container request and none of its own, or "".
// applied says some response named a device asked for by one container
// request alone, so that the order could be told. A response names a device
// when its ID stands, delimited, in an environment value or in a device
// spec's or a mount's path, as plugins tell a container its devices
// (NVIDIA_VISIBLE_DEVICES=GPU-...,GPU-...).
func orderProblem(req *v1beta1.AllocateRequest, resp *v1beta1.AllocateResponse) (problem string, applied bool) {
	if len(req.GetContainerRequests()) < 2 {
		return "", false
	}
	const shared = -1
	owner := map[string]int{}
	for i, c := range req.GetContainerRequests() {
		for _, id := range c.GetDevicesIds() {
			if j, ok := owner[id]; ok && j != i {
				owner[id] = shared
			} else {
				owner[id] = i
			}
		}
	}
	for i, r := range resp.GetContainerResponses() {
		texts := slices.Collect(maps.Values(r.GetEnvs()))
		for _, d := range r.GetDevices() {
			texts = append(texts, d.GetContainerPath(), d.GetHostPath())
		}
		for _, m := range r.GetMounts() {
			texts = append(texts, m.GetContainerPath(), m.GetHostPath())
		}
		var own bool
		var others []string
		for id, j := range owner {
			if j == shared || !slices.ContainsFunc(texts, func(text string) bool { return namesID(text, id) }) {
				continue
			}
			if j == i {
				own = true
			} else {
				others = append(others, id)
			}
		}
		applied = applied || own || len(others) > 0
		if !own && len(others) > 0 {
			slices.Sort(others)
			return fmt.Sprintf("container response %d names %v, devices of another container request, and none of its own %v",
				i, others, req.GetContainerRequests()[i].GetDevicesIds()), true
		}
	}
	return "", applied
}

// namesID reports whether id stands in text delimited: at its ends or
// between characters that cannot continue it (not a letter, digit, '-',
// '_' or '.'), so that "d1" is not found in "d10".
func namesID(text, id string) bool {
	for from := 0; ; {
		at := strings.Index(text[from:], id)
		if at < 0 {
			return false
		}
		at += from
		end := at + len(id)
		if (at == 0 || !continuesID(text[at-1])) && (end == len(text) || !continuesID(text[end])) {
			return true
		}
		from = at + 1
	}
}

func continuesID(b byte) bool {
	return b == '-' || b == '_' || b == '.' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// describeAllocate writes an Allocate request as a step of a case.
func describeAllocate(req *v1beta1.AllocateRequest) string {
	var parts []string
	for _, c := range req.GetContainerRequests() {
		parts = append(parts, fmt.Sprint(c.GetDevicesIds()))
	}
	return "Allocate(" + strings.Join(parts, ", ") + ")"
}

// allocateSpecsProblem says what is malformed in one container's Allocate
// answer, or "".
func allocateSpecsProblem(r *v1beta1.ContainerAllocateResponse) string {
	for name, value := range r.GetEnvs() {
		switch {
		case name == "":
			return "an environment variable has an empty name"
		case strings.ContainsAny(name, "=\x00"):
			return fmt.Sprintf("environment variable name %q contains '=' or NUL", name)
		case strings.ContainsRune(value, 0):
			return fmt.Sprintf("environment variable %s's value contains NUL", name)
		}
	}
	mounts := map[string]string{}
	for _, m := range r.GetMounts() {
		if p := pathProblem("mount", m.GetContainerPath(), m.GetHostPath()); p != "" {
			return p
		}
		if p := repeatConflict("mounts", mounts, m.GetContainerPath(), m.GetHostPath()); p != "" {
			return p
		}
	}
	devices := map[string]string{}
	for _, d := range r.GetDevices() {
		if p := pathProblem("device", d.GetContainerPath(), d.GetHostPath()); p != "" {
			return p
		}
		if p := repeatConflict("devices", devices, d.GetContainerPath(), d.GetHostPath()); p != "" {
			return p
		}
		if p := d.GetPermissions(); p == "" || strings.Trim(p, "rwm") != "" || hasRepeat(p) {
			return fmt.Sprintf("device %q has permissions %q; want one or more of r, w and m, each once", d.GetContainerPath(), p)
		}
	}
	for name := range r.GetAnnotations() {
		if name == "" {
			return "an annotation has an empty name"
		}
	}
	for _, c := range r.GetCdiDevices() {
		if kind, name, ok := strings.Cut(c.GetName(), "="); !ok || kind == "" || name == "" {
			return fmt.Sprintf("CDI device name %q is not fully qualified (vendor.com/class=name)", c.GetName())
		}
	}
	return ""
}

// repeatConflict notes that hostPath is at containerPath in seen and says
// what is wrong when seen had another host path there, or "". The kubelet
// merges a container's answers the same way (upstream
// podDevices.deviceRunContainerOptions): devices and mounts keyed by
// container path, environment variables and annotations by name; a repeat
// with the same host path (or value) is skipped, one with another is a
// conflict, of which the first wins. A repeat is what a plugin listing one
// host device under several IDs answers for them. Environment variables
// and annotations are map keys in an answer, so they cannot repeat in one.
func repeatConflict(what string, seen map[string]string, containerPath, hostPath string) string {
	was, ok := seen[containerPath]
	switch {
	case !ok:
		seen[containerPath] = hostPath
	case was != hostPath:
		return fmt.Sprintf("two %s at container path %q with different host paths %q and %q", what, containerPath, was, hostPath)
	}
	return ""
}

func pathProblem(what, containerPath, hostPath string) string {
	for _, p := range []struct{ side, path string }{{"container", containerPath}, {"host", hostPath}} {
		if !path.IsAbs(p.path) {
			return fmt.Sprintf("%s %s path %q is not absolute", what, p.side, p.path)
		}
	}
	return ""
}

func hasRepeat(s string) bool {
	for i := range len(s) {
		if strings.IndexByte(s[i+1:], s[i]) >= 0 {
			return true
		}
	}
	return false
}
