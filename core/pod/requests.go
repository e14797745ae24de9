package pod

// Options select the variants of the effective request computation that
// upstream callers choose between.
type Options struct {
	// ExcludeOverhead leaves spec.overhead out of the result.
	ExcludeOverhead bool
	// SkipPodLevelResources ignores spec.resources even when set (callers do
	// this when the PodLevelResources gate is off).
	SkipPodLevelResources bool
}

// IsSupportedPodLevelResource reports whether spec.resources may set name in
// v1.36: cpu, memory and hugepages.
func IsSupportedPodLevelResource(name ResourceName) bool {
	return name == CPU || name == Memory || IsHugePages(name)
}

func hasSupported(l ResourceList) bool {
	for name := range l {
		if IsSupportedPodLevelResource(name) {
			return true
		}
	}
	return false
}

// HasPodLevelRequests reports whether spec.resources requests a supported resource.
func (p *Pod) HasPodLevelRequests() bool {
	return p.Resources != nil && hasSupported(p.Resources.Requests)
}

// HasPodLevelResources reports whether spec.resources requests or limits a
// supported resource.
func (p *Pod) HasPodLevelResources() bool {
	return p.Resources != nil && (hasSupported(p.Resources.Requests) || hasSupported(p.Resources.Limits))
}

func addInto(dst, src ResourceList) {
	for k, v := range src {
		dst[k] += v
	}
}

func maxInto(dst, src ResourceList) {
	for k, v := range src {
		if cur, ok := dst[k]; !ok || v > cur {
			dst[k] = v
		}
	}
}

// aggregate sums app containers and sidecars and takes the maximum with each
// regular init container's needs, where a regular init container runs next
// to the sidecars declared before it (spec cgroups.md §5.4).
func aggregate(p *Pod, pick func(Container) ResourceList) ResourceList {
	total := ResourceList{}
	for _, c := range p.Containers {
		addInto(total, pick(c))
	}
	sidecars := ResourceList{}
	initPeak := ResourceList{}
	for _, c := range p.InitContainers {
		var use ResourceList
		if c.IsSidecar() {
			addInto(total, pick(c))
			addInto(sidecars, pick(c))
			use = sidecars
		} else {
			use = ResourceList{}
			addInto(use, pick(c))
			addInto(use, sidecars)
		}
		maxInto(initPeak, use)
	}
	maxInto(total, initPeak)
	return total
}

// Requests returns the pod's effective requests (upstream PodRequests).
func (p *Pod) EffectiveRequests(opts Options) ResourceList {
	reqs := aggregate(p, func(c Container) ResourceList { return c.Requests })
	if !opts.SkipPodLevelResources && p.HasPodLevelRequests() {
		for name, q := range p.Resources.Requests {
			if IsSupportedPodLevelResource(name) {
				reqs[name] = q
			}
		}
	}
	if !opts.ExcludeOverhead {
		addInto(reqs, p.Overhead)
	}
	return reqs
}

// EffectiveLimits returns the pod's effective limits (upstream PodLimits).
// Overhead is added only to limits that are present and non-zero.
func (p *Pod) EffectiveLimits(opts Options) ResourceList {
	limits := aggregate(p, func(c Container) ResourceList { return c.Limits })
	if !opts.SkipPodLevelResources && p.HasPodLevelResources() {
		for name, q := range p.Resources.Limits {
			if IsSupportedPodLevelResource(name) {
				limits[name] = q
			}
		}
	}
	if !opts.ExcludeOverhead {
		for name, q := range p.Overhead {
			if cur, ok := limits[name]; ok && cur != 0 {
				limits[name] += q
			}
		}
	}
	return limits
}

// ApplyDefaults does what the API server's defaulting does to the resources
// of a pod before anything on the node sees it: a container's missing
// request defaults to its limit; and once spec.resources has limits, a
// missing pod-level cpu or memory request defaults to the containers'
// aggregated request for it, and any other missing pod-level request of a
// supported resource to the pod-level limit.
func (p *Pod) ApplyDefaults() {
	defaultContainer := func(c *Container) {
		for name, limit := range c.Limits {
			if _, ok := c.Requests[name]; !ok {
				if c.Requests == nil {
					c.Requests = ResourceList{}
				}
				c.Requests[name] = limit
			}
		}
	}
	for i := range p.InitContainers {
		defaultContainer(&p.InitContainers[i])
	}
	for i := range p.Containers {
		defaultContainer(&p.Containers[i])
	}
	p.defaultHugePagePodLimits()
	if p.Resources == nil || len(p.Resources.Limits) == 0 {
		return
	}
	requests := p.Resources.Requests.Clone()
	if requests == nil {
		requests = ResourceList{}
	}
	for name, q := range aggregate(p, func(c Container) ResourceList { return c.Requests }) {
		if _, set := requests[name]; !set && (name == CPU || name == Memory) {
			requests[name] = q
		}
	}
	for name, limit := range p.Resources.Limits {
		if _, set := requests[name]; !set && IsSupportedPodLevelResource(name) {
			requests[name] = limit
		}
	}
	if len(requests) > 0 {
		p.Resources.Requests = requests
	}
}

// defaultHugePagePodLimits is upstream's defaultHugePagePodLimits, which
// runs before the pod-level request defaulting: once spec.resources sets
// any request or limit, a hugepages size the containers limit and the pod
// neither requests nor limits gets the containers' aggregated limit as its
// pod-level limit. That new limit then lets the pod-level requests default
// even when the pod set no limit of its own (found by conformance/ TestQOS).
func (p *Pod) defaultHugePagePodLimits() {
	if p.Resources == nil || (len(p.Resources.Limits) == 0 && len(p.Resources.Requests) == 0) {
		return
	}
	for name, q := range aggregate(p, func(c Container) ResourceList { return c.Limits }) {
		if !IsHugePages(name) {
			continue
		}
		if _, ok := p.Resources.Requests[name]; ok {
			continue
		}
		if _, ok := p.Resources.Limits[name]; !ok {
			if p.Resources.Limits == nil {
				p.Resources.Limits = ResourceList{}
			}
			p.Resources.Limits[name] = q
		}
	}
}
