package sim

import (
	"fmt"
	"time"

	"github.com/nodeproof/nodeproof/core/admission"
	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
	"github.com/nodeproof/nodeproof/core/prober"
)

// admitNext is the kubelet's HandlePodAdditions for the next pod: the
// admission through core/admission, one step at a time, with the plugins'
// Allocate answers arriving as later events.
func (s *Sim) admitNext() string {
	k := s.kubelet
	if k.admitting != nil || len(k.admitQueue) == 0 {
		return s.nothingHappened("nothing to admit")
	}
	uid := k.admitQueue[0]
	k.admitQueue = k.admitQueue[1:]
	defer s.kickAdmission()
	p := s.pods[uid]
	if p == nil || p.phase != phasePending {
		return s.nothingHappened(uid + " no longer pending")
	}
	s.nodeStatus()
	// Its own admission may allocate it devices again: an earlier
	// collection, run while it waited, no longer speaks for what it holds.
	p.mustRelease = false
	if s.requestsRegisteredDevice(p) {
		// The allocation garbage-collects the devices of every pod that is
		// not active; from now on those pods must not hold any.
		k.collected = true
		for _, other := range s.pods {
			if other != p && (other.phase == phaseDead || other.phase == phasePending) {
				other.mustRelease = true
			}
		}
	}
	a, err := k.node.Begin(p.spec, admission.Options{})
	if err != nil {
		s.coreErr("admission.Begin", err)
		return uid + " refused by admission.Begin"
	}
	p.phase = phaseAdmitting
	k.admitting = &admitting{uid: uid, attempt: a}
	return uid + ": " + s.continueAdmission()
}

// requestsRegisteredDevice reports whether the pod asks for a device of a
// plugin that is registered now, in the world's record.
func (s *Sim) requestsRegisteredDevice(p *simPod) bool {
	for _, c := range p.spec.Containers {
		for name := range c.Limits {
			if pl := s.plugin(string(name)); pl != nil && pl.up {
				return true
			}
		}
	}
	return false
}

// continueAdmission drives the attempt until it needs an Allocate answer
// or decides.
func (s *Sim) continueAdmission() string {
	k := s.kubelet
	ad := k.admitting
	k.setActivePods(s, ad.attempt)
	for {
		step := ad.attempt.Next()
		switch step.Kind {
		case admission.StepAllocate:
			got := &pluginAnswers{caller: k.gen}
			var latest time.Duration
			for _, req := range step.Plan.Requests {
				answer, granted, latency, err := s.allocate(ad.uid, step.Plan.Container, req)
				if latency > latest {
					latest = latency
				}
				if err != nil {
					// The first failed RPC fails the container; the later
					// ones are not made.
					got.rpcErr = err
					break
				}
				got.answers = append(got.answers, answer)
				if granted.dir != "" {
					got.sent = append(got.sent, sentGrant{plugin: s.plugin(req.Resource), uid: ad.uid, container: step.Plan.Container, grant: granted})
				}
			}
			// The answers reach this kubelet process only: a restart
			// before they arrive drops them with the connections.
			s.schedule(&queued{at: s.now.Add(latest), kind: evAllocateAnswer, kubelet: k.gen, answers: got})
			return "Allocate for " + step.Plan.Container
		case admission.StepKill:
			errs := make([]error, len(step.Evictions))
			for i, ev := range step.Evictions {
				errs[i] = s.kill(ev)
			}
			s.coreErr("admission.Killed", ad.attempt.Killed(errs))
		case admission.StepDone:
			k.admitting = nil
			return s.admissionResult(step.Result)
		}
	}
}

// setActivePods gives the admission the kubelet's active pods before its
// next device plan: upstream's device manager calls GetActivePods at each
// Allocate, and its garbage collection frees the devices of the pods that
// are not among them, such as the victims of an earlier preemption.
func (k *kubelet) setActivePods(s *Sim, a *admission.Attempt) {
	uids := []string{}
	for _, p := range k.activePods(s) {
		uids = append(uids, p.UID)
	}
	s.coreErr("admission.SetActivePods", a.SetActivePods(uids))
}

// allocateAnswer delivers the plugins' answers to the pending plan, with
// the two restart points around it.
func (s *Sim) allocateAnswer(got *pluginAnswers) string {
	k := s.kubelet
	ad := k.admitting
	if ad == nil {
		return s.nothingHappened("no admission waits for an answer")
	}
	if s.fault(RestartMidAdmission) {
		return s.restartKubelet("between the plan and its commit of " + ad.uid)
	}
	s.deliver(got)
	err := ad.attempt.Allocated(got.answers, got.rpcErr)
	s.coreErr("admission.Allocated", err)
	if got.rpcErr == nil && err == nil && s.fault(RestartBeforeCheckpoint) {
		return s.restartKubelet("after the commit of " + ad.uid + ", before the checkpoint write")
	}
	s.writeCheckpoint()
	return ad.uid + ": " + s.continueAdmission()
}

// kill is the kubelet's killPodFunc for a preemption victim: the pod's
// containers are stopped at once, unless the kill fails.
func (s *Sim) kill(ev preemption.Eviction) error {
	v := s.pods[ev.Pod.UID]
	if s.fault(KillError) {
		v.killFailed = true
		v.phase = phaseTerminating
		s.schedule(&queued{at: s.now.Add(time.Duration(1+s.src.Intn(30)) * time.Second), kind: evKillRetry, podUID: v.spec.UID, kubelet: s.kubelet.gen})
		return fmt.Errorf("failed to kill pod %q: rpc error: code = DeadlineExceeded", v.spec.UID)
	}
	s.kubelet.terminate(s, v, prober.PodFailed)
	v.preempted = true
	s.setDead(v)
	return nil
}

// killRetry is the kubelet's later sync loop killing a victim whose kill
// failed; it then leaves the node.
func (s *Sim) killRetry(uid string) string {
	v := s.pods[uid]
	if v == nil || !v.killFailed || v.phase != phaseTerminating {
		return s.nothingHappened(uid + " no kill to retry")
	}
	s.kubelet.terminate(s, v, prober.PodFailed)
	s.coreErr("admission.Remove", s.kubelet.node.Remove(uid))
	v.preempted = true
	s.setDead(v)
	return uid + " killed on retry"
}

// admissionResult applies the decision: an admitted pod starts, a
// rejected one is dead.
func (s *Sim) admissionResult(r *admission.Result) string {
	k := s.kubelet
	p := s.pods[r.Pod.UID]
	s.writeCheckpoint()
	if len(r.KillFailed) > 0 && r.Admitted {
		s.stats.Observed["a critical pod admitted while a victim's kill had failed (#78405)"]++
	}
	if !r.Admitted {
		p.rejected, p.reason, p.message = true, r.Reason, r.Message
		s.setDead(p)
		return fmt.Sprintf("rejected: %s: %s", r.Reason, r.Message)
	}
	p.phase = phaseRunning
	p.unreported = s.unreportedResources(p)
	if len(p.unreported) > 0 {
		s.stats.Observed[observedUnreported]++
	}
	p.granted = map[string]map[string][]string{}
	for _, pl := range s.plugins {
		for c, g := range pl.grantsOf(p.spec.UID) {
			if p.granted[c] == nil {
				p.granted[c] = map[string][]string{}
			}
			p.granted[c][pl.resource] = g.devices
		}
	}
	s.liveGen++
	k.runPod(p.spec.UID)
	k.addPod(s, p)
	s.syncCgroups()
	s.pullOrStart(p)
	return fmt.Sprintf("admitted, %d evicted", len(r.Evicted))
}

// observedUnreported is the Stats.Observed key of pods admitted without
// devices they request (unreportedResources).
const observedUnreported = "a pod admitted without devices it requests, allocatable having none of them yet (removeMissingExtendedResources)"

// unreportedResources are the extended resources p requests that the fit
// of its admission, which has just decided, did not check: those the
// node's allocatable does not list at all (one listed at 0 is checked).
// For a pod holding devices the fit first raises each device resource's
// allocatable to the devices allocated (UpdatePluginResources). Upstream's
// predicate drops such requests (removeMissingExtendedResources in
// pkg/kubelet/lifecycle/predicate.go, whose comment calls it a caveat for
// pods bound to the node by hand) and the device manager skips a resource
// no plugin registered, so the pod runs without those devices.
func (s *Sim) unreportedResources(p *simPod) map[pod.ResourceName]bool {
	k := s.kubelet
	alloc := k.node.Allocatable()
	holds := false
	for _, h := range k.devices.Holdings() {
		if h.PodUID == p.spec.UID {
			holds = true
		}
	}
	allocated := k.devices.Allocated()
	var out map[pod.ResourceName]bool
	for name, q := range p.spec.EffectiveRequests(pod.Options{}) {
		if _, listed := alloc[name]; q <= 0 || !dm.IsExtendedResourceName(string(name)) || listed || (holds && len(allocated[string(name)]) > 0) {
			continue
		}
		if out == nil {
			out = map[pod.ResourceName]bool{}
		}
		out[name] = true
	}
	return out
}
