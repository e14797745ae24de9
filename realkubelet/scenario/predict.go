package scenario

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/sim"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// SimPredicts is the differential's ID: nodeproof's node simulation,
// played the same steps, predicts what the real node shows.
const SimPredicts = "RK-SIM-PREDICTS"

// The milli-CPU and bytes of a container's cpu and memory, by QoS class
// (the quantities of pods.go).
const (
	containerMilliCPU = 50
	halfMilliCPU      = 25
	halfMemoryBytes   = 8 << 20
)

// CorePod is the pod the simulation takes for s: the same names,
// containers, requests and limits, priority, and a static pod's config
// source, its UID its name.
func (s PodSpec) CorePod() pod.Pod {
	p := pod.Pod{UID: s.Name, Name: s.Name, Namespace: "default",
		Annotations: map[string]string{pod.ConfigSourceAnnotation: "file"},
		Containers:  []pod.Container{s.coreContainer("main", s.MainDevices)}}
	if s.Init {
		p.InitContainers = append(p.InitContainers, s.coreContainer("init", s.InitDevices))
	}
	if s.Sidecar {
		c := s.coreContainer("sidecar", s.SidecarDevice)
		c.RestartPolicy = pod.RestartAlways
		p.InitContainers = append(p.InitContainers, c)
	}
	if s.Critical {
		priority := criticalPriority
		p.Priority, p.PriorityClassName = &priority, "system-node-critical"
	}
	return p
}

func (s PodSpec) coreContainer(name string, devices int) pod.Container {
	c := pod.Container{Name: name, Requests: pod.ResourceList{}, Limits: pod.ResourceList{}}
	switch s.QOS {
	case corev1.PodQOSGuaranteed:
		c.Requests[pod.CPU], c.Requests[pod.Memory] = containerMilliCPU, containerMemoryBytes
		c.Limits[pod.CPU], c.Limits[pod.Memory] = containerMilliCPU, containerMemoryBytes
	case corev1.PodQOSBurstable:
		c.Requests[pod.CPU], c.Requests[pod.Memory] = halfMilliCPU, halfMemoryBytes
		c.Limits[pod.CPU], c.Limits[pod.Memory] = containerMilliCPU, containerMemoryBytes
	}
	if devices > 0 {
		c.Requests[Resource], c.Limits[Resource] = int64(devices), int64(devices)
	}
	return c
}

// Predictor plays a scenario's steps on nodeproof's scripted simulated node
// beside the real one: the same plugin and devices, the same pods.
type Predictor struct {
	node *sim.Scripted
	// healthy is each device's health as the real plugin reports it, by
	// the real device's ID; simHealthy the simulated plugin's, by the
	// simulated device's; last is the latest prediction.
	healthy, simHealthy map[string]bool
	last                sim.Prediction
}

// NewPredictor starts the simulated node, its plugin registered with
// Devices, all healthy.
func NewPredictor() (*Predictor, error) {
	n, err := sim.NewScripted(sim.ScriptConfig{Resource: Resource, Devices: Devices})
	if err != nil {
		return nil, err
	}
	p := &Predictor{node: n, healthy: map[string]bool{}, simHealthy: map[string]bool{}}
	for _, d := range Devices {
		p.healthy[d], p.simHealthy[d] = true, true
	}
	p.last, err = n.Predict()
	return p, err
}

// Play does step to the simulated node and returns what it then shows;
// before is the real node as it was before the step.
func (p *Predictor) Play(step Step, before *Observation) (sim.Prediction, error) {
	var err error
	switch step.Kind {
	case AddPod:
		err = p.node.AddPod(step.Pod.CorePod())
	case RemovePod:
		err = p.node.RemovePod(step.Pod.Name)
	case KillKubelet:
		err = p.node.RestartKubelet()
	case RestartPlugin:
		err = p.node.RestartPlugin(Resource)
	case FlipHealth:
		d := p.counterpart(step.Device, before)
		p.healthy[step.Device] = !p.healthy[step.Device]
		p.simHealthy[d] = !p.simHealthy[d]
		err = p.node.SetHealth(Resource, d, p.simHealthy[d])
	case CrashContainer:
		err = p.node.CrashContainer(step.Pod.Name, step.Container)
	case FlipLiveness, FlipReadiness:
		// The simulated pods have no probes: how often a failing probe
		// has the kubelet kill a container depends on time the two nodes
		// do not share, so Compare leaves such a pod's restarts out, and
		// a probed pod's readiness, which RK-C-READINESS judges.
	default:
		err = fmt.Errorf("step: unknown kind %q", step.Kind)
	}
	if err != nil {
		return sim.Prediction{}, fmt.Errorf("the simulated node, %s: %w", step, err)
	}
	p.last, err = p.node.Predict()
	return p.last, err
}

// counterpart is the simulated device that plays the real device id: the
// device IDs differ, upstream picking devices from an unordered set, so a
// health flip of id is played on a device in the same place, one the same
// containers hold (none, if none holds id) and as healthy as id, the first
// by ID; if none is in that place, the first as healthy.
func (p *Predictor) counterpart(id string, before *Observation) string {
	names := map[string]string{} // the real pods' UIDs to their names
	for name, pod := range before.Pods {
		names[string(pod.UID)] = name
	}
	place := holders(before.Checkpoint, func(uid string) string { return names[uid] })[id]
	simPlace := holders(p.last.Checkpoint, func(uid string) string {
		if _, listed := p.last.Pods[uid]; listed {
			return uid
		}
		return ""
	})
	fallback := ""
	for _, d := range Devices {
		if p.simHealthy[d] != p.healthy[id] {
			continue
		}
		if simPlace[d] == place {
			return d
		}
		if fallback == "" {
			fallback = d
		}
	}
	return fallback
}

// holders says, for each device an entry holds, which containers of listed
// pods hold it ("pod/container", sorted, joined by spaces); name maps an
// entry's pod UID to its pod's name, "" for a pod not listed.
func holders(entries []checkpoint.PodDevicesEntry, name func(uid string) string) map[string]string {
	keys := map[string][]string{}
	for _, e := range entries {
		n := name(e.PodUID)
		if n == "" {
			continue
		}
		for _, id := range flatten(e.DeviceIDs) {
			keys[id] = append(keys[id], n+"/"+e.ContainerName)
		}
	}
	out := map[string]string{}
	for id, k := range keys {
		slices.Sort(k)
		out[id] = strings.Join(k, " ")
	}
	return out
}

// Divergence is one thing the simulation predicted otherwise than the real
// node showed after a step.
type Divergence struct {
	// Pods are the pods it concerns, none for the node's allocatable.
	Pods []string
	// What is compared: outcome, qos, cgroup, restarts, held, sharing,
	// allocatable.
	What      string
	Sim, Node string
	// Limit is the known limit of the harness that explains it ("" for a
	// fidelity bug).
	Limit string
}

// class is the known limit that explains d, or FidelityBug.
func (d Divergence) class() string {
	if d.Limit == "" {
		return FidelityBug
	}
	return d.Limit
}

func (d Divergence) String() string {
	subject := "node"
	if len(d.Pods) > 0 {
		subject = strings.Join(d.Pods, ", ")
	}
	return fmt.Sprintf("%s %s: the simulation predicts %s, the node shows %s (%s)", subject, d.What, d.Sim, d.Node, d.class())
}

// The known limits of the differential: races of the real kubelet that the
// simulation, which runs one event at a time in a fixed order, does not
// model.
const (
	// LimitD1 is D1, the late disconnect of a crashed plugin's stream.
	LimitD1 = "D1"
	// LimitReadmission is the race of a restarted kubelet's admitting
	// its pods again against the plugin's registering again: SIM-F2's
	// window, and a refused pod's second chance.
	LimitReadmission = "readmission-race"
	// LimitRefusedPodKill is S1 of docs/deviations.md, a limit of
	// the simulation's timing, seen on the node: the kubelet kills a pod
	// it refused while its containers ran at the next housekeeping, with
	// at least 2 s of grace, and counts it active until then, its devices
	// held and written to the checkpoint; the simulation stops it at once.
	LimitRefusedPodKill = "S1: a refused pod's kill takes time"
)

// Diverged is the comparison's verdict: every divergence of one step,
// classified.
type Diverged []Divergence

func (d Diverged) Error() string {
	lines := make([]string, len(d))
	for i, x := range d {
		lines[i] = x.String()
	}
	return strings.Join(lines, "\n")
}

// Predicts is the differential's check: after every step the scripted
// simulation was played too, its prediction agrees with the observation
// on each pod's outcome (running, or refused and the reason's class), a
// running pod's QoS class, pod cgroup limits, restarts (of a pod without
// a liveness probe: the simulated pods have none) and readiness (of a pod
// without a readiness probe), the number of
// devices each container PodResources List shows holds, the sharing
// structure of the checkpoint's entries (how many devices each pair of
// containers hold in common; the IDs differ, upstream picking devices from
// an unordered set) and the node's allocatable device count. It does not
// apply to a step after which the two nodes had parted (State.Predicted
// nil).
var Predicts = verify.Check[*State]{
	Property: verify.Property{
		ID: SimPredicts, Kind: verify.Fidelity, Subsystem: "sim",
		Statement: "nodeproof's node simulation, played the same steps on a scripted node, predicts what the real kubelet shows after each: each pod admitted or refused and the reason's class, a running pod's QoS class, pod cgroup memory limit and cpu quota and restarts (of a pod without a liveness probe, whose kills depend on time the simulation does not share) and readiness (of a pod without a readiness probe), the number of devices each container holds and which containers hold devices in common, and the allocatable device count.",
		Sources: []cite.Source{
			cite.Code(dmManager, "ManagerImpl.Allocate"),
			cite.Code(dmPodDevices, "podDevices.toCheckpointData"),
			cite.Code(podResourcesAPI, "v1PodResourcesServer.List"),
		},
	},
	Applies: func(s *State) bool { return s.Predicted != nil },
	Holds: func(s *State) error {
		d := Compare(s.Predicted, s.After, s.Specs)
		for i := range d {
			d[i].Limit = limit(s, d[i])
		}
		if len(d) == 0 {
			return nil
		}
		return d
	},
}

// limit names the known limit that explains d after the step of s, by two
// rules. D1: any divergence of a step after which the kubelet holds no
// ListAndWatch stream on the plugin (the kubelet dropped the plugin that
// registered last, which the simulation's plugin restart, one stream
// ending before the next begins, never does). The readmission race: after
// a kill -9, a divergence of pods the restarted kubelet had to allocate
// devices for again (one that ran with an exited init container holding
// devices, SIM-F2's case, or one refused before that asks for devices),
// each of which one side refuses for unhealthy devices and the other runs
// or refuses for want of devices (the simulation always admits them again
// before the plugin registers again; the real kubelet does so in a race
// with the plugin, and after it the devices may or may not suffice).
//
// S1, the refused pod's kill: a divergence of a checkpoint entry, or of two
// entries' devices in common, in which the node keeps more devices than
// the simulation, at a step of a scenario whose kubelet was killed and
// started again at it or before it.
func limit(s *State, d Divergence) string {
	if s.Watching == 0 {
		return LimitD1
	}
	if s.Restarted && checkpointKeepsMore(d) {
		return LimitRefusedPodKill
	}
	if s.Step.Kind != KillKubelet || s.Before == nil || len(d.Pods) == 0 {
		return ""
	}
	for _, name := range d.Pods {
		spec, before, after := s.Specs[name], s.Before.Pods[name], s.After.Pods[name]
		again := (running(before) && spec.InitDevices > 0) || (refused(before) && spec.HoldsDevices())
		predicted := s.Predicted.Pods[name]
		simRefused := predicted.Phase == pod.Failed
		simUnhealthy := simRefused && unhealthyMessage.MatchString(predicted.Message)
		simAfterPlugin := predicted.Phase == pod.Running || simRefused && admissionMessage.MatchString(predicted.Message)
		nodeUnhealthy := refused(after) && unhealthyMessage.MatchString(after.Status.Message)
		nodeAfterPlugin := running(after) || refused(after) && admissionMessage.MatchString(after.Status.Message)
		if !again || !(simUnhealthy && nodeAfterPlugin || nodeUnhealthy && simAfterPlugin) {
			return ""
		}
	}
	return LimitReadmission
}

// checkpointKeepsMore says whether d is a divergence of the checkpoint's
// sharing structure in which the node shows more devices than the
// simulation.
func checkpointKeepsMore(d Divergence) bool {
	entry := strings.HasPrefix(d.What, "devices of ") && strings.HasSuffix(d.What, " in the checkpoint")
	if !entry && !strings.HasPrefix(d.What, "devices in common of ") {
		return false
	}
	simSide, err1 := strconv.Atoi(d.Sim)
	node, err2 := strconv.Atoi(d.Node)
	return err1 == nil && err2 == nil && node > simSide
}

// Compare lists where the prediction and the observation differ, for the
// pods of specs.
func Compare(pred *sim.Prediction, o *Observation, specs map[string]PodSpec) Diverged {
	var out Diverged
	diverge := func(what string, simSide, node any, pods ...string) {
		if fmt.Sprint(simSide) != fmt.Sprint(node) {
			out = append(out, Divergence{Pods: pods, What: what, Sim: fmt.Sprint(simSide), Node: fmt.Sprint(node)})
		}
	}
	for _, name := range sortedKeys(specs) {
		pp, predicted := pred.Pods[name]
		p, listed := o.Pods[name]
		if !predicted || !listed {
			diverge("presence", predicted, listed, name)
			continue
		}
		diverge("outcome", predictedOutcome(pp), observedOutcome(p), name)
		if !running(p) || pp.Phase != pod.Running {
			continue
		}
		diverge("qos", pp.QOS, p.Status.QOSClass, name)
		if specs[name].Liveness == nil {
			diverge("restarts", pp.Restarts, restarts(p), name)
		}
		if specs[name].Readiness == nil {
			// Without probes, a running pod's containers are ready.
			diverge("ready", true, ready(p), name)
		}
		diverge("cgroup", predictedCgroup(pp.Cgroup), observedCgroup(o.Cgroups[name]), name)
		for _, c := range sortedKeys(mergeKeys(pp.Held, o.Held[name])) {
			diverge("held devices of "+c, len(pp.Held[c]), len(o.Held[name][c]), name)
		}
	}
	uids := map[string]string{} // pod UID to manifest name
	for name, p := range o.Pods {
		uids[string(p.UID)] = name
	}
	predicted := sharing(pred.Checkpoint, func(uid string) string { return uid }, specs)
	observed := sharing(o.Checkpoint, func(uid string) string { return uids[uid] }, specs)
	for _, pair := range sortedKeys(mergeKeys(predicted, observed)) {
		a, b, _ := strings.Cut(pair, " ")
		pods := []string{podOf(a)}
		if podOf(b) != podOf(a) {
			pods = append(pods, podOf(b))
		}
		what := "devices in common of " + a + " and " + b
		if a == b {
			what = "devices of " + a + " in the checkpoint"
		}
		diverge(what, predicted[pair], observed[pair], pods...)
	}
	diverge("allocatable", pred.Allocatable, len(o.Allocatable))
	return out
}

func mergeKeys[V any](a, b map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func podOf(key string) string {
	pod, _ := splitKey(key)
	return pod
}

// sharing is the checkpoint's structure, free of device IDs: for each
// container of the pods of specs ("pod/container"), how many devices its
// entry holds (the pair of the container with itself), and for each pair
// of them holding devices in common, how many. name maps an entry's pod
// UID to its manifest name.
func sharing(entries []checkpoint.PodDevicesEntry, name func(uid string) string, specs map[string]PodSpec) map[string]int {
	held := map[string][]string{}
	for _, e := range entries {
		n := name(e.PodUID)
		if _, ours := specs[n]; !ours {
			continue // a pod gone, its entry dropped at the next allocation
		}
		key := n + "/" + e.ContainerName
		held[key] = append(held[key], flatten(e.DeviceIDs)...)
	}
	out := map[string]int{}
	keys := sortedKeys(held)
	for i, a := range keys {
		out[a+" "+a] = len(held[a])
		for _, b := range keys[i+1:] {
			if n := common(held[a], held[b]); n > 0 {
				out[a+" "+b] = n
			}
		}
	}
	return out
}

func common(a, b []string) int {
	n := 0
	for _, id := range a {
		if slices.Contains(b, id) {
			n++
		}
	}
	return n
}

// The outcomes of a pod, compared by class: running (ready), refused for
// want of devices, refused for unhealthy devices, refused otherwise, or
// anything else by its phase.
func observedOutcome(p corev1.Pod) string {
	switch {
	case running(p):
		return "running"
	case refused(p):
		return "refused: " + reasonClass(p.Status.Message)
	}
	return "not running (" + string(p.Status.Phase) + " " + p.Status.Reason + ")"
}

func predictedOutcome(p sim.PodPrediction) string {
	switch {
	case p.Phase == pod.Running:
		return "running"
	case p.Phase == pod.Failed && p.Reason == "UnexpectedAdmissionError":
		return "refused: " + reasonClass(p.Message)
	}
	return "not running (" + string(p.Phase) + " " + p.Reason + ")"
}

func reasonClass(message string) string {
	switch {
	case admissionMessage.MatchString(message):
		return "devices unavailable"
	case unhealthyMessage.MatchString(message):
		return "devices unhealthy"
	}
	return "other: " + message
}

// cgroupV1Unlimited is the least memory.limit_in_bytes cgroup v1 shows for
// no limit: the largest page counter, in bytes (9223372036854771712 on
// 4 KiB pages), or above.
const cgroupV1Unlimited = 1 << 62

// The kubelet's CFS period (cpuCFSQuotaPeriod's default), in microseconds:
// the real node's cpu.cfs_quota_us is per this period.
const cfsPeriodMicros = 100_000

// predictedCgroup and observedCgroup say a pod cgroup's limits the same
// way: "memory <bytes|unlimited>, cpu quota <µs per 100 ms|unlimited>".
func predictedCgroup(cg *sim.PodCgroup) string {
	if cg == nil {
		return "no pod cgroup"
	}
	quota := "unlimited"
	if cg.CPUQuota != sim.Unlimited {
		quota = strconv.FormatInt(cg.CPUQuota*cfsPeriodMicros/cg.CPUPeriod, 10)
	}
	memory := "unlimited"
	if cg.MemoryLimit != sim.Unlimited {
		memory = strconv.FormatInt(cg.MemoryLimit, 10)
	}
	return "memory " + memory + ", cpu quota " + quota
}

func observedCgroup(cg PodCgroup) string {
	if cg.Path == "" {
		return "no pod cgroup"
	}
	if cg.Err != nil {
		return "an unreadable pod cgroup: " + cg.Err.Error()
	}
	memory := cg.MemoryLimit
	if n, err := strconv.ParseInt(cg.MemoryLimit, 10, 64); err == nil && n >= cgroupV1Unlimited {
		memory = "unlimited"
	}
	quota := cg.CPUQuota
	if quota == "-1" {
		quota = "unlimited"
	}
	return "memory " + memory + ", cpu quota " + quota
}
