package admission

import (
	"fmt"

	"pgregory.net/rapid"

	core "github.com/nodeproof/nodeproof/core/admission"
	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/properties/admissioncheck"
	"github.com/nodeproof/nodeproof/verify"
)

// init registers the suite, so that importing the package is enough.
func init() {
	properties.Register(properties.Suite{
		Name:       "admission",
		Subsystem:  "admission",
		Invariants: verify.Properties(admissioncheck.AdmissionChecks),
		Property:   func(t *rapid.T, tally *properties.Tally) { newMachine(t, tally).run() },
	})
}

// gpus is the node's GPU count: few enough that pods run out of them.
const gpus = 3

type machine struct {
	t       *rapid.T
	tally   *properties.Tally
	steps   properties.Steps
	uids    int
	node    *core.Node
	twin    *core.Node
	devices *dm.Manager
	twinDM  *dm.Manager
	last    *admissioncheck.AdmissionCase
}

// gpuManager is a device manager with one GPU plugin of gpus healthy
// devices, past the kubelet's start.
func gpuManager(t *rapid.T) *dm.Manager {
	m := dm.New(dm.DefaultLimits())
	m.SetSourcesReady()
	if _, err := m.Connected(string(admissioncheck.GPU), "gpu.sock", dm.PluginOptions{}); err != nil {
		t.Fatalf("%s: connect: %v", admissioncheck.ADDevices, err)
	}
	var devs []dm.Device
	for i := 0; i < gpus; i++ {
		devs = append(devs, dm.Device{ID: fmt.Sprintf("gpu%d", i), Health: dm.Healthy})
	}
	if err := m.Update(string(admissioncheck.GPU), devs); err != nil {
		t.Fatalf("%s: snapshot: %v", admissioncheck.ADDevices, err)
	}
	return m
}

func newMachine(t *rapid.T, tally *properties.Tally) *machine {
	m := &machine{t: t, tally: tally, steps: properties.NewSteps(t, tally), devices: gpuManager(t), twinDM: gpuManager(t)}
	alloc := pod.ResourceList{
		pod.Pods:             int64(rapid.IntRange(2, 8).Draw(t, "maxPods")),
		pod.CPU:              rapid.SampledFrom([]int64{500, 1000, 2000}).Draw(t, "cpu"),
		pod.Memory:           rapid.SampledFrom([]int64{256 << 20, 512 << 20, 1 << 30}).Draw(t, "memory"),
		pod.EphemeralStorage: rapid.SampledFrom([]int64{2 << 30, 8 << 30}).Draw(t, "storage"),
		admissioncheck.GPU:   gpus,
	}
	// Huge pages and FPGAs: not listed, listed at 0 or some. A node with
	// none of a resource its pods ask for is where the fit's rule for
	// scalar resources decides (docs/deviations.md N6).
	scalar := func(name pod.ResourceName, some []int64) {
		switch mode := rapid.IntRange(0, 3).Draw(t, string(name)+".mode"); mode {
		case 0:
		case 1:
			alloc[name] = 0
		default:
			alloc[name] = rapid.SampledFrom(some).Draw(t, string(name))
		}
	}
	scalar(admissioncheck.HugePages, []int64{4 << 20, 8 << 20})
	scalar(admissioncheck.FPGA, []int64{1, 2})
	var err error
	if m.node, err = core.NewNode(alloc, m.devices); err != nil {
		t.Fatalf("%s: %v", admissioncheck.ADDecision, err)
	}
	if m.twin, err = core.NewNode(alloc, m.twinDM); err != nil {
		t.Fatalf("%s: %v", admissioncheck.ADDecision, err)
	}
	t.Logf("node allocatable=%v gpus=%d", alloc, gpus)
	return m
}

func (m *machine) run() {
	m.t.Repeat(map[string]func(*rapid.T){
		"podArrives":      func(t *rapid.T) { m.arrive(t, "podArrives", false) },
		"criticalArrives": func(t *rapid.T) { m.arrive(t, "criticalArrives", true) },
		"podLeaves":       m.podLeaves,
		"killRetried":     m.killRetried,
		"":                m.check,
	})
}

func (m *machine) check(*rapid.T) {
	c := m.last
	if c == nil {
		return
	}
	m.last = nil
	properties.Evaluate(m.t, m.tally, admissioncheck.AdmissionChecks, c)
}
