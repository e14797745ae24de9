package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/nodeproof/nodeproof/core/admission"
	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
	"github.com/nodeproof/nodeproof/core/imagegc"
)

// restartKubelet drops the kubelet's memory and starts a new one the way
// the real kubelet comes back: the device manager from the last written
// checkpoint and the runtime's containers, the plugins registering again
// after a delay, the pods still running admitted again (readmit), before
// the pod sources are ready, a new prober whose
// start is now (readiness from the API pod's Ready condition, v1.36), a
// new image GC manager, and the cgroups synced for the running pods. Pods
// admitted but not yet running are admitted again; a victim whose kill had
// failed is killed by the new kubelet's cleanup.
func (s *Sim) restartKubelet(where string) string {
	k := s.newKubelet()
	s.kubelet = k
	// The new process has received no Allocate answer yet.
	for _, p := range s.plugins {
		p.delivered = map[string]map[string]grant{}
	}

	// The device manager, from the checkpoint file and the runtime.
	k.devices = dm.New(dm.DefaultLimits())
	var data checkpoint.Data
	if s.disk != nil {
		var err error
		data, err = checkpoint.Decode(s.disk)
		s.coreErr("checkpoint.Decode", err)
	}
	var running []dm.ContainerRef
	for _, uid := range s.podOrder {
		for _, c := range s.pods[uid].containers {
			if c.running {
				running = append(running, dm.ContainerRef{PodUID: uid, Container: c.name, Running: true})
			}
		}
	}
	_, err := k.devices.Restore(data, s.now, running)
	s.coreErr("devicemanager.Restore", err)
	// The kubelet has seen no pod source yet: its sources become ready once
	// it has handled the API server's first pods (readmit), so that the
	// device manager lets the containers it found running keep their
	// devices without a plugin.
	for _, p := range s.plugins {
		if p.up && !p.registerPending {
			// The plugin sees the kubelet socket recreated and registers
			// again.
			p.registerPending = true
			s.schedule(&queued{at: s.now.Add(time.Duration(1+s.src.Intn(20)) * time.Second), kind: evPluginRegister, name: p.resource})
		}
	}

	s.startCores(k)
	s.schedule(&queued{at: s.now.Add(imagegc.GCPeriod), kind: evGC, kubelet: k.gen})

	for _, uid := range s.podOrder {
		p := s.pods[uid]
		p.survivedRestart, p.runningAtRestart = false, false
		// The new device manager restores the checkpoint, which may hold
		// devices of pods the old one had collected; only its own first
		// collection frees them again.
		p.mustRelease = false
		switch {
		case p.rejected && s.refusedAgain != nil && s.refusedAgain(uid):
			// A static pod's refusal was the old process's memory only:
			// the new one reads its manifest and admits it again, with
			// the running pods, before the plugins register again.
			p.rejected, p.reason, p.message = false, "", ""
			if res := s.admitNow(p); res != nil {
				s.admissionResult(res)
			}
		case p.phase == phaseAdmitting:
			p.phase = phasePending
			k.admitQueue = append(k.admitQueue, uid)
		case p.phase == phasePending:
			k.admitQueue = append(k.admitQueue, uid)
		case p.killFailed:
			// The new kubelet's cleanup kills the victim it finds running.
			for _, c := range p.containers {
				c.running = false
			}
			p.preempted = true
			s.setDead(p)
		case p.phase == phaseTerminating && !p.anyRunning():
			// Deleted before anything started: nothing is left to stop.
			s.setDead(p)
		case p.live() && !p.anyRunning():
			// Admitted, nothing started yet: admitted again from scratch.
			p.phase = phasePending
			p.granted = nil
			s.liveGen++
			k.admitQueue = append(k.admitQueue, uid)
		case p.live():
			if !s.readmit(p) {
				continue
			}
			k.runPod(uid)
			if p.phase == phaseRunning {
				p.survivedRestart = p.startedBefore(s.now.Add(-probeRestartGrace))
				p.readyAtRestart = p.apiReady
				p.runningAtRestart = p.startedBefore(s.now.Add(time.Nanosecond))
				p.readinessProbed = false
				k.addPod(s, p)
				k.updateStatus(s, p)
			}
		}
	}
	// The API server's first pods are handled: the sources are ready.
	k.devices.SetSourcesReady()
	s.nodeStatus()
	s.syncCgroups()
	// Admissions resume once the plugins had time to register again.
	if len(k.admitQueue) > 0 {
		s.schedule(&queued{at: s.now.Add(30 * time.Second), kind: evAdmit, kubelet: k.gen})
	}
	return "kubelet restarted " + where
}

func (p *simPod) anyRunning() bool {
	for _, c := range p.containers {
		if c.running {
			return true
		}
	}
	return false
}

// startedBefore: every container runs and started before t.
func (p *simPod) startedBefore(t time.Time) bool {
	for _, c := range p.containers {
		if !c.running || !c.startedAt.Before(t) {
			return false
		}
	}
	return true
}

// readmit is the restarted kubelet's HandlePodAdditions for a pod it finds
// running: upstream admits every pod of the API server's first list again,
// in creation order, before its pod sources are ready. A pod being deleted
// is only added back (its termination goes on). The admission is driven at
// once: an Allocate it needs (a container whose devices the checkpoint
// lost) is answered at once. A rejected pod fails: its running containers
// are stopped, and readmit reports false.
func (s *Sim) readmit(p *simPod) bool {
	k := s.kubelet
	if p.phase != phaseRunning {
		s.coreErr("admission.AddRunning", k.node.AddRunning(p.spec))
		return true
	}
	res := s.admitNow(p)
	if res == nil || res.Admitted {
		return true
	}
	var stopped []string
	for _, c := range p.containers {
		if c.running {
			stopped = append(stopped, c.name)
		}
	}
	if s.unreportedRunning() {
		// A pod runs without devices it requests, admitted before their
		// plugin registered: a node no scheduler would have placed it on,
		// outside what the promise covers, and its requests count
		// against the pods admitted after it.
		s.stats.Observed[observedRestartRejected]++
	} else {
		s.restartStopped = append(s.restartStopped, fmt.Sprintf("%s, running %s, was rejected by the restarted kubelet's admission: %s: %s",
			p.spec.UID, strings.Join(stopped, ", "), res.Reason, res.Message))
	}
	p.rejected, p.reason, p.message = true, res.Reason, res.Message
	s.setDead(p)
	return false
}

// admitNow drives the admission of p to its decision at once, before the
// next event: an Allocate call it needs is answered at once. It returns nil
// when the admission could not begin.
func (s *Sim) admitNow(p *simPod) *admission.Result {
	k := s.kubelet
	a, err := k.node.Begin(p.spec, admission.Options{})
	if err != nil {
		s.coreErr("admission.Begin", err)
		return nil
	}
	var res *admission.Result
	for res == nil {
		step := a.Next()
		switch step.Kind {
		case admission.StepAllocate:
			got := &pluginAnswers{caller: k.gen}
			for _, req := range step.Plan.Requests {
				answer, granted, _, err := s.allocate(p.spec.UID, step.Plan.Container, req)
				if err != nil {
					got.rpcErr = err
					break
				}
				got.answers = append(got.answers, answer)
				if granted.dir != "" {
					got.sent = append(got.sent, sentGrant{plugin: s.plugin(req.Resource), uid: p.spec.UID, container: step.Plan.Container, grant: granted})
				}
			}
			s.deliver(got)
			s.coreErr("admission.Allocated", a.Allocated(got.answers, got.rpcErr))
		case admission.StepKill:
			errs := make([]error, len(step.Evictions))
			for i, ev := range step.Evictions {
				errs[i] = s.kill(ev)
			}
			s.coreErr("admission.Killed", a.Killed(errs))
		case admission.StepDone:
			res = step.Result
		}
	}
	return res
}

// observedRestartRejected is the Stats.Observed key of running pods a
// restart rejected on a node where a pod runs without devices it requests.
const observedRestartRejected = "a running pod rejected at a kubelet restart while a pod ran without devices it requests (removeMissingExtendedResources)"

// unreportedRunning: a live pod runs without devices it requests.
func (s *Sim) unreportedRunning() bool {
	for _, uid := range s.podOrder {
		if p := s.pods[uid]; p.live() && len(p.unreported) > 0 {
			return true
		}
	}
	return false
}
