package devicemanager

import (
	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// The device manager's contract properties: what the Kubernetes
// documentation and the KEPs promise the users of device plugins, stated in
// their terms. They are checked on the same generated cases as the fidelity
// invariants; a breach is reported through Tally.Breach, so that a breach a
// known finding explains (verify/findings_devicemanager.go) is counted
// instead of failing the suite.

// The documentation pages the contract properties quote.
const (
	docDevicePlugins = "concepts/extend-kubernetes/compute-storage-net/device-plugins/"
	docSidecars      = "concepts/workloads/pods/sidecar-containers/"
)

var (
	contractAdvertised = verify.Property{
		ID:        ContractAdvertised,
		Subsystem: "devicemanager",
		Statement: "After a device plugin registers a resource and reports its devices, the node advertises what that " +
			"plugin reported (\"after a device plugin registers hardware-vendor.example/foo with the kubelet " +
			"and reports two healthy devices on a node, the node status is updated to advertise that the node " +
			"has 2 Foo devices installed and available\"): while the registered plugin stays connected, " +
			"allocatable is the number of devices it last reported healthy and capacity the number it last " +
			"reported (\"Once a device is marked as unhealthy, the kubelet will decrease the allocatable count " +
			"... Capacity count for the resource will not change\"). A plugin instance that a newer " +
			"registration of the same resource replaced no longer speaks for it.",
		Sources: []cite.Source{
			cite.KubernetesDoc(docDevicePlugins, "Device Plugins", "Device plugin registration"),
			cite.KubernetesDoc(docDevicePlugins, "Device Plugins", "Device plugin and unhealthy devices"),
			cite.KEPSection(3573, "Device Manager Proposal", "API Specification").Noting(
				"a registration may be refused while the resource name is \"already taken by another active " +
					"device plugin\": one plugin speaks for a resource",
			),
		},
		Kind: verify.Contract,
	}
	contractNotShared = verify.Property{
		ID:        ContractNotShared,
		Subsystem: "devicemanager",
		Statement: "\"Devices cannot be shared between containers\": no device is held by two containers that may run " +
			"at the same time. Of two containers of active pods holding the same device, the earlier must be a " +
			"regular init container of the same pod, which has run to completion before any later container of " +
			"its pod starts; a sidecar (restartable init container) keeps running beside every container after " +
			"it, and app containers run together.",
		Sources: []cite.Source{
			cite.KubernetesDoc(docDevicePlugins, "Device Plugins", "Device plugin registration"),
			cite.KubernetesDoc(docSidecars, "Sidecar Containers", "Sidecar containers and Pod lifecycle"),
			cite.KEPSection(753, "Sidecar Containers", "Resources calculation for scheduling and pod admission"),
		},
		Kind: verify.Contract,
	}
	contractEffective = verify.Property{
		ID:        ContractEffective,
		Subsystem: "devicemanager",
		Statement: "A pod the kubelet admits holds, of every device resource the node advertises, exactly its " +
			"effective request, the number the scheduler placed it by: the larger of the sidecars' and app " +
			"containers' sum and every init container's use (its own request plus the sidecars declared before " +
			"it). So init containers reserve devices only for initialization, and the rest of the node's " +
			"devices stay \"available for other Pods to use\".",
		Sources: []cite.Source{
			cite.KEPSection(753, "Sidecar Containers", "Resources calculation for scheduling and pod admission"),
			cite.KubernetesDoc(docSidecars, "Sidecar Containers", "Resource sharing within containers").Noting(
				"the page's formula leaves out the sidecars declared before a regular init container, which the " +
					"KEP and the scheduler count",
			),
			cite.KubernetesDoc(docDevicePlugins, "Device Plugins", "Device plugin registration").Noting(
				"its example pod: \"If the Node has more than 2 of those devices available, the remainder would " +
					"be available for other Pods to use\"",
			),
		},
		Kind: verify.Contract,
	}
)

var contractAdmits = verify.Property{
	ID:        ContractAdmits,
	Subsystem: "devicemanager",
	Statement: "Once the kubelet has seen all its pod sources, it admits a pod whose effective device requests fit " +
		"in what the node advertises as allocatable less the effective requests of its other running pods, " +
		"the room the scheduler placed it by, unless a device plugin fails the allocation (an Allocate or " +
		"GetPreferredAllocation error, an answer without a container response): allocatable counts \"how " +
		"many devices can be used for scheduling new pods\", and the devices a pod leaves, finished or " +
		"rejected, are \"available for other Pods to use\". Judged while the node advertises what each " +
		"resource's registered plugin reported (DM-C-ADVERTISED).",
	Sources: []cite.Source{
		cite.KubernetesDoc(docDevicePlugins, "Device Plugins", "Device plugin and unhealthy devices"),
		cite.KubernetesDoc(docDevicePlugins, "Device Plugins", "Device plugin registration").Noting(
			"its example pod: \"If the Node has more than 2 of those devices available, the remainder would " +
				"be available for other Pods to use\"",
		),
		cite.KEPSection(3573, "Device Manager Proposal", "End User story").Noting(
			"\"The scheduler filters the nodes which do not match the resource requests\"; \"The pod lands on " +
				"the node and Kubelet decides which device should be assigned to the pod\"",
		),
	},
	Kind: verify.Contract,
}

// fitsNode says whether DM-C-ADMITS judges the admission of p: the kubelet
// has seen its pod sources (or nothing waits for them to be freed), p asks devices only of resources the node
// advertises (and not as DM-F1 distorts it: devices its registered plugin
// did not report), and its effective request of each fits in allocatable
// less the effective requests of the other active pods, as the scheduler
// counts. A pod that
// asks no device (its device limits absent or 0) fits any node.
func (m *machine) fitsNode(p *pod.Pod) bool {
	if !m.ready {
		// Before the kubelet has seen all its pod sources it frees no
		// device (it cannot yet tell a finished pod from one it has not
		// heard of since it restarted): the promise is judged then only
		// when no finished or rejected pod holds any.
		for _, h := range m.core.Holdings() {
			if !m.podActive(h.PodUID) {
				return false
			}
		}
	}
	for _, r := range resources {
		want := effectiveDevices(p, r)
		if want == 0 {
			continue
		}
		v := m.findView(r)
		allocatable, ok := m.admitView.Allocatable[r]
		if v == nil || !ok {
			return false
		}
		connected := v.current != nil && v.current.streaming
		if connected && v.current.reported && allocatable != v.current.healthy {
			// DM-C-ADVERTISED's breach (DM-F1): allocatable is not what
			// the registered plugin reported.
			return false
		}
		if !connected && allocatable > 0 {
			// The registered plugin is gone, yet devices a replaced
			// instance reported since are advertised (DM-F1 again).
			return false
		}
		room := allocatable
		for _, q := range m.pods {
			if q.active && q.p != p {
				room -= effectiveDevices(q.p, r)
			}
		}
		if want > room {
			return false
		}
	}
	return true
}

// checkAdmits is DM-C-ADMITS, after an admission: rejected is the
// admission's error, nil when the pod was admitted. A plugin's failed or
// empty answer may reject any pod, and a bound of nodeproof's own is no
// promise of Kubernetes.
func (m *machine) checkAdmits(p *pod.Pod, fits bool, rejected error) {
	// Here DM-C-ADMITS applies: the pod fits the room the node advertises.
	m.checked(slotCAdmits, fits)
	if !fits || rejected == nil {
		return
	}
	if kind, ok := dm.KindOf(rejected); ok {
		switch kind {
		case dm.KindAllocateFailed, dm.KindNoContainerResponses, dm.KindPreferredAllocationFailed, dm.KindBoundExceeded:
			return
		}
	}
	m.tally.Breach(m.t, ContractAdmits, "%s fits the node's advertised room but was rejected: %v", p.UID, rejected)
}

// checkAdvertised is DM-C-ADVERTISED, after every step, on the capacity the
// checks read: for each resource whose registered plugin (the instance of
// its latest registration) is connected and has reported its devices, the
// node shows what that instance last reported. A missing entry reads as 0.
func (m *machine) checkAdvertised(c dm.Capacity) {
	applied := false
	for _, p := range m.plugins {
		if !p.streaming || !p.reported {
			continue
		}
		if v := m.findView(p.resource); v == nil || v.current != p {
			continue
		}
		// Here DM-C-ADVERTISED applies: a connected registered plugin has
		// said what the node has.
		applied = true
		if c.Allocatable[p.resource] != p.healthy || c.Capacity[p.resource] != p.total {
			m.tally.Breach(m.t, ContractAdvertised, "%s: its registered plugin %s is connected and last reported %d devices, %d healthy, "+
				"but the node advertises capacity %d, allocatable %d", p.resource, p.socket, p.total, p.healthy,
				c.Capacity[p.resource], c.Allocatable[p.resource])
		}
	}
	m.checked(slotCAdvertised, applied)
}

// checkNotShared is DM-C-NOT-SHARED, after every step: the holdings of
// active pods' containers, compared pairwise by resource. A pod the kubelet
// rejected or that terminated runs nothing, so its records (kept until the
// next garbage collection) do not count.
func (m *machine) checkNotShared(holdings []dm.Holding) {
	applied := false
	for i, a := range holdings {
		if !m.podActive(a.PodUID) {
			continue
		}
		for _, b := range holdings[i+1:] {
			if a.Resource != b.Resource || !m.podActive(b.PodUID) {
				continue
			}
			// Here DM-C-NOT-SHARED applies: two running pods' containers
			// hold devices of one resource.
			applied = true
			id, shared := firstShared(a.DeviceIDs, b.DeviceIDs)
			if shared && mayRunTogether(m.place(a.PodUID, a.Container), m.place(b.PodUID, b.Container)) {
				m.tally.Breach(m.t, ContractNotShared, "device %s of %s is held by %s/%s and %s/%s, which may run at the same time",
					id, a.Resource, a.PodUID, a.Container, b.PodUID, b.Container)
			}
		}
	}
	m.checked(slotCNotShared, applied)
}

// mayRunTogether says whether two containers may be running at once: any
// two of different pods (a pod's init containers run again whenever its
// sandbox is recreated), and two of one pod unless the earlier is a regular
// init container, which completes before the next container starts.
func mayRunTogether(a, b containerPlace) bool {
	if a.pod != b.pod {
		return true
	}
	if a.order > b.order {
		a, b = b, a
	}
	return a.order == b.order || !a.regularInit
}

// podActive says whether the pod with uid is one of the machine's active
// pods (admitted and not terminated).
func (m *machine) podActive(uid string) bool {
	for _, p := range m.pods {
		if p.p.UID == uid {
			return p.active
		}
	}
	return false
}

// admittedEffective is what DM-C-EFFECTIVE holds an admitted pod to: its
// effective request of each resource it asks devices of that the node
// advertised (had an allocatable for) as the pod arrived. A resource the
// node does not advertise at all is the admission's business (it drops such
// requests), not the device manager's.
func admittedEffective(p *pod.Pod, advertised map[string]int64) map[string]int64 {
	var out map[string]int64
	for _, r := range resources {
		want := effectiveDevices(p, r)
		if _, ok := advertised[r]; !ok || want == 0 {
			continue
		}
		if out == nil {
			out = make(map[string]int64, len(resources))
		}
		out[r] = want
	}
	return out
}

// checkEffective is DM-C-EFFECTIVE, after every step: every active pod
// holds, across its containers, its effective request of each resource
// admittedEffective recorded, from its admission until it ends (a kubelet
// restart included).
func (m *machine) checkEffective(holdings []dm.Holding) {
	applied := false
	for _, entry := range m.pods {
		if !entry.active || entry.effective == nil {
			continue
		}
		// Here DM-C-EFFECTIVE applies: a running pod asked for devices of
		// an advertised resource.
		applied = true
		for _, r := range resources {
			want, ok := entry.effective[r]
			if !ok {
				continue
			}
			ids := m.idScratch[:0]
			for _, h := range holdings {
				if h.PodUID == entry.p.UID && h.Resource == r {
					ids = append(ids, h.DeviceIDs...)
				}
			}
			ids = dedupSorted(ids)
			m.idScratch = ids
			if int64(len(ids)) != want {
				m.tally.Breach(m.t, ContractEffective, "%s holds %d devices of %s %v, its effective request is %d",
					entry.p.UID, len(ids), r, ids, want)
			}
		}
	}
	m.checked(slotCEffective, applied)
}

// effectiveDevices is KEP-753's effective request of resource r, read from
// the limits (an extended resource's request equals its limit):
// max(max over init containers i of (sidecars before i) + request(i),
// sidecars + app containers).
func effectiveDevices(p *pod.Pod, r string) int64 {
	name := pod.ResourceName(r)
	var sidecars, initMax, apps int64
	for _, c := range p.InitContainers {
		use := sidecars + c.Limits[name]
		initMax = max(initMax, use)
		if c.IsSidecar() {
			sidecars += c.Limits[name]
		}
	}
	for _, c := range p.Containers {
		apps += c.Limits[name]
	}
	return max(initMax, sidecars+apps)
}
