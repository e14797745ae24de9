package pod

// QOSClass is the pod's quality of service class.
type QOSClass string

// QoS classes.
const (
	Guaranteed QOSClass = "Guaranteed"
	Burstable  QOSClass = "Burstable"
	BestEffort QOSClass = "BestEffort"
)

// QOS returns status.qosClass when set, else the computed class
// (upstream GetPodQOS with the PodLevelResources gate on, its default).
// Callers that have the gate as an option use QOSWith.
func (p *Pod) QOS() QOSClass {
	return p.QOSWith(Options{})
}

// QOSWith is upstream's GetPodQOS under the PodLevelResources gate that
// opts stands for: status.qosClass when set, whatever the gate; else the
// computed class, where opts.SkipPodLevelResources (the gate off) makes
// ComputePodQOS ignore spec.resources and classify by the containers
// (v1.36.3 pkg/apis/core/v1/helper/qos/qos.go:38-43, :92). ExcludeOverhead
// plays no part: overhead never affects the class.
func (p *Pod) QOSWith(opts Options) QOSClass {
	if p.QOSClass != "" {
		return p.QOSClass
	}
	return p.computeQOS(!opts.SkipPodLevelResources)
}

func isQoSResource(name ResourceName) bool { return name == CPU || name == Memory }

// ComputeQOS classifies the pod from its requests and limits as v1.36 does
// with the PodLevelResources gate on (its default): when spec.resources is
// set only the pod-level values count; otherwise the positive cpu and memory
// requests and limits of every init and app container are summed.
func (p *Pod) ComputeQOS() QOSClass {
	return p.computeQOS(true)
}

// computeQOS is ComputePodQOS; podLevel is the PodLevelResources gate.
func (p *Pod) computeQOS(podLevel bool) QOSClass {
	requests := ResourceList{}
	limits := ResourceList{}
	guaranteed := true
	if podLevel && p.Resources != nil {
		for name, q := range p.Resources.Requests {
			if isQoSResource(name) && q > 0 {
				requests[name] = q
			}
		}
		if len(p.Resources.Limits) > 0 {
			found := 0
			for name, q := range p.Resources.Limits {
				if isQoSResource(name) && q > 0 {
					limits[name] = q
					found++
				}
			}
			if found < 2 {
				guaranteed = false
			}
		}
	} else {
		count := func(c Container) {
			for name, q := range c.Requests {
				if isQoSResource(name) && q > 0 {
					requests[name] += q
				}
			}
			found := 0
			for name, q := range c.Limits {
				if isQoSResource(name) && q > 0 {
					limits[name] += q
					found++
				}
			}
			if found < 2 {
				guaranteed = false
			}
		}
		for _, c := range p.InitContainers {
			count(c)
		}
		for _, c := range p.Containers {
			count(c)
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return BestEffort
	}
	if guaranteed {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim != req {
				guaranteed = false
				break
			}
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return Guaranteed
	}
	return Burstable
}
