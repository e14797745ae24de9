package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/devicemanager"
)

// Registration over real sockets: a generated scenario (plugins register,
// send new device lists, stop and come back; pods are admitted, started and
// removed) runs four times, each pairing of a kubelet side with a plugin
// side over real Unix sockets and the real v1beta1 gRPC API:
//
//   - nodeproof's agent with upstream's exported device plugin stub
//     (pkg/kubelet/cm/devicemanager/plugin/v1beta1) and with nodeproof's
//     test plugin;
//   - upstream's device manager (ManagerImpl, started on a socket in a
//     temporary directory) with the same two plugins.
//
// Both plugins answer with the same policy, so every pairing must observe
// the same: capacity and allocatable after each step, each admission's
// outcome, each container's runtime options, and the final checkpoint read
// with upstream's reader. The plugin kind must not matter to a kubelet, and
// each plugin must be asked the same by both kubelets in each step. Where
// upstream decides in Go map order the runs may differ only as deviations
// D2 and D3 allow (registration_deviations_test.go); a quarter of the
// scenarios are drawn so that map order decides nothing, and are compared
// in full.

// kubeletSocket is the name of the kubelet's registration socket in its
// device plugin directory.
const kubeletSocket = "kubelet.sock"

// The two resources a scenario's plugins register, and the keys their
// Allocate answers use (one each, so that a container holding both shows
// both answers whatever order a kubelet merges them in).
var (
	regResources = []string{"example.com/dev-a", "example.com/dev-b"}
	answerKeys   = []string{"DEV_A", "DEV_B"}
)

type regDevice struct {
	ID      string
	Healthy bool
}

type regContainer struct {
	Name string
	// Sidecar makes an init container restartable (restartPolicy Always).
	Sidecar bool `json:",omitempty"`
	// Devices is the container's limit of each resource.
	Devices [2]int64
}

type regPod struct {
	UID  string
	Init []regContainer `json:",omitempty"`
	Apps []regContainer
}

type regStepKind string

const (
	stepUpdate  regStepKind = "update"  // the plugin sends a new device list
	stepStop    regStepKind = "stop"    // the plugin stops
	stepRestart regStepKind = "restart" // a new instance registers again
	stepAdmit   regStepKind = "admit"
	stepRemove  regStepKind = "remove" // the pod stops being active
)

type regStep struct {
	Kind     regStepKind
	Resource int // update, stop, restart: an index into regResources
	Devices  []regDevice
	Pod      *regPod
	UID      string // remove
}

// MarshalJSON shows a step with the fields its kind uses and the resource
// by name, so a shrunk scenario reads unambiguously.
func (st regStep) MarshalJSON() ([]byte, error) {
	out := map[string]any{"Kind": st.Kind}
	switch st.Kind {
	case stepUpdate:
		out["Resource"], out["Devices"] = regResources[st.Resource], st.Devices
	case stepStop, stepRestart:
		out["Resource"] = regResources[st.Resource]
	case stepAdmit:
		out["Pod"] = st.Pod
	case stepRemove:
		out["UID"] = st.UID
	}
	return json.Marshal(out)
}

type regScenario struct {
	// MapOrderFree marks a scenario drawn so that Go map order decides
	// nothing upstream does (see drawScenario): it is compared in full.
	MapOrderFree bool `json:",omitempty"`
	// Devices are what each resource's plugin registers with.
	Devices  [2][]regDevice
	PreStart [2]bool
	Steps    []regStep
}

// regRun is what one pairing observed.
type regRun struct {
	Pairing string   // shown in a mismatch; not compared
	Steps   []string // one line per step (registration first)
	// Calls holds, for each step, what the plugins were asked during it:
	// "<resource> <call>", each plugin's calls of one kind in the order
	// asked, GetPreferredAllocation, then Allocate, then PreStartContainer.
	Calls      [][]string
	Checkpoint []string // the final checkpoint
}

func drawDevices(t *rapid.T, label string) []regDevice {
	ids := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"d0", "d1", "d2", "d3", "d4", "d5"}), 0, 5, rapid.ID[string]).Draw(t, label+".ids")
	out := make([]regDevice, len(ids))
	for i, id := range ids {
		out[i] = regDevice{ID: id, Healthy: rapid.Float64Range(0, 1).Draw(t, fmt.Sprintf("%s.healthy%d", label, i)) < 0.8}
	}
	return out
}

// view is what a kubelet shows of a device list: capacity, allocatable and
// the healthy IDs (through the checkpoint).
func view(devices []regDevice) string {
	var healthy []string
	for _, d := range devices {
		if d.Healthy {
			healthy = append(healthy, d.ID)
		}
	}
	return fmt.Sprintf("%d %v", len(devices), sorted(healthy))
}

func healthyCount(devices []regDevice) int {
	n := 0
	for _, d := range devices {
		if d.Healthy {
			n++
		}
	}
	return n
}

func drawContainer(t *rapid.T, name string, init bool) regContainer {
	c := regContainer{Name: name}
	if init {
		c.Sidecar = rapid.Bool().Draw(t, name+".sidecar")
	}
	for r := range c.Devices {
		c.Devices[r] = rapid.OneOf(rapid.Just[int64](0), rapid.Int64Range(0, 3)).Draw(t, fmt.Sprintf("%s.%s", name, answerKeys[r]))
	}
	return c
}

// mapOrderFreeShare is the share of scenarios drawn map-order free: one in
// mapOrderFreeShare.
const mapOrderFreeShare = 4

// mapOrderFreePart names the map-order free scenarios' part of the
// comparison's result.
const mapOrderFreePart = "map order decides nothing"

// genScenario draws a scenario, one in mapOrderFreeShare map-order free.
func genScenario() *rapid.Generator[regScenario] {
	return rapid.Custom(func(t *rapid.T) regScenario {
		return drawScenario(t, rapid.IntRange(0, mapOrderFreeShare-1).Draw(t, "mode") == 0)
	})
}

// drawScenario draws a scenario whose every plugin-side step changes what a
// kubelet shows (capacity, allocatable or the healthy IDs), so the driver
// can wait until each kubelet has taken it in before the next step: the
// kubelet takes a ListAndWatch snapshot asynchronously.
//
// A map-order free scenario gives no container devices of both resources
// (so upstream's map order over a container's resources, D3, decides
// nothing) and no container fewer devices than its pod's reuse pool holds
// (so upstream never picks among reusable devices in map order, D2): a
// container that would take fewer takes between the pool's size and 3.
// Both plugins offer preferred allocations, so every other choice is the
// plugin's.
func drawScenario(t *rapid.T, mapOrderFree bool) regScenario {
	sc := regScenario{MapOrderFree: mapOrderFree}
	for r := range sc.Devices {
		sc.Devices[r] = drawDevices(t, answerKeys[r])
		sc.PreStart[r] = rapid.Bool().Draw(t, answerKeys[r]+".preStart")
	}
	current := sc.Devices
	running := [2]bool{true, true}
	var uids []string
	n := rapid.IntRange(1, 8).Draw(t, "steps")
	for i := range n {
		label := fmt.Sprintf("step%d", i)
		kind := rapid.SampledFrom([]regStepKind{stepUpdate, stepStop, stepRestart, stepAdmit, stepAdmit, stepAdmit, stepRemove}).Draw(t, label)
		r := rapid.IntRange(0, 1).Draw(t, label+".resource")
		switch {
		case kind == stepUpdate && running[r]:
			devices := drawDevices(t, label)
			if view(devices) == view(current[r]) {
				continue
			}
			current[r] = devices
			sc.Steps = append(sc.Steps, regStep{Kind: kind, Resource: r, Devices: devices})
		case kind == stepStop && running[r] && healthyCount(current[r]) > 0:
			running[r] = false
			sc.Steps = append(sc.Steps, regStep{Kind: kind, Resource: r})
		case kind == stepRestart && !running[r]:
			running[r] = true
			sc.Steps = append(sc.Steps, regStep{Kind: kind, Resource: r})
		case kind == stepAdmit:
			p := &regPod{UID: fmt.Sprintf("pod%d", len(uids))}
			for j := range rapid.IntRange(0, 2).Draw(t, label+".init") {
				p.Init = append(p.Init, drawContainer(t, fmt.Sprintf("init%d", j), true))
			}
			for j := range rapid.IntRange(1, 2).Draw(t, label+".apps") {
				p.Apps = append(p.Apps, drawContainer(t, fmt.Sprintf("app%d", j), false))
			}
			if mapOrderFree {
				freeOfMapOrder(t, p)
			}
			uids = append(uids, p.UID)
			sc.Steps = append(sc.Steps, regStep{Kind: kind, Pod: p})
		case kind == stepRemove && len(uids) > 0:
			sc.Steps = append(sc.Steps, regStep{Kind: kind, UID: rapid.SampledFrom(uids).Draw(t, label+".uid")})
		}
	}
	return sc
}

// freeOfMapOrder changes a pod's requests so that map order decides
// nothing: a container that asks for both resources keeps one (drawn), and
// one that asks for fewer devices than its reuse pool holds asks for
// between the pool's size and 3 (init containers' needs are at most 3, so
// the pool is too).
func freeOfMapOrder(t *rapid.T, p *regPod) {
	for _, c := range slices.Concat(ptrs(p.Init), ptrs(p.Apps)) {
		if c.Devices[0] > 0 && c.Devices[1] > 0 {
			c.Devices[rapid.IntRange(0, 1).Draw(t, c.Name+".keeps")] = 0
		}
	}
	walkReuse(p, func(c *regContainer, r int, pool int64) {
		if n := c.Devices[r]; n > 0 && n < pool {
			c.Devices[r] = rapid.Int64Range(pool, 3).Draw(t, fmt.Sprintf("%s.%s.fromPool", c.Name, answerKeys[r]))
		}
	})
}

func ptrs[T any](s []T) []*T {
	out := make([]*T, len(s))
	for i := range s {
		out[i] = &s[i]
	}
	return out
}

func (p *regPod) manifest() *corev1.Pod {
	containers := func(cs []regContainer) []corev1.Container {
		var out []corev1.Container
		for _, c := range cs {
			limits := corev1.ResourceList{}
			for r, n := range c.Devices {
				if n > 0 {
					limits[corev1.ResourceName(regResources[r])] = *resource.NewQuantity(n, resource.DecimalSI)
				}
			}
			k := corev1.Container{Name: c.Name, Image: "registry.example/app", Resources: corev1.ResourceRequirements{Limits: limits}}
			if c.Sidecar {
				always := corev1.ContainerRestartPolicyAlways
				k.RestartPolicy = &always
			}
			out = append(out, k)
		}
		return out
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.UID, Namespace: "default", UID: types.UID(p.UID)},
		Spec:       corev1.PodSpec{InitContainers: containers(p.Init), Containers: containers(p.Apps)},
	}
}

// waitLimit bounds how long a step waits for a kubelet to show a plugin's
// change. A kubelet that never shows it has a different rule; the step then
// records what it showed last, and the pairings differ.
const waitLimit = 2 * time.Second

// scratchDir is where the scenarios' directories go: a short path (a Unix
// socket's fits in 107 bytes, so not t.TempDir), in memory where the
// machine has /dev/shm, because both kubelets fsync every checkpoint they
// write and thousands of scenarios would wait on the disk.
func scratchDir() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		return "/dev/shm"
	}
	return os.TempDir()
}

// runScenario plays sc on a fresh kubelet side with plugins of one kind.
func runScenario(sc regScenario, pairing string, startKubelet func(dir string) (kubeletSide, error), start startPlugin) (run regRun) {
	run.Pairing = pairing
	dir, err := os.MkdirTemp(scratchDir(), "np-reg-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	k, err := startKubelet(dir)
	if err != nil {
		panic(fmt.Sprintf("%s: starting the kubelet side: %v", pairing, err))
	}

	var plugins [2]pluginSide
	instances := [2]int{}
	current := sc.Devices
	running := [2]bool{}
	// seen is what each resource's current plugin instance had been asked
	// when the last step ended.
	var seen [2][]string
	// Stopping a gRPC server takes milliseconds; the kubelet and the
	// plugins still running stop side by side.
	defer func() {
		var wg sync.WaitGroup
		for r, p := range plugins {
			if running[r] {
				wg.Go(p.stop)
			}
		}
		wg.Go(k.close)
		wg.Wait()
	}()
	register := func(r int) string {
		instances[r]++
		p, err := start(dir, fmt.Sprintf("%s-%d.sock", strings.ToLower(answerKeys[r]), instances[r]), r, current[r], sc.PreStart[r])
		if err != nil {
			return fmt.Sprintf("register %s: %v", regResources[r], err)
		}
		plugins[r] = p
		running[r] = true
		seen[r] = nil
		return ""
	}
	// stepCalls returns what the plugins were asked since the last step
	// ended. Every RPC a step causes has returned when the step ends.
	stepCalls := func() []string {
		var out []string
		for r, p := range plugins {
			if p == nil {
				continue
			}
			now := p.calls()
			for _, c := range callsSince(seen[r], now) {
				out = append(out, regResources[r]+" "+c)
			}
			seen[r] = now
		}
		return out
	}
	// settle waits until the kubelet shows every resource as the plugins
	// left it and returns what it shows. After a ListAndWatch snapshot
	// (written non-nil: the checkpoint file as it was before) it also waits
	// for the checkpoint write the snapshot causes: upstream writes it
	// outside its lock, so a write still in flight could land after the
	// next step's (deviation D15).
	settle := func(written *os.FileInfo) string {
		deadline := time.Now().Add(waitLimit)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			shown, ok := observe(k, current, running, instances, written != nil)
			if ok && written != nil {
				ok = rewritten(*written, checkpointFile(dir))
			}
			if ok || time.Now().After(deadline) {
				return shown
			}
			<-tick.C
		}
	}
	snapshot := func(act func() string) string {
		before := checkpointFile(dir)
		msg := act()
		return strings.TrimPrefix(msg+"; "+settle(&before), "; ")
	}

	// The plugins register one after the other: two snapshots taken at
	// once make upstream write two checkpoints at once, and the older one
	// may land last (D15).
	for r := range plugins {
		run.Steps = append(run.Steps, fmt.Sprintf("register %s: %s", regResources[r], snapshot(func() string { return register(r) })))
		run.Calls = append(run.Calls, stepCalls())
	}
	for _, st := range sc.Steps {
		var out string
		switch st.Kind {
		case stepUpdate:
			current[st.Resource] = st.Devices
			out = snapshot(func() string {
				plugins[st.Resource].update(st.Devices)
				return ""
			})
		case stepStop:
			plugins[st.Resource].stop()
			running[st.Resource] = false
			out = settle(nil)
		case stepRestart:
			out = snapshot(func() string { return register(st.Resource) })
		case stepAdmit:
			m := st.Pod.manifest()
			if msg := k.admit(m); msg != "" {
				out = "rejected: " + msg
				break
			}
			var starts []string
			for _, c := range slices.Concat(st.Pod.Init, st.Pod.Apps) {
				starts = append(starts, c.Name+": "+k.startContainer(m, c.Name))
			}
			out = "admitted; " + strings.Join(starts, "; ")
		case stepRemove:
			k.remove(st.UID)
		}
		run.Steps = append(run.Steps, fmt.Sprintf("%s: %s", st.describe(), out))
		run.Calls = append(run.Calls, stepCalls())
	}
	healthy, entries, err := readCheckpoint(k.dir())
	if err != nil {
		run.Checkpoint = []string{"error: " + err.Error()}
	} else {
		for _, r := range regResources {
			if ids, ok := healthy[r]; ok {
				run.Checkpoint = append(run.Checkpoint, fmt.Sprintf("registered %s %v", r, ids))
			}
		}
		run.Checkpoint = append(run.Checkpoint, entries...)
	}
	return run
}

// callsSince returns the calls in now that were not in before: both list a
// plugin's calls kind by kind (the first word), each kind in the order
// asked, and a later list only adds calls.
func callsSince(before, now []string) []string {
	had := map[string]int{}
	for _, c := range before {
		had[callKind(c)]++
	}
	var out []string
	for _, c := range now {
		if k := callKind(c); had[k] > 0 {
			had[k]--
			continue
		}
		out = append(out, c)
	}
	return out
}

func callKind(call string) string {
	kind, _, _ := strings.Cut(call, " ")
	return kind
}

func (st regStep) describe() string {
	switch st.Kind {
	case stepUpdate:
		return fmt.Sprintf("update %s %v", regResources[st.Resource], st.Devices)
	case stepStop, stepRestart:
		return fmt.Sprintf("%s %s", st.Kind, regResources[st.Resource])
	case stepAdmit:
		return "admit " + st.Pod.UID
	}
	return "remove " + st.UID
}

// checkpointFile describes the kubelet's checkpoint file; nil if there is
// none yet.
func checkpointFile(dir string) os.FileInfo {
	fi, err := os.Stat(filepath.Join(dir, devicemanager.CheckpointName))
	if err != nil {
		return nil
	}
	return fi
}

// rewritten reports whether the checkpoint was written since before: both
// kubelets write a new file and rename it over the old one, so the file is
// another one, or (should the file system reuse the inode) newer.
func rewritten(before, now os.FileInfo) bool {
	if now == nil {
		return false
	}
	return before == nil || !os.SameFile(before, now) || !now.ModTime().Equal(before.ModTime())
}

// observe renders what the kubelet shows of each resource, and whether that
// is what the plugins left: capacity, allocatable (0 once the plugin
// stopped; no entry before the first registration) and, while the plugin
// runs, the healthy IDs in the checkpoint.
// A kubelet writes the checkpoint after it takes a ListAndWatch snapshot, so
// after a snapshot (snapshot true) a stopped resource must show no healthy
// ID there either; after a stop, nothing is written, and the checkpoint
// keeps what it had. A missing allocatable entry counts as 0 for settling
// but prints as "-", so a side that drops the entry still differs.
func observe(k kubeletSide, devices [2][]regDevice, running [2]bool, instances [2]int, snapshot bool) (string, bool) {
	capacity, allocatable := k.capacity()
	registered, _, cpErr := readCheckpoint(k.dir())
	settled := true
	var parts []string
	for r, name := range regResources {
		c, hasC := capacity[name]
		a, hasA := allocatable[name]
		healthy, hasH := registered[name]
		wantA := int64(healthyCount(devices[r]))
		if !running[r] {
			wantA = 0
		}
		switch {
		case instances[r] == 0:
			// No plugin has registered the resource yet.
			if hasC || hasA || hasH {
				settled = false
			}
		case !hasC || c != int64(len(devices[r])) || a != wantA:
			settled = false
		}
		if running[r] && (cpErr != nil || !hasH || !slices.Equal(healthy, healthyIDs(devices[r]))) {
			settled = false
		}
		if !running[r] && snapshot && (cpErr != nil || len(healthy) > 0) {
			settled = false
		}
		field := func(v int64, ok bool) string {
			if !ok {
				return "-"
			}
			return fmt.Sprint(v)
		}
		h := "-"
		if hasH {
			h = fmt.Sprint(healthy)
		}
		parts = append(parts, fmt.Sprintf("%s capacity=%s allocatable=%s checkpointed=%s", name, field(c, hasC), field(a, hasA), h))
	}
	if cpErr != nil {
		parts = append(parts, "checkpoint: "+cpErr.Error())
	}
	return strings.Join(parts, ", "), settled
}

func healthyIDs(devices []regDevice) []string {
	var out []string
	for _, d := range devices {
		if d.Healthy {
			out = append(out, d.ID)
		}
	}
	return sorted(out)
}

// sameRuns: all four pairings observe the same steps and checkpoint, and
// each plugin kind is asked the same by both kubelets.
func sameRuns(ours, theirs [2]regRun) bool {
	first := ours[0]
	for _, r := range []regRun{ours[1], theirs[0], theirs[1]} {
		if !slices.Equal(r.Steps, first.Steps) || !slices.Equal(r.Checkpoint, first.Checkpoint) {
			return false
		}
	}
	sameCalls := func(a, b regRun) bool { return slices.EqualFunc(a.Calls, b.Calls, slices.Equal[[]string]) }
	return sameCalls(ours[0], theirs[0]) && sameCalls(ours[1], theirs[1])
}

// inParallel runs two pairings at once: each has its own directory, kubelet
// side and plugins, and most of a run is spent waiting on sockets.
func inParallel(a, b func() regRun) [2]regRun {
	var out [2]regRun
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		out[1] = b()
	}()
	out[0] = a()
	wg.Wait()
	return out
}

func TestRegistration(t *testing.T) {
	Compare(t, registrationComparison())
}

// registrationComparison is the registration comparison; its deviations'
// own tests run it on made-up runs.
func registrationComparison() Comparison[regScenario, [2]regRun] {
	return Comparison[regScenario, [2]regRun]{
		Name: "devicemanager.Registration (real sockets)",
		Gen:  genScenario(),
		Ours: func(sc regScenario) [2]regRun {
			return inParallel(
				func() regRun { return runScenario(sc, "nodeproof agent + upstream stub", startAgent, startStub) },
				func() regRun {
					return runScenario(sc, "nodeproof agent + nodeproof testplugin", startAgent, startTestPlugin)
				},
			)
		},
		Theirs: func(sc regScenario) [2]regRun {
			return inParallel(
				func() regRun { return runScenario(sc, "upstream manager + upstream stub", startUpstream, startStub) },
				func() regRun {
					return runScenario(sc, "upstream manager + nodeproof testplugin", startUpstream, startTestPlugin)
				},
			)
		},
		Parallel: true,
		Equal:    sameRuns,
		Deviations: []Deviation[regScenario, [2]regRun]{
			// Neither applies to a map-order free scenario, whatever it
			// holds: a difference there is a mismatch.
			{ID: "D2", Applies: func(sc regScenario) bool { return !sc.MapOrderFree && len(reuseChoicePods(sc)) > 0 }},
			{ID: "D3", Applies: func(sc regScenario) bool { return !sc.MapOrderFree && len(twoResourceContainers(sc)) > 0 }},
		},
		Explain: explainRegistration,
		Part: func(sc regScenario) string {
			if sc.MapOrderFree {
				return mapOrderFreePart
			}
			return ""
		},
	}
}
