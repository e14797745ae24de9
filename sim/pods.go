package sim

import (
	"fmt"
	"time"

	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/prober"
)

const (
	mi = int64(1) << 20
	gi = int64(1) << 30
)

// newPod draws a pod. Every draw's zero is the plain case, so a shrunk run
// has BestEffort pods of one container, no devices, no probes, not critical.
func (s *Sim) newPod() *simPod {
	s.nextPod++
	uid := fmt.Sprintf("pod-%06d", s.nextPod)
	spec := &pod.Pod{UID: uid, Name: uid, Namespace: "default"}
	p := &simPod{spec: spec}
	p.lifetime = time.Duration(10+s.src.Intn(110)) * time.Minute
	p.grace = time.Duration(s.src.Intn(91)) * time.Second
	// One critical pod in ten: a static pod at system-critical priority
	// that asks for a lot, so that it preempts on a full node.
	p.critical = s.src.Intn(10) == 1
	ncont := 1 + s.src.Intn(2)
	qos := s.src.Intn(3) // 0 BestEffort, 1 Burstable, 2 Guaranteed
	device := s.src.Intn(4)
	if p.critical {
		prio := pod.SystemCriticalPriority
		spec.Priority = &prio
		spec.Annotations = map[string]string{pod.ConfigSourceAnnotation: "file"}
		qos, device = 2, 0
	}
	probes := prober.Pod{UID: uid, Namespace: "default", Name: uid}
	for i := range ncont {
		c := pod.Container{Name: fmt.Sprintf("c%d", i)}
		switch qos {
		case 1:
			c.Requests = pod.ResourceList{pod.CPU: int64(100 + 100*s.src.Intn(9)), pod.Memory: (128 + 128*int64(s.src.Intn(8))) * mi}
			if s.src.Intn(2) == 1 {
				c.Limits = pod.ResourceList{pod.Memory: 2 * c.Requests[pod.Memory]}
			}
		case 2:
			cpu, mem := int64(200+200*s.src.Intn(5)), (256+256*int64(s.src.Intn(4)))*mi
			if p.critical {
				cpu, mem = 1500+500*int64(s.src.Intn(3)), 3*gi
			}
			c.Requests = pod.ResourceList{pod.CPU: cpu, pod.Memory: mem}
			c.Limits = c.Requests.Clone()
		}
		if i == 0 && (device == 1 || device == 2) {
			// Extended resources: requests equal limits, as the API requires.
			r, n := pod.ResourceName(gpuResource), int64(1+s.src.Intn(2))
			if device == 2 {
				r, n = fpgaResource, 1
			}
			if c.Requests == nil {
				c.Requests = pod.ResourceList{}
			}
			if c.Limits == nil {
				c.Limits = pod.ResourceList{}
			}
			c.Requests[r], c.Limits[r] = n, n
		}
		spec.Containers = append(spec.Containers, c)
		probes.Containers = append(probes.Containers, s.drawProbes(c.Name))
		p.containers = append(p.containers, &simContainer{name: c.Name, image: s.images[s.src.Intn(len(s.images))].id})
	}
	p.probes = probes.WithDefaults()
	return p
}

// drawProbes gives a container none, readiness, liveness and readiness,
// or startup and liveness exec probes.
func (s *Sim) drawProbes(name string) prober.Container {
	c := prober.Container{Name: name}
	exec := func(period int32) *prober.Probe {
		return &prober.Probe{Handler: prober.Handler{Exec: &prober.ExecAction{Command: []string{"check", name}}}, PeriodSeconds: period}
	}
	switch s.src.Intn(4) {
	case 1:
		c.ReadinessProbe = exec(10)
	case 2:
		c.ReadinessProbe = exec(10)
		c.LivenessProbe = exec(15)
	case 3:
		c.StartupProbe = exec(5)
		c.LivenessProbe = exec(15)
	}
	return c
}

// podArrive binds a new pod to the node and paces the next arrival so that
// about Config.Pods pods are on the node.
func (s *Sim) podArrive() string {
	p := s.newPod()
	uid := p.spec.UID
	s.pods[uid] = p
	s.podOrder = append(s.podOrder, uid)
	meanLifetime := 65 * time.Minute
	gap := time.Duration(s.src.Intn(int(2*meanLifetime/time.Second)/s.cfg.Pods+1)) * time.Second
	s.schedule(&queued{at: s.now.Add(gap), kind: evPodArrive})
	s.schedule(&queued{at: s.now.Add(p.lifetime), kind: evPodDelete, podUID: uid})
	s.kubelet.admitQueue = append(s.kubelet.admitQueue, uid)
	s.kickAdmission()
	return fmt.Sprintf("%s arrives (%s, critical=%v)", uid, p.spec.QOS(), p.critical)
}

// kickAdmission makes the kubelet admit the next pod when it is idle.
func (s *Sim) kickAdmission() {
	k := s.kubelet
	if k.admitting == nil && len(k.admitQueue) > 0 {
		s.schedule(&queued{at: s.now, kind: evAdmit, kubelet: k.gen})
	}
}

// podDelete is the API server deleting the pod at the end of its lifetime.
func (s *Sim) podDelete(uid string) string {
	p := s.pods[uid]
	if p == nil {
		return s.nothingHappened(uid + " already gone")
	}
	switch p.phase {
	case phasePending:
		s.setDead(p)
		return uid + " deleted before admission"
	case phaseAdmitting:
		// The pod worker finishes the admission first.
		s.schedule(&queued{at: s.now.Add(time.Second), kind: evPodDelete, podUID: uid})
		return s.nothingHappened(uid + " deletion waits for its admission")
	case phaseRunning:
		p.phase = phaseTerminating
		s.kubelet.stopProbes(s, p)
		s.schedule(&queued{at: s.now.Add(p.grace), kind: evPodTerminated, podUID: uid})
		return fmt.Sprintf("%s terminating, grace %v", uid, p.grace)
	}
	return s.nothingHappened(uid + " already " + p.phase.String())
}

// podTerminated ends a deleted pod's grace period: its containers exit and
// the kubelet releases what it held.
func (s *Sim) podTerminated(uid string) string {
	p := s.pods[uid]
	if p == nil || p.phase != phaseTerminating || p.killFailed {
		return s.nothingHappened(uid + " not terminating")
	}
	s.kubelet.terminate(s, p, prober.PodSucceeded)
	s.setDead(p)
	return uid + " terminated"
}

// setDead records a pod as gone in the world and schedules forgetting it.
func (s *Sim) setDead(p *simPod) {
	wasLive := p.live()
	p.phase = phaseDead
	p.deadAt = s.now
	for _, c := range p.containers {
		c.running = false
	}
	if wasLive {
		s.liveGen++
	}
}

// forgetDead drops records of pods dead for a while whose devices must
// have been released: the world keeps only a bounded history.
func (s *Sim) forgetDead() {
	kept := s.podOrder[:0]
	for _, uid := range s.podOrder {
		p := s.pods[uid]
		if p.phase == phaseDead && p.mustRelease && s.now.Sub(p.deadAt) > deadRecordLifetime {
			delete(s.pods, uid)
			s.forgotten[uid] = true
			for _, pl := range s.plugins {
				pl.forget(uid)
			}
			continue
		}
		kept = append(kept, uid)
	}
	s.podOrder = kept
}
