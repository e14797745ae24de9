package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
	"github.com/nodeproof/nodeproof/realkubelet"
	"github.com/nodeproof/nodeproof/realkubelet/sweep"
	"github.com/nodeproof/nodeproof/verify"
)

// Kind is what a step does to the node.
type Kind string

const (
	AddPod        Kind = "add-pod"
	RemovePod     Kind = "remove-pod"
	KillKubelet   Kind = "kill-kubelet"
	RestartPlugin Kind = "restart-plugin"
	FlipHealth    Kind = "flip-health"
	// CrashContainer kills a running container of a pod through CRI
	// (SIGKILL, exit 137), as a crash would end it.
	CrashContainer Kind = "crash-container"
	// FlipLiveness and FlipReadiness turn a pod's liveness or readiness
	// target from healthy to failing or back.
	FlipLiveness  Kind = "flip-liveness"
	FlipReadiness Kind = "flip-readiness"
)

// kinds lists every kind, in the order rapid draws them from.
var kinds = []Kind{RemovePod, AddPod, KillKubelet, RestartPlugin, FlipHealth, CrashContainer, FlipLiveness, FlipReadiness}

// Step is one drawn step.
type Step struct {
	Kind Kind
	// Pod is the pod added, or (by its name) removed, crashed, or whose
	// liveness target flips.
	Pod PodSpec
	// Device is the device whose health flips.
	Device string
	// Container is the container crashed, and Killed the instance the
	// harness killed, as /pods names it ("containerd://<id>"). A pod's
	// app container with a liveness probe is killed once its target has
	// answered Answers more probes: the moment of a crash, drawn.
	Container, Killed string
	Answers           int
	// Healthy is what the liveness or readiness target answers from
	// this step on.
	Healthy bool
	// A crash of an app container while its liveness target answers
	// failure (Failing) is followed until the replacement is killed for
	// liveness in turn (ReplacementKilled), counting the failures the
	// target answered from the crash until then (OwnFailures).
	Failing           bool
	ReplacementKilled bool
	OwnFailures       int
}

func (s Step) String() string {
	switch s.Kind {
	case AddPod:
		return "add-pod " + s.Pod.String()
	case RemovePod:
		return "remove-pod " + s.Pod.Name
	case FlipHealth:
		return "flip-health " + s.Device
	case CrashContainer:
		out := "crash-container " + s.Pod.Name + "/" + s.Container
		if s.Answers > 0 {
			out += fmt.Sprintf(" after %d liveness answers", s.Answers)
		}
		if s.Failing {
			out += fmt.Sprintf(" (its liveness failing: %d failures answered from the crash until the replacement was seen killed: %t)", s.OwnFailures, s.ReplacementKilled)
		}
		return out
	case FlipLiveness, FlipReadiness:
		return fmt.Sprintf("%s %s healthy=%t", s.Kind, s.Pod.Name, s.Healthy)
	}
	return string(s.Kind)
}

// Devices are the plugin's devices: few, so that pods compete for them.
var Devices = []string{"d0", "d1", "d2", "d3"}

// DefaultSteps bounds a scenario's steps unless told otherwise: short
// enough for make node-e2e's sweep, long enough for a restart to meet pods.
const DefaultSteps = 8

// settleLimit bounds the wait for a node to settle after a step; a pod
// took 0.3-0.85 s to run, a restart 0.55-1.75 s to come back.
const settleLimit = 30 * time.Second

// Tally gathers what a sweep's scenarios did: the checks' counts, and the
// time of each step (action, settling and every observation) and of each
// kill -9 restart cycle (the kill to the node settled again).
type Tally struct {
	Counts   verify.Counts
	Steps    []time.Duration
	Restarts []time.Duration
	Kinds    map[Kind]int
	// Scenarios counts the scenarios played, shrinking's included.
	Scenarios int
	// Explained counts the breaches each known bug explains (Explained),
	// and Shortest keeps, for each, the fewest steps that showed it.
	Explained map[string]int
	Shortest  map[string]string
	// Strict fails a scenario on an explained breach too, so that rapid
	// shrinks it: to reproduce a finding rather than to sweep past it.
	Strict bool
	// Log, when set, hears of each scenario and step as it is played
	// (shrinking's too): a sweep run by hand shows what it is doing.
	Log func(line string)
	// Divergences counts the simulation's divergences from the node
	// (Predicts) by class: a known limit's name, or FidelityBug; Diverged
	// lists each step that diverged, its divergences and the steps played.
	// Uncompared counts the steps not compared because the two nodes had
	// parted at an earlier step.
	Divergences map[string]int
	Diverged    []string
	Uncompared  int
}

// FidelityBug is the class of a divergence no known limit explains.
const FidelityBug = sweep.FidelityBug

// diverge records one step's divergences and returns the class of the
// first, at which the nodes part.
func (t *Tally) diverge(d Diverged, history string) string {
	for _, x := range d {
		t.Divergences[x.class()]++
	}
	t.Diverged = append(t.Diverged, d.Error()+"\n"+history)
	return d[0].class()
}

func (t *Tally) log(line string) {
	if t.Log != nil {
		t.Log(line)
	}
}

func (t *Tally) explain(e Explained, history string) {
	t.Explained[e.Known]++
	if old, seen := t.Shortest[e.Known]; !seen || strings.Count(history, "\n") < strings.Count(old, "\n") {
		t.Shortest[e.Known] = e.Error() + "\n" + history
	}
}

// NewTally returns an empty tally.
func NewTally() *Tally {
	return &Tally{Counts: verify.Counts{}, Kinds: map[Kind]int{}, Explained: map[string]int{}, Shortest: map[string]string{},
		Divergences: map[string]int{}}
}

// Scenario is one generated scenario on its own node.
type Scenario struct {
	node    *realkubelet.Node
	plugin  *testplugin.Plugin
	devices []testplugin.Device
	specs   map[string]PodSpec
	added   int
	steps   []Step
	last    *Observation
	tally   *Tally
	// ended says the scenario stops before its drawn length: the node is
	// in a state a known bug left it in.
	ended bool
	// predictor plays the steps on the scripted simulation; parted names
	// the class of the divergence after which it no longer predicts the
	// node, both having taken different ways.
	predictor *Predictor
	parted    string
	// restarted: a kill-kubelet step has been played.
	restarted bool
	// target answers the pods' liveness probes; crashes counts the
	// harness's kills of each container ("pod/container").
	target  *Target
	crashes map[string]int
	// What the step played last leaves the node to do before it has
	// settled: replace each container instance of replaced (by
	// "pod/container", the instance as /pods names it), and answer each
	// liveness path of answered healthy twice since the time given.
	replaced map[string]string
	answered map[string]time.Time
}

// Play starts a node and the test plugin, then draws and plays up to
// maxSteps steps, checking every property after each; a violation fails t
// with the steps played. The node is stopped when t ends.
func Play(t *rapid.T, maxSteps int, tally *Tally) {
	play(context.Background(), t, realkubelet.Options{}, maxSteps, tally)
}

// play is Play on a node started with opts; ctx ends the scenario early,
// as a failure, its node stopped all the same.
func play(ctx context.Context, t *rapid.T, opts realkubelet.Options, maxSteps int, tally *Tally) {
	n, err := realkubelet.Start(ctx, opts)
	if err != nil {
		t.Fatalf("starting the node: %v", err)
	}
	tally.Scenarios++
	s := &Scenario{node: n, devices: testplugin.Healthy(Devices...), specs: map[string]PodSpec{}, tally: tally,
		crashes: map[string]int{}, replaced: map[string]string{}, answered: map[string]time.Time{}}
	t.Cleanup(func() {
		if s.plugin != nil {
			s.plugin.Stop()
		}
		if err := n.Stop(); err != nil {
			t.Errorf("stopping the node: %v", err)
		}
		if s.target != nil {
			if err := s.target.Close(); err != nil {
				t.Errorf("%v", err)
			}
		}
	})
	if s.target, err = StartTarget(); err != nil {
		t.Fatalf("%v", err)
	}
	if err := s.startPlugin(ctx); err != nil {
		t.Fatalf("%v", err)
	}
	if s.last, _, err = s.settle(ctx); err != nil {
		t.Fatalf("the new node: %v", err)
	}
	if s.predictor, err = NewPredictor(); err != nil {
		t.Fatalf("the simulated node: %v", err)
	}
	steps := rapid.IntRange(1, maxSteps).Draw(t, "steps")
	tally.log(fmt.Sprintf("scenario %d: %d steps drawn", tally.Scenarios, steps))
	for range steps {
		if s.ended {
			t.Logf("ended early: a known bug explains the last step's breach")
			tally.log("  ended early: a known bug explains the last step's breach")
			return
		}
		step := s.draw(t)
		s.steps = append(s.steps, step)
		t.Logf("step %d: %s", len(s.steps), step)
		tally.log(fmt.Sprintf("  step %d: %s", len(s.steps), step))
		if err := s.play(ctx, step); err != nil {
			t.Fatalf("%v\n%s\n%s", err, s.history(), n.LogTail())
		}
	}
}

func (s *Scenario) draw(t *rapid.T) Step {
	crashable := s.crashable()
	live := s.probed(func(p PodSpec) bool { return p.Liveness != nil })
	readiness := s.probed(func(p PodSpec) bool { return p.Readiness != nil })
	failing := s.failingLiveness(crashable)
	// Each possible kind is drawn as often as its weight, 1 but for two:
	// a crash while a liveness probe fails and a liveness flip are what
	// RK-C-LIVENESS-OWN-RUN needs, in that order, and drawn as one kind in
	// eight each they would meet in few scenarios.
	var can []Kind
	for _, k := range kinds {
		weight := 1
		switch {
		case k == RemovePod && len(s.specs) == 0,
			k == CrashContainer && len(crashable) == 0,
			k == FlipLiveness && len(live) == 0,
			k == FlipReadiness && len(readiness) == 0:
			continue
		case k == CrashContainer && len(failing) > 0:
			weight = 4
		case k == FlipLiveness:
			weight = 3
		}
		for range weight {
			can = append(can, k)
		}
	}
	// Removals come first when possible: rapid's first cases favour the
	// first choices, and pods that go are what frees devices for the next.
	kind := rapid.SampledFrom(can).Draw(t, "step")
	step := Step{Kind: kind}
	switch kind {
	case AddPod:
		step.Pod = DrawPodSpec(t, fmt.Sprintf("p%d", s.added), s.target)
		s.added++
	case RemovePod:
		step.Pod = s.specs[rapid.SampledFrom(sortedKeys(s.specs)).Draw(t, "remove")]
	case FlipHealth:
		step.Device = rapid.SampledFrom(Devices).Draw(t, "device")
	case CrashContainer:
		// A crash of an app container whose liveness probe fails is the
		// one RK-C-LIVENESS-OWN-RUN follows; drawn among all crashes it
		// would be rare, so half the crashes go to one, when there is.
		if len(failing) > 0 && rapid.Bool().Draw(t, "crash.failing") {
			step.Pod, step.Container = s.specs[rapid.SampledFrom(failing).Draw(t, "crash")], "main"
		} else {
			name := rapid.SampledFrom(sortedKeys(crashable)).Draw(t, "crash")
			step.Pod = s.specs[name]
			step.Container = rapid.SampledFrom(crashable[name]).Draw(t, "container")
		}
		if step.Container == "main" && step.Pod.Liveness != nil {
			step.Answers = rapid.IntRange(0, 2).Draw(t, "crash.answers")
		}
	case FlipLiveness:
		step.Pod = s.specs[rapid.SampledFrom(live).Draw(t, "liveness")]
		step.Healthy = !s.target.Healthy(step.Pod.LivenessPath())
	case FlipReadiness:
		step.Pod = s.specs[rapid.SampledFrom(readiness).Draw(t, "readiness")]
		step.Healthy = !s.target.Healthy(step.Pod.ReadinessPath())
	}
	return step
}

// crashable lists, by pod, the containers that may crash: the app
// container and the sidecar of each pod the last observation shows
// running.
func (s *Scenario) crashable() map[string][]string {
	out := map[string][]string{}
	for name, spec := range s.specs {
		if !running(s.last.Pods[name]) {
			continue
		}
		out[name] = []string{"main"}
		if spec.Sidecar {
			out[name] = append(out[name], "sidecar")
		}
	}
	return out
}

// failingLiveness lists the crashable pods whose liveness target answers
// failure.
func (s *Scenario) failingLiveness(crashable map[string][]string) []string {
	var out []string
	for _, name := range sortedKeys(crashable) {
		if spec := s.specs[name]; spec.Liveness != nil && !s.target.Healthy(spec.LivenessPath()) {
			out = append(out, name)
		}
	}
	return out
}

// probed lists the pods with the probe has says that the kubelet admitted.
func (s *Scenario) probed(has func(PodSpec) bool) []string {
	var out []string
	for _, name := range sortedKeys(s.specs) {
		p, listed := s.last.Pods[name]
		if has(s.specs[name]) && listed && !refused(p) {
			out = append(out, name)
		}
	}
	return out
}

// play does step, waits for the node to settle, and checks every
// property on what it shows.
func (s *Scenario) play(ctx context.Context, step Step) error {
	began := time.Now()
	var crashedAt time.Time
	var err error
	switch step.Kind {
	case AddPod:
		s.specs[step.Pod.Name] = step.Pod
		err = s.node.WriteStaticPod(step.Pod.Pod())
	case RemovePod:
		delete(s.specs, step.Pod.Name)
		for key := range s.replaced {
			if pod, _ := splitKey(key); pod == step.Pod.Name {
				delete(s.replaced, key)
			}
		}
		delete(s.answered, step.Pod.LivenessPath())
		delete(s.answered, step.Pod.ReadinessPath())
		err = s.node.RemoveStaticPod(step.Pod.Name)
	case KillKubelet:
		var replugged []string
		if len(s.healthy()) > 0 {
			replugged = append(replugged, Resource)
		}
		err = s.node.RestartKubelet(ctx, replugged...)
	case RestartPlugin:
		s.plugin.Crash()
		s.plugin.Stop()
		err = s.startPlugin(ctx)
		if lateDisconnectAtRegistration(err) && !s.tally.Strict {
			// D1 struck while the kubelet was still connecting the new
			// instance: nothing is registered, so there is no node left
			// to check but that bug's.
			s.tally.explain(Explained{Known: "D1", Err: fmt.Errorf("%s: %w", step, err)}, s.history())
			s.ended = true
			return nil
		}
	case FlipHealth:
		i := slices.IndexFunc(s.devices, func(d testplugin.Device) bool { return d.ID == step.Device })
		if s.devices[i].Health == v1beta1.Healthy {
			s.devices[i].Health = v1beta1.Unhealthy
		} else {
			s.devices[i].Health = v1beta1.Healthy
		}
		s.plugin.Update(s.devices)
	case CrashContainer:
		key := step.Pod.Name + "/" + step.Container
		step.Failing = step.Container == "main" && step.Pod.Liveness != nil && !s.target.Healthy(step.Pod.LivenessPath())
		if err = s.awaitAnswers(ctx, step.Pod.LivenessPath(), began, step.Answers); err != nil {
			break
		}
		crashedAt = time.Now()
		if step.Killed, err = s.crash(ctx, step.Pod.Name, step.Container); err == nil {
			s.crashes[key]++
			s.replaced[key] = step.Killed
		}
	case FlipLiveness:
		path := step.Pod.LivenessPath()
		if step.Healthy {
			s.target.Set(path, true)
			s.answered[path] = time.Now()
			break
		}
		// The instance running now is the one its failing probe must
		// have the kubelet kill.
		if step.Killed, err = s.runningInstance(ctx, step.Pod.Name, "main"); err == nil {
			s.target.Set(path, false)
			s.replaced[step.Pod.Name+"/main"] = step.Killed
		}
	case FlipReadiness:
		s.target.Set(step.Pod.ReadinessPath(), step.Healthy)
		s.answered[step.Pod.ReadinessPath()] = time.Now()
	}
	s.steps[len(s.steps)-1] = step
	if err != nil {
		return fmt.Errorf("%s: %w", step, err)
	}
	// A node that does not settle is still checked: what it shows may say
	// which promise it broke.
	after, watching, unsettled := s.settle(ctx)
	if after == nil {
		return fmt.Errorf("after %s: %w", step, unsettled)
	}
	if step.Failing && unsettled == nil {
		step.ReplacementKilled, step.OwnFailures = s.awaitLivenessKill(ctx, step.Pod, after, crashedAt)
		s.steps[len(s.steps)-1] = step
	}
	took := time.Since(began)
	s.tally.Steps = append(s.tally.Steps, took)
	s.tally.Kinds[step.Kind]++
	if step.Kind == KillKubelet {
		s.tally.Restarts = append(s.tally.Restarts, took)
		s.restarted = true
	}
	clear(s.replaced)
	clear(s.answered)
	state := &State{Step: step, Before: s.last, After: after, Specs: s.specs, Healthy: s.healthy(), Watching: watching, Restarted: s.restarted,
		Crashes: maps.Clone(s.crashes), Failures: s.failures(), Readiness: s.readiness(), Killing: s.killing()}
	s.last = after
	if s.parted == "" {
		predicted, err := s.predictor.Play(step, state.Before)
		if err != nil {
			return err
		}
		state.Predicted = &predicted
	} else {
		s.tally.Uncompared++
	}
	var diverged Diverged
	if err := Predicts.Evaluate(state, s.tally.Counts); errors.As(err, &diverged) {
		s.parted = s.tally.diverge(diverged, s.history())
	} else if err != nil {
		return err
	}
	violations := []error{unsettled}
	for _, c := range Checks {
		err := c.Evaluate(state, s.tally.Counts)
		var explained Explained
		if errors.As(err, &explained) && !s.tally.Strict {
			s.tally.explain(explained, s.history())
			// After D1 the kubelet no longer follows the plugin: later
			// steps would test that bug again, not the node.
			s.ended = s.ended || explained.Known == "D1"
			continue
		}
		violations = append(violations, err)
	}
	return errors.Join(violations...)
}

func (s *Scenario) startPlugin(ctx context.Context) error {
	var err error
	s.plugin, err = testplugin.Start(testplugin.Config{
		Dir:          s.node.DevicePluginDir,
		Endpoint:     "nodeproof-dev.sock",
		ResourceName: Resource,
		Devices:      s.devices,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return fmt.Errorf("starting the device plugin: %w", err)
	}
	return nil
}

// awaitAnswers waits, within settleLimit, until the target has answered n
// probes of path from since on.
func (s *Scenario) awaitAnswers(ctx context.Context, path string, since time.Time, n int) error {
	ctx, cancel := context.WithTimeout(ctx, settleLimit)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for len(s.target.Served(path, since)) < n {
		select {
		case <-ctx.Done():
			return fmt.Errorf("the probe target answered %s %d times in %v, not %d", path, len(s.target.Served(path, since)), settleLimit, n)
		case <-tick.C:
		}
	}
	return nil
}

// awaitLivenessKill waits, within settleLimit, until the instance of the
// pod's app container that after shows has ended or been replaced (seen
// ended before the back-off lets the next start), its liveness target
// answering failure, and returns whether it was and the failures the
// target answered from since until then. The count may take in a failure
// of the instance before (its probe answered after since), never fewer
// than the replacement's own.
func (s *Scenario) awaitLivenessKill(ctx context.Context, spec PodSpec, after *Observation, since time.Time) (bool, int) {
	replacement, _ := containerStatus(after.Pods[spec.Name], "main")
	_, err := s.node.WaitPod(ctx, spec.Name, settleLimit, func(p corev1.Pod) bool {
		c, ok := containerStatus(p, "main")
		return ok && (c.ContainerID != replacement.ContainerID || c.State.Running == nil)
	})
	return err == nil, s.target.Failures(spec.LivenessPath(), since)
}

// crash kills the running instance of the pod's container through CRI, as
// a crash ends it (SIGKILL, no grace), and returns the instance as /pods
// names it.
func (s *Scenario) crash(ctx context.Context, name, container string) (string, error) {
	instance, err := s.runningInstance(ctx, name, container)
	if err != nil {
		return "", err
	}
	id, ok := strings.CutPrefix(instance, containerdPrefix)
	if !ok {
		return "", fmt.Errorf("pod %s container %s: /pods names the instance %q, not a containerd one", name, container, instance)
	}
	if err := s.node.Containerd.CRI.StopContainer(ctx, id, 0); err != nil {
		return "", fmt.Errorf("killing %s/%s: %w", name, container, err)
	}
	return instance, nil
}

// containerdPrefix begins a container instance's ID in /pods.
const containerdPrefix = "containerd://"

// runningInstance waits, within settleLimit, until /pods shows the pod's
// container running, and returns that instance: one that a failing
// liveness probe had the kubelet kill comes back after its back-off.
func (s *Scenario) runningInstance(ctx context.Context, name, container string) (string, error) {
	p, err := s.node.WaitPod(ctx, name, settleLimit, func(p corev1.Pod) bool {
		c, ok := containerStatus(p, container)
		return ok && c.State.Running != nil && c.ContainerID != ""
	})
	if err != nil {
		return "", fmt.Errorf("container %s not running: %w", container, err)
	}
	c, _ := containerStatus(p, container)
	return c.ContainerID, nil
}

// failures counts, for each pod with a liveness probe, the failures its
// target has answered.
func (s *Scenario) failures() map[string]int {
	out := map[string]int{}
	for name, spec := range s.specs {
		if spec.Liveness != nil {
			out[name] = s.target.Failures(spec.LivenessPath(), time.Time{})
		}
	}
	return out
}

// readiness says, for each pod with a readiness probe, whether its target
// answers healthy.
func (s *Scenario) readiness() map[string]bool {
	out := map[string]bool{}
	for name, spec := range s.specs {
		if spec.Readiness != nil {
			out[name] = s.target.Healthy(spec.ReadinessPath())
		}
	}
	return out
}

// killing lists the pods whose liveness target answers failure.
func (s *Scenario) killing() map[string]bool {
	out := map[string]bool{}
	for name, spec := range s.specs {
		if spec.Liveness != nil && !s.target.Healthy(spec.LivenessPath()) {
			out[name] = true
		}
	}
	return out
}

// lateDisconnectAtRegistration says whether err is the kubelet's answer to
// a registration that D1 broke: v1.36.3 registers the new instance's
// client by resource name before it connects it, and the crashed
// instance's stream, ending then, disconnects the client registered under
// that name, the new one, closing its connection under the options call
// (pkg/kubelet/cm/devicemanager/plugin/v1beta1/handler.go, connectClient
// and runClient).
func lateDisconnectAtRegistration(err error) bool {
	return err != nil && strings.Contains(err.Error(), "failed to get device plugin options") &&
		strings.Contains(err.Error(), "the client connection is closing")
}

// healthy are the plugin's healthy devices, sorted.
func (s *Scenario) healthy() []string {
	var ids []string
	for _, d := range s.devices {
		if d.Health == v1beta1.Healthy {
			ids = append(ids, d.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// settle observes the node until it has settled, within settleLimit: every
// pod whose manifest is there listed and running or failed, no other pod
// listed, the kubelet watching the plugin's every registration, and the
// plugin's healthy devices allocatable. It returns the observation and the
// ListAndWatch streams open while it was made, the same before and after
// it, so that the checks judge the two together. Unsettled, it returns the
// last complete observation (nil if none) and an error saying what did not
// settle.
func (s *Scenario) settle(ctx context.Context) (*Observation, int, error) {
	ctx, cancel := context.WithTimeout(ctx, settleLimit)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last *Observation
	var lastWatching int
	// unwatched counts the observations in a row that found no stream
	// open: one alone may fall between a stream closing and the next
	// opening.
	unwatched := 0
	for {
		watching := s.plugin.Watching()
		o, err := Observe(ctx, s.node)
		why := ""
		switch {
		case err != nil:
			why = err.Error()
		case s.plugin.Watching() != watching:
			why = "a ListAndWatch stream opened or closed while the node was observed"
		default:
			last, lastWatching = o, watching
			if watching == 0 {
				unwatched++
			} else {
				unwatched = 0
			}
			if why = s.unsettled(o, watching, unwatched); why == "" {
				return o, watching, nil
			}
		}
		select {
		case <-ctx.Done():
			return last, lastWatching, fmt.Errorf("the node did not settle in %v: %s", settleLimit, why)
		case <-tick.C:
		}
	}
}

// unsettled says what keeps o, made while watching streams were open (none
// for unwatched observations in a row), from being settled, or "".
func (s *Scenario) unsettled(o *Observation, watching, unwatched int) string {
	for _, name := range sortedKeys(s.specs) {
		p, listed := o.Pods[name]
		switch {
		case !listed:
			return "pod " + name + " not listed"
		case !running(p) && p.Status.Phase != "Failed":
			return fmt.Sprintf("pod %s %s, not running", name, p.Status.Phase)
		}
	}
	for _, name := range sortedKeys(o.Pods) {
		if _, ours := s.specs[name]; !ours {
			return "pod " + name + " removed and still listed"
		}
	}
	for _, key := range sortedKeys(s.replaced) {
		pod, container := splitKey(key)
		c, ok := containerStatus(o.Pods[pod], container)
		if !ok || c.ContainerID == s.replaced[key] || c.State.Running == nil {
			return fmt.Sprintf("%s: instance %s not yet replaced by a running one", key, s.replaced[key])
		}
	}
	for _, path := range sortedKeys(s.answered) {
		if n := len(s.target.Served(path, s.answered[path])); n < 2 {
			return fmt.Sprintf("the probe target answered %s %d times since its answer flipped, not yet 2", path, n)
		}
	}
	// A container's readiness follows its probe's last answer: failing
	// from its start (and from a kubelet's restart) until the first
	// success. One that its failing liveness probe has killed as soon as
	// it started may never be seen ready.
	killing := s.killing()
	for _, name := range sortedKeys(s.specs) {
		spec := s.specs[name]
		if spec.Readiness == nil || !running(o.Pods[name]) || killing[name] {
			continue
		}
		if c, _ := containerStatus(o.Pods[name], "main"); c.Ready != s.target.Healthy(spec.ReadinessPath()) {
			return fmt.Sprintf("pod %s: main ready %t, its readiness target answers healthy=%t", name, c.Ready, s.target.Healthy(spec.ReadinessPath()))
		}
	}
	// Every registration of the plugin is answered by the kubelet opening
	// ListAndWatch on it; until then, what it lists may be the crashed
	// plugin's or the killed kubelet's.
	if registered, watched := s.plugin.Registrations(), len(s.plugin.Calls(testplugin.ListAndWatch)); watched < registered {
		return fmt.Sprintf("the plugin registered %d times and was watched %d times", registered, watched)
	}
	if watching == 0 {
		// The kubelet closed the stream it opened: nothing the plugin
		// says reaches it any more (D1), so there is nothing to wait
		// for, once a second look finds it still closed.
		if unwatched < 2 {
			return "no ListAndWatch stream open"
		}
		return ""
	}
	if healthy := s.healthy(); !slices.Equal(o.Allocatable, healthy) {
		return fmt.Sprintf("allocatable %v, healthy %v", o.Allocatable, healthy)
	}
	return ""
}

// history lists the steps played, for a failure's message.
func (s *Scenario) history() string {
	var b strings.Builder
	b.WriteString("steps:\n")
	for i, step := range s.steps {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, step)
	}
	return b.String()
}

// Summary is the tally for a reader: each property's checked and applied
// counts, the steps by kind, and the median and 95th percentile of a step
// and of a kill -9 restart cycle.
func (t *Tally) Summary() string {
	var b strings.Builder
	for _, c := range append(slices.Clone(Checks), Predicts) {
		n := t.Counts[c.ID]
		fmt.Fprintf(&b, "%-26s checked %5d  applied %5d\n", c.ID, n.Checked, n.Applied)
	}
	fmt.Fprintf(&b, "scenarios %d, steps %d:", t.Scenarios, len(t.Steps))
	for _, k := range kinds {
		fmt.Fprintf(&b, " %s %d", k, t.Kinds[k])
	}
	fmt.Fprintf(&b, "\nstep (action, settling, observations): median %v, p95 %v\n", percentile(t.Steps, 50), percentile(t.Steps, 95))
	fmt.Fprintf(&b, "kill -9 restart cycle (kill to settled): median %v, p95 %v\n", percentile(t.Restarts, 50), percentile(t.Restarts, 95))
	for _, id := range sortedKeys(t.Explained) {
		fmt.Fprintf(&b, "breaches explained by %s: %d; the shortest:\n%s", id, t.Explained[id], t.Shortest[id])
	}
	total := 0
	var classes []string
	for _, class := range sortedKeys(t.Divergences) {
		total += t.Divergences[class]
		classes = append(classes, fmt.Sprintf("%s %d", class, t.Divergences[class]))
	}
	if total == 0 {
		b.WriteString("the simulation's divergences from the node: none\n")
	} else {
		fmt.Fprintf(&b, "the simulation's divergences from the node: %d (%s) at %d steps; steps not compared once the two had parted: %d\n",
			total, strings.Join(classes, ", "), len(t.Diverged), t.Uncompared)
	}
	for _, d := range t.Diverged {
		fmt.Fprintf(&b, "diverged:\n%s", d)
	}
	return b.String()
}

// percentile is the p-th percentile of ds (nearest rank), 0 for none.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sorted := slices.Sorted(slices.Values(ds))
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1].Round(time.Millisecond)
}
