package imagegc

import (
	"slices"
	"sort"
	"time"

	"pgregory.net/rapid"

	core "github.com/nodeproof/nodeproof/core/imagegc"
	"github.com/nodeproof/nodeproof/properties"
)

// --- actions ----------------------------------------------------------------

// pull pulls the images of a new pod: one to three images not yet listed.
func (m *machine) pull(t *rapid.T) {
	var candidates []string
	for _, img := range catalogue {
		if !m.isListed(img.id) {
			candidates = append(candidates, img.id)
		}
	}
	if len(candidates) == 0 {
		m.tick(t)
		return
	}
	var pulled, refused []string
	for range rapid.IntRange(1, min(3, len(candidates))).Draw(t, "images") {
		id := rapid.SampledFrom(candidates).Draw(t, "image")
		switch {
		case m.isListed(id):
		case !m.roomFor(id):
			refused = append(refused, id)
		default:
			pulled = append(pulled, id)
			m.listed = append(m.listed, id)
			if _, ok := m.arrived[id]; !ok {
				m.arrived[id] = m.now
			}
			sort.Strings(m.listed)
		}
	}
	m.steps.Begin("pull", "%v (no space left for %v)", pulled, refused)
}

func (m *machine) startContainer(t *rapid.T) {
	var runnable []string
	for _, id := range m.listed {
		if id != pause {
			runnable = append(runnable, id)
		}
	}
	if len(runnable) == 0 {
		m.pull(t)
		return
	}
	if len(m.containers) >= maxContainers {
		m.removeContainer(t)
		return
	}
	c := m.addContainer(t, rapid.SampledFrom(runnable).Draw(t, "image"))
	m.steps.Begin("startContainer", "%s on %s mounts=%v", c.id, c.imageID, c.mounts)
}

func (m *machine) drawContainer(t *rapid.T) (int, bool) {
	if len(m.containers) == 0 {
		return 0, false
	}
	return rapid.IntRange(0, len(m.containers)-1).Draw(t, "container"), true
}

// stopContainer leaves an exited container the runtime still lists; its
// image stays in use until the container is removed.
func (m *machine) stopContainer(t *rapid.T) {
	i, ok := m.drawContainer(t)
	if !ok {
		m.startContainer(t)
		return
	}
	m.containers[i].exited = true
	m.steps.Begin("stopContainer", "%s (exited, still listed)", m.containers[i].id)
}

func (m *machine) removeContainer(t *rapid.T) {
	i, ok := m.drawContainer(t)
	if !ok {
		m.startContainer(t)
		return
	}
	m.steps.Begin("removeContainer", "%s", m.containers[i].id)
	m.containers = slices.Delete(m.containers, i, i+1)
}

// runtimeRemoveImage is a removal outside the kubelet (crictl rmi) of an
// image no container uses.
func (m *machine) runtimeRemoveImage(t *rapid.T) {
	var removable []string
	for _, id := range m.listed {
		if id != pause && !m.usedByContainer(id) {
			removable = append(removable, id)
		}
	}
	if len(removable) == 0 {
		m.pull(t)
		return
	}
	id := rapid.SampledFrom(removable).Draw(t, "image")
	m.steps.Begin("runtimeRemoveImage", "%s", id)
	// The contract counts an image removed outside the kubelet and pulled
	// again as the same image, its age from its first arrival: the
	// lenient reading, since the kubelet may not notice the gap.
	arrived := m.arrived[id]
	m.removeFromRuntime(id)
	m.arrived[id] = arrived
}

// tick moves the clock, drawn around the boundaries that matter: MinAge
// and MaxAge after the last detection, the end of MaxAge's start-up wait
// and the 5-minute GC period, each exactly, one ns before and one after.
func (m *machine) tick(t *rapid.T) {
	var targets []time.Time
	periods := m.now.Sub(m.beganGC) / core.GCPeriod
	targets = append(targets, m.beganGC.Add((periods+1)*core.GCPeriod), m.lastDetect.Add(m.policy.MinAge))
	if m.policy.MaxAge > 0 {
		targets = append(targets, m.lastDetect.Add(m.policy.MaxAge), m.beganGC.Add(m.policy.MaxAge))
	}
	var d time.Duration
	switch kind := rapid.IntRange(0, 3).Draw(t, "tickKind"); kind {
	case 0:
		d = rapid.SampledFrom([]time.Duration{time.Second, 30 * time.Second, core.GCPeriod, 2 * core.GCPeriod, time.Hour}).Draw(t, "duration")
	default:
		target := rapid.SampledFrom(targets).Draw(t, "boundary").Add(rapid.SampledFrom([]time.Duration{-time.Nanosecond, 0, time.Nanosecond}).Draw(t, "offset"))
		d = target.Sub(m.now)
	}
	if d < 0 {
		d = 0
	}
	m.now = m.now.Add(d)
	m.steps.Begin("tick", "+%v to %s", d, m.clock())
}

// diskUsage changes the bytes other than images (logs, volumes), drawn to
// put the usage near the thresholds.
func (m *machine) diskUsage(t *rapid.T) {
	imageBytes := m.usedBytes() - m.otherBytes
	pct := rapid.SampledFrom([]int{m.policy.HighThresholdPercent - 1, m.policy.HighThresholdPercent, m.policy.HighThresholdPercent + 3,
		m.policy.LowThresholdPercent, 95, 100}).Draw(t, "usagePercent")
	m.otherBytes = max(0, min(m.capacityBytes*int64(pct)/100, m.capacityBytes)-imageBytes)
	m.steps.Begin("diskUsage", "other=%s used=%s of %s", core.FormatSize(m.otherBytes), core.FormatSize(m.usedBytes()), core.FormatSize(m.capacityBytes))
}

// restart restarts the kubelet, half the time with a new policy (a policy
// changes only with a restart).
func (m *machine) restart(t *rapid.T) {
	if rapid.Bool().Draw(t, "newPolicy") {
		m.policy = drawPolicy(t)
		m.steps.Begin("changePolicy", "%+v (a kubelet restart)", m.policy)
		m.restartKubelet("changePolicy")
		return
	}
	m.steps.Begin("restart", "")
	m.restartKubelet("restart")
}

func (m *machine) detect(*rapid.T) {
	m.steps.Begin("detect", "at %s", m.clock())
	m.runDetect()
}

// periodicGC moves the clock to the GC loop's next period (exactly, or
// one ns either side) and runs the loop's GarbageCollect there.
func (m *machine) periodicGC(t *rapid.T) {
	periods := m.now.Sub(m.beganGC)/core.GCPeriod + 1
	m.now = m.beganGC.Add(periods * core.GCPeriod).Add(rapid.SampledFrom([]time.Duration{-time.Nanosecond, 0, 0, time.Nanosecond}).Draw(t, "offset"))
	m.runGC(t, "periodicGC")
}

// gc is the GC loop's run at the current time.
func (m *machine) gc(t *rapid.T) { m.runGC(t, "gc") }

func (m *machine) runGC(t *rapid.T, action string) {
	m.steps.Begin(action, "at %s with %s used of %s", m.clock(), core.FormatSize(m.usedBytes()), core.FormatSize(m.capacityBytes))
	// The rule is the kubelet's (Kubelet.StartGarbageCollection), outside
	// the image GC manager: another system under test is never asked to
	// run a pass the loop would not run.
	enabled := m.policy.HighThresholdPercent < 100 || m.policy.MaxAge > 0
	if m.core != nil {
		// GC-DISABLED applies where the rule keeps the loop from running.
		m.tally.Check(Disabled, !enabled)
		if got := m.core.Policy().PeriodicGCEnabled(); got != enabled {
			properties.Fail(m.t, Disabled, "policy %+v: the core says the periodic GC runs = %t, the kubelet's rule says %t", m.policy, got, enabled)
		}
	}
	if !enabled {
		m.t.Logf("  image GC is off (high 100, MaxAge 0): the loop removes nothing")
		return
	}
	m.runPass(t, true)
}

func (m *machine) deleteUnusedImages(t *rapid.T) {
	m.steps.Begin("deleteUnusedImages", "at %s", m.clock())
	m.runPass(t, false)
}
