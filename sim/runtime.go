package sim

import (
	"strconv"
	"time"

	"github.com/nodeproof/nodeproof/core/imagegc"
)

// runtime is the simulated container runtime: the images present and being
// pulled, and the image filesystem. Containers are the sim's records
// (simContainer); the runtime lists those of pods that are not dead.
type runtime struct {
	images  map[string]int64 // present: ID -> size
	pulling map[string]bool
	nextID  int
	// fillerBytes is what else sits on the image filesystem (logs, layers
	// of other tools): the disk-fill fault raises it, log rotation drains it.
	fillerBytes int64
}

func newRuntime() *runtime {
	return &runtime{images: map[string]int64{}, pulling: map[string]bool{}}
}

func (r *runtime) newContainerID() string {
	r.nextID++
	return "c" + strconv.Itoa(r.nextID)
}

// containerIDPrefix makes runtime IDs the <runtime>://<id> form the prober
// reads from pod statuses.
const containerIDPrefix = "sim://"

func (r *runtime) usedBytes() int64 {
	used := r.fillerBytes
	for _, size := range r.images {
		used += size
	}
	return used
}

// startContainer starts a new instance of c, drawing how its probe target
// will behave. The image must be present.
func (s *Sim) startContainer(p *simPod, c *simContainer) {
	c.id = s.runtime.newContainerID()
	c.startSeq = s.runtime.nextID
	c.running = true
	c.startedAt = s.now
	c.startupProbes, c.livenessProbes, c.livenessFails = 0, 0, 0
	c.startupOK = false
	c.imageRemovedInWindow = false
	c.startupFailFirst = s.src.Intn(4)
	c.livenessSickAfter = 0
	if s.src.Intn(4) == 1 {
		c.livenessSickAfter = 5 + s.src.Intn(60)
	}
}

// view is the runtime's answer to ListImages and GetPods(all=true) at a
// GC pass, with the runtime-list-error fault (#118559) applied.
func (s *Sim) runtimeView() imagegc.RuntimeView {
	var v imagegc.RuntimeView
	if s.fault(RuntimeListError) {
		if s.src.Intn(2) == 0 {
			v.ListImagesErr = errRuntimeList("ListImages")
		} else {
			v.GetPodsErr = errRuntimeList("GetPods")
		}
		return v
	}
	for _, img := range s.images {
		if size, ok := s.runtime.images[img.id]; ok {
			v.Images = append(v.Images, imagegc.Image{ID: img.id, SizeBytes: size})
		}
	}
	for _, uid := range s.podOrder {
		p := s.pods[uid]
		if p.phase == phaseDead {
			continue
		}
		for _, c := range p.containers {
			if c.id != "" {
				v.Containers = append(v.Containers, imagegc.Container{PodID: uid, ID: c.id, ImageID: c.image})
			}
		}
	}
	return v
}

type runtimeError string

func (e runtimeError) Error() string { return string(e) }

func errRuntimeList(call string) error {
	return runtimeError("rpc error: code = Unavailable desc = " + call + ": connection reset by peer")
}

// fsStats is ImageFsStats: the capacity and what images and filler leave.
func (s *Sim) fsStats() imagegc.FsStats {
	avail := int64(imageFsBytes) - s.runtime.usedBytes()
	if avail < 0 {
		avail = 0
	}
	return imagegc.FsStats{CapacityBytes: imageFsBytes, AvailableBytes: avail}
}

// pullTime is how long pulling an image takes: a second per 100 MiB plus
// a drawn network delay.
func (s *Sim) pullTime(sizeBytes int64) time.Duration {
	return time.Duration(1+sizeBytes/(100<<20))*time.Second + time.Duration(s.src.Intn(5000))*time.Millisecond
}
