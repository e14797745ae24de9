package cri

import (
	"context"

	"github.com/nodeproof/nodeproof/core/imagegc"
)

// GCRuntime is core/imagegc's Runtime over a Client: the reads of the
// kubelet's image GC (detectImages and ImageFsStats) and RemoveImage. The
// clock stays with the caller, who passes `now` to the Manager, so a test
// (or the CLI) decides every time a pass sees.
//
// Its methods run each RPC under Ctx and the client's timeout. A GCRuntime
// is used by one pass at a time, as the Manager is.
type GCRuntime struct {
	Client *Client
	// Ctx bounds every call of the passes this runtime serves; the
	// imagegc.Runtime interface has no context of its own.
	Ctx context.Context

	// listed is the last ListImages answer, for a caller that wants the
	// tags of the images a pass removed; fs the last ImageFsStats answer.
	listed []Image
	fs     FsStats
}

// NewGCRuntime returns a GCRuntime over client whose calls run under ctx.
func NewGCRuntime(ctx context.Context, client *Client) *GCRuntime {
	return &GCRuntime{Client: client, Ctx: ctx}
}

var _ imagegc.Runtime = (*GCRuntime)(nil)

// View lists what the kubelet's detectImages lists, in its order:
// ListImages, then GetPods(all=true), which for the kubelet's CRI runtime
// is ListPodSandbox and ListContainers with exited containers included,
// then ContainerStatus for each container (the image volumes v1.36 counts
// as in use). Each call's error goes into the view's field for it, so the
// Manager returns upstream's outcome of a failed listing; a failed
// ContainerStatus is that container's StatusErr, which aborts the
// detection as "get container status: %w".
//
// Pod sandboxes are listed only for their error: the kubelet's GetPods
// fails when ListPodSandbox does, but the sandboxes themselves use no image
// as image GC sees them (a sandbox is not one of a pod's containers), so
// the sandbox image is protected only by the runtime's pinned flag
// (#111796), which containerd 1.6 never sets.
//
// The containers come in ListContainers' order; upstream walks GetPods' map
// of pods, in an arbitrary order, which only decides which of several
// failing ContainerStatus calls names the error.
func (r *GCRuntime) View() imagegc.RuntimeView {
	var view imagegc.RuntimeView
	images, err := r.Client.ListImages(r.Ctx)
	r.listed = images
	if err != nil {
		view.ListImagesErr = err
		return view
	}
	view.Images = make([]imagegc.Image, 0, len(images))
	for _, img := range images {
		view.Images = append(view.Images, imagegc.Image{
			ID: img.ID, SizeBytes: img.SizeBytes, Pinned: img.Pinned, RuntimeHandler: img.RuntimeHandler,
		})
	}
	if _, err := r.Client.ListPodSandbox(r.Ctx); err != nil {
		view.GetPodsErr = err
		return view
	}
	containers, err := r.Client.ListContainers(r.Ctx)
	if err != nil {
		view.GetPodsErr = err
		return view
	}
	view.Containers = make([]imagegc.Container, 0, len(containers))
	for _, c := range containers {
		mounts, statusErr := r.Client.ImageMounts(r.Ctx, c.ID)
		view.Containers = append(view.Containers, imagegc.Container{
			PodID: c.PodSandboxID, ID: c.ID, ImageID: c.ImageID, ImageRuntimeHandler: c.ImageRuntimeHandler,
			MountedImageIDs: mounts, StatusErr: statusErr,
		})
		if statusErr != nil {
			// Upstream stops at the first failure; the rest would not be read.
			break
		}
	}
	return view
}

// Listed returns the images of the last View's ListImages, with their
// tags; nil before the first View or after a failed listing.
func (r *GCRuntime) Listed() []Image { return r.listed }

// Filesystem returns the last ImageFsStats answer in full (mountpoint and
// the runtime's used bytes included); zero before the first.
func (r *GCRuntime) Filesystem() FsStats { return r.fs }

// RemoveImage removes the image by ID. The runtime handler is not sent:
// CRI's RemoveImage names the image, and containerd keys images by ID.
func (r *GCRuntime) RemoveImage(imageID, _ string) error {
	return r.Client.RemoveImage(r.Ctx, imageID)
}

// ImageFsStats is the image filesystem's capacity and available bytes as
// the kubelet's stats provider reads them: statfs on the mountpoint the
// runtime's ImageFsInfo names.
func (r *GCRuntime) ImageFsStats() (imagegc.FsStats, error) {
	fs, err := r.Client.ImageFsStats(r.Ctx)
	r.fs = fs
	if err != nil {
		return imagegc.FsStats{}, err
	}
	return imagegc.FsStats{CapacityBytes: fs.CapacityBytes, AvailableBytes: fs.AvailableBytes}, nil
}
