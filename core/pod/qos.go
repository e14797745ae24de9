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
// (upstream GetPodQOS).
func (p *Pod) QOS() QOSClass {
	if p.QOSClass != "" {
		return p.QOSClass
	}
	return p.ComputeQOS()
}

func isQoSResource(name ResourceName) bool { return name == CPU || name == Memory }

// ComputeQOS classifies the pod from its requests and limits as v1.36 does
// with the PodLevelResources gate on (its default): when spec.resources is
// set only the pod-level values count; otherwise the positive cpu and memory
// requests and limits of every init and app container are summed.
func (p *Pod) ComputeQOS() QOSClass {
	requests := ResourceList{}
	limits := ResourceList{}
	guaranteed := true
	if p.Resources != nil {
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
