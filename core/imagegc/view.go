package imagegc

// Bounds of the inputs (DESIGN.md rule 7). With them every sum of sizes and
// the usage arithmetic (available*100, capacity*(100-low)) stay inside int64.
const (
	MaxImages             = 1 << 20
	MaxContainers         = 1 << 20
	MaxMountsPerContainer = 1 << 10
	// MaxImageSizeBytes (1 TiB) times MaxImages stays below 2^63.
	MaxImageSizeBytes = 1 << 40
	// MaxFsBytes (64 PiB) keeps available*100 below 2^63.
	MaxFsBytes = 1 << 56
)

// Image is one image as the runtime's ListImages reports it.
type Image struct {
	// ID is the image ID (the CRI Image.Id, a digest for containerd).
	ID string
	// SizeBytes is the size the runtime reports (#68203: it may differ from
	// what a removal really frees when layers are shared).
	SizeBytes int64
	// Pinned: the runtime asks the kubelet never to remove it (containerd
	// pins the sandbox image; #111796).
	Pinned bool
	// RuntimeHandler is the runtime handler of the image's spec (empty
	// unless the runtime pulls per runtime class).
	RuntimeHandler string
}

// Container is one container of GetPods(all=true), exited ones included.
type Container struct {
	// PodID and ID name the container for GetContainerStatus.
	PodID, ID string
	// ImageID is the image the container runs (kubecontainer's ImageID).
	ImageID string
	// ImageRuntimeHandler is the runtime handler of the container's image;
	// read only with Options.RuntimeClassInImageCriAPI.
	ImageRuntimeHandler string
	// MountedImageIDs are the images of its image-volume mounts as
	// GetContainerStatus reports them (mount.Image.Image); v1.36 counts an
	// entry as in use when it equals a listed image's ID.
	MountedImageIDs []string
	// StatusErr is GetContainerStatus's error for this container; it
	// aborts the detection as "get container status: %w".
	StatusErr error
}

// RuntimeView is what the runtime answered at one detection: the image
// list, the containers and each call's error. A listing error is returned
// before anything changes, as upstream.
type RuntimeView struct {
	Images        []Image
	ListImagesErr error
	// Containers are in the order GetPods returns pods and their
	// containers; GetContainerStatus is called in this order.
	Containers []Container
	GetPodsErr error
}

// FsStats is ImageFsStats' answer for the image filesystem. A value the
// runtime left unset is 0, as upstream reads a nil pointer.
type FsStats struct {
	CapacityBytes, AvailableBytes int64
}

// Validate checks the bounds and signs of the view.
func (v RuntimeView) Validate() error {
	if len(v.Images) > MaxImages {
		return inputErrorf("images", "%d images exceed the bound of %d", len(v.Images), MaxImages)
	}
	for i, img := range v.Images {
		if img.SizeBytes < 0 || img.SizeBytes > MaxImageSizeBytes {
			return inputErrorf(fieldIndex("images", i, "sizeBytes"), "%d must be between 0 and %d", img.SizeBytes, int64(MaxImageSizeBytes))
		}
	}
	if len(v.Containers) > MaxContainers {
		return inputErrorf("containers", "%d containers exceed the bound of %d", len(v.Containers), MaxContainers)
	}
	for i, c := range v.Containers {
		if len(c.MountedImageIDs) > MaxMountsPerContainer {
			return inputErrorf(fieldIndex("containers", i, "mountedImageIDs"), "%d mounts exceed the bound of %d", len(c.MountedImageIDs), MaxMountsPerContainer)
		}
	}
	return nil
}

// Validate checks that both values are between 0 and MaxFsBytes.
func (s FsStats) Validate() error {
	if s.CapacityBytes < 0 || s.CapacityBytes > MaxFsBytes {
		return inputErrorf("capacityBytes", "%d must be between 0 and %d", s.CapacityBytes, int64(MaxFsBytes))
	}
	if s.AvailableBytes < 0 || s.AvailableBytes > MaxFsBytes {
		return inputErrorf("availableBytes", "%d must be between 0 and %d", s.AvailableBytes, int64(MaxFsBytes))
	}
	return nil
}

func fieldIndex(list string, i int, field string) string {
	return list + "[" + itoa(i) + "]." + field
}
