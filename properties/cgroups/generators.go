package cgroups

import (
	"fmt"
	"time"

	"pgregory.net/rapid"

	core "github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
)

const (
	mi = int64(1) << 20
	gi = int64(1) << 30
)

func (m *machine) drawConfig(t *rapid.T) core.Config {
	c := core.DefaultConfig()
	c.PodLevelResources = m.podLevelGate
	c.CgroupDriver = rapid.SampledFrom([]core.Driver{core.DriverCgroupfs, core.DriverSystemd}).Draw(t, "driver")
	c.CgroupRoot = rapid.SampledFrom([]string{"/", "/", "/custom", "/node-a/pods"}).Draw(t, "cgroupRoot")
	cpus := []int64{1000, 2000, 3000, 4000, 8000, 16000, 64000, 300000}
	if m.oddQuantities {
		cpus = append(cpus, 3500, 1999, 7)
	}
	c.Capacity = pod.ResourceList{
		pod.CPU:    rapid.SampledFrom(cpus).Draw(t, "cpu"),
		pod.Memory: rapid.SampledFrom([]int64{2 * gi, 4 * gi, 8 * gi, 16 * gi, 64 * gi, 5*gi + 12345}).Draw(t, "memory"),
	}
	if rapid.Bool().Draw(t, "pid") {
		c.Capacity[core.PIDs] = rapid.SampledFrom([]int64{4096, 32768}).Draw(t, "pids")
	}
	if rapid.Bool().Draw(t, "storage") {
		c.Capacity[pod.EphemeralStorage] = 100 * gi
	}
	c.HugePageSizes = nil
	if rapid.Bool().Draw(t, "huge2Mi") {
		c.HugePageSizes = append(c.HugePageSizes, 2*mi)
		c.Capacity["hugepages-2Mi"] = rapid.SampledFrom([]int64{0, 64 * mi, 512 * mi}).Draw(t, "huge2MiCapacity")
	}
	if rapid.Bool().Draw(t, "huge1Gi") {
		c.HugePageSizes = append(c.HugePageSizes, gi)
	}
	c.SystemReserved = pod.ResourceList{}
	c.KubeReserved = pod.ResourceList{}
	for _, l := range []pod.ResourceList{c.SystemReserved, c.KubeReserved} {
		if cpu := rapid.SampledFrom([]int64{0, 0, 125, 500, 1000}).Draw(t, "reservedCPU"); cpu > 0 {
			l[pod.CPU] = cpu
		}
		if mem := rapid.SampledFrom([]int64{0, 0, 256 * mi, gi}).Draw(t, "reservedMemory"); mem > 0 {
			l[pod.Memory] = mem
		}
		if rapid.IntRange(0, 3).Draw(t, "reservedPID") == 0 {
			l[core.PIDs] = 100
		}
	}
	if !rapid.Bool().Draw(t, "defaultEviction") {
		c.HardEviction = nil
	}
	// A reservation above capacity is the badConfig action's business.
	if core.ValidateNodeAllocatable(c) != nil {
		c.SystemReserved, c.KubeReserved = pod.ResourceList{}, pod.ResourceList{}
	}
	c.EnforceNodeAllocatablePods = rapid.IntRange(0, 4).Draw(t, "enforcePods") > 0
	c.CPUCFSQuota = rapid.IntRange(0, 4).Draw(t, "cpuCFSQuota") > 0
	c.CustomCPUCFSQuotaPeriod = rapid.IntRange(0, 3).Draw(t, "periodGate") > 0
	if c.CustomCPUCFSQuotaPeriod {
		c.CPUCFSQuotaPeriod = rapid.SampledFrom([]time.Duration{100 * time.Millisecond, 50 * time.Millisecond, 10 * time.Millisecond,
			time.Millisecond, 1500 * time.Microsecond, time.Second}).Draw(t, "period")
	}
	if rapid.Bool().Draw(t, "qosReserved") {
		p := rapid.SampledFrom([]int64{0, 33, 50, 100}).Draw(t, "qosReservedPercent")
		c.QOSReservedMemoryPercent = &p
	}
	c.MemoryQoS = rapid.Bool().Draw(t, "memoryQoS")
	c.MemoryReservationPolicy = rapid.SampledFrom([]core.MemoryReservationPolicy{core.ReservationNone, core.ReservationTiered}).Draw(t, "reservationPolicy")
	c.PodPidsLimit = rapid.SampledFrom([]int64{-1, 0, 1024}).Draw(t, "podPidsLimit")
	c.ContainerCPUWeight = rapid.SampledFrom([]core.WeightFormula{core.WeightQuadratic, core.WeightLinear}).Draw(t, "containerWeight")
	return c
}

func (m *machine) drawCPU(t *rapid.T, label string) int64 {
	if m.oddQuantities && rapid.IntRange(0, 3).Draw(t, label+"Odd") == 0 {
		return rapid.SampledFrom([]int64{1, 5, 10, 99, 333, 1001}).Draw(t, label)
	}
	return rapid.SampledFrom([]int64{125, 250, 500, 750, 1000, 1500, 2000}).Draw(t, label)
}

func drawMemory(t *rapid.T, label string) int64 {
	return rapid.SampledFrom([]int64{32 * mi, 64 * mi, 256 * mi, gi, 100_000_000}).Draw(t, label)
}

// drawContainer draws one container of a pod of the given shape; requests
// never exceed limits, as API validation requires.
func (m *machine) drawContainer(t *rapid.T, name, shape string) pod.Container {
	c := pod.Container{Name: name, Requests: pod.ResourceList{}, Limits: pod.ResourceList{}}
	switch shape {
	case "guaranteed":
		cpu, mem := m.drawCPU(t, "cpu"), drawMemory(t, "memory")
		c.Requests[pod.CPU], c.Limits[pod.CPU] = cpu, cpu
		c.Requests[pod.Memory], c.Limits[pod.Memory] = mem, mem
	case "limited":
		for _, r := range []pod.ResourceName{pod.CPU, pod.Memory} {
			var limit int64
			if r == pod.CPU {
				limit = m.drawCPU(t, "cpuLimit")
			} else {
				limit = drawMemory(t, "memoryLimit")
			}
			c.Limits[r] = limit
			switch rapid.IntRange(0, 2).Draw(t, "requestOf"+string(r)) {
			case 0: // defaulted to the limit
			case 1:
				c.Requests[r] = limit
			case 2:
				if half := limit / 2; r != pod.CPU || half%125 == 0 || m.oddQuantities {
					c.Requests[r] = half
				}
			}
		}
	case "partial", "podLevel":
		for _, r := range []pod.ResourceName{pod.CPU, pod.Memory} {
			switch rapid.IntRange(0, 3).Draw(t, "partial"+string(r)) {
			case 1:
				if r == pod.CPU {
					c.Requests[r] = m.drawCPU(t, "cpu")
				} else {
					c.Requests[r] = drawMemory(t, "memory")
				}
			case 2:
				if r == pod.CPU {
					c.Limits[r] = m.drawCPU(t, "cpuLimit")
				} else {
					c.Limits[r] = drawMemory(t, "memoryLimit")
				}
			case 3:
				if r == pod.CPU {
					v := m.drawCPU(t, "cpu")
					c.Requests[r], c.Limits[r] = v, 2*v
				} else {
					v := drawMemory(t, "memory")
					c.Requests[r], c.Limits[r] = v, 2*v
				}
			}
		}
	}
	if shape != "besteffort" && m.hostHas(2*mi) && rapid.IntRange(0, 4).Draw(t, "hugepages") == 0 {
		hp := rapid.SampledFrom([]int64{2 * mi, 4 * mi}).Draw(t, "hugepagesBytes")
		c.Requests["hugepages-2Mi"], c.Limits["hugepages-2Mi"] = hp, hp
		if c.Requests[pod.Memory] == 0 && c.Requests[pod.CPU] == 0 {
			c.Requests[pod.Memory] = 32 * mi
		}
	}
	return c
}

func (m *machine) hostHas(size int64) bool {
	for _, s := range m.cfg.HugePageSizes {
		if s == size {
			return true
		}
	}
	return false
}

func (m *machine) drawPod(t *rapid.T) *pod.Pod {
	shapes := []string{"guaranteed", "limited", "partial", "besteffort"}
	if m.podLevelGate {
		shapes = append(shapes, "podLevel")
	}
	shape := rapid.SampledFrom(shapes).Draw(t, "shape")
	m.uid++
	// UIDs with dashes exercise the systemd escaping.
	p := &pod.Pod{UID: fmt.Sprintf("%04x-uid-%d", m.uid*2654435761%65536, m.uid), Name: fmt.Sprintf("p%d", m.uid), Namespace: "default", Phase: pod.Running}
	for i := range rapid.IntRange(0, 2).Draw(t, "initContainers") {
		c := m.drawContainer(t, fmt.Sprintf("init-%d", i), shape)
		if rapid.Bool().Draw(t, "sidecar") {
			c.RestartPolicy = pod.RestartAlways
		}
		p.InitContainers = append(p.InitContainers, c)
	}
	for i := range rapid.IntRange(1, 3).Draw(t, "appContainers") {
		p.Containers = append(p.Containers, m.drawContainer(t, fmt.Sprintf("app-%d", i), shape))
	}
	if shape != "besteffort" && rapid.IntRange(0, 3).Draw(t, "overhead") == 0 {
		p.Overhead = pod.ResourceList{pod.CPU: rapid.SampledFrom([]int64{125, 250}).Draw(t, "overheadCPU"), pod.Memory: 32 * mi}
	}
	if !m.podLevelGate && rapid.IntRange(0, 3).Draw(t, "emptyPodResources") == 0 {
		// With the gate on an empty spec.resources would make the pod
		// BestEffort whatever its containers request (spec §4.3), which
		// CG-CONTENTION's domain does not allow for.
		p.Resources = &pod.Resources{}
	}
	if shape == "podLevel" {
		// API validation: pod-level requests cover the containers' aggregate
		// and limits cover requests.
		agg := p.EffectiveRequests(pod.Options{ExcludeOverhead: true, SkipPodLevelResources: true})
		cpu := agg[pod.CPU] + rapid.SampledFrom([]int64{0, 125, 500, 1000}).Draw(t, "podCPUExtra")
		mem := agg[pod.Memory] + rapid.SampledFrom([]int64{0, 64 * mi, gi}).Draw(t, "podMemoryExtra")
		if cpu == 0 {
			cpu = 125
		}
		if mem == 0 {
			mem = 64 * mi
		}
		p.Resources = &pod.Resources{Requests: pod.ResourceList{pod.CPU: cpu, pod.Memory: mem}}
		switch rapid.IntRange(0, 3).Draw(t, "podLimits") {
		case 1: // Guaranteed at pod level
			p.Resources.Limits = pod.ResourceList{pod.CPU: cpu, pod.Memory: mem}
		case 2:
			p.Resources.Limits = pod.ResourceList{pod.CPU: 2 * cpu}
		case 3:
			p.Resources.Limits = pod.ResourceList{pod.Memory: 2 * mem}
		}
		// A container may not declare more than the pod allows.
		for _, cs := range [][]pod.Container{p.InitContainers, p.Containers} {
			for i := range cs {
				for name, limit := range p.Resources.Limits {
					if cs[i].Limits[name] > limit {
						cs[i].Limits[name] = limit
						if cs[i].Requests[name] > limit {
							cs[i].Requests[name] = limit
						}
					}
				}
			}
		}
	}
	p.ApplyDefaults()
	return p
}

// podSpec describes a pod in a step, with its class under the
// PodLevelResources gate.
type podSpec struct {
	p    *pod.Pod
	gate bool
}

type configSpec struct{ c core.Config }

func fmtPtr[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

func (m *machine) hostHasAll(c core.Config, p *pod.Pod) bool {
	has := map[int64]bool{}
	for _, s := range c.HugePageSizes {
		has[s] = true
	}
	ok := true
	visit := func(l pod.ResourceList) {
		for name := range l {
			if pod.IsHugePages(name) {
				size, err := core.HugePageSizeFromResourceName(name)
				ok = ok && err == nil && has[size]
			}
		}
	}
	for _, c := range append(append([]pod.Container(nil), p.InitContainers...), p.Containers...) {
		visit(c.Requests)
		visit(c.Limits)
	}
	return ok
}
