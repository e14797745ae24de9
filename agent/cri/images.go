package cri

import (
	"context"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Image is one image the runtime holds, as image GC sees it.
type Image struct {
	// ID is the runtime's identifier (for containerd the config digest,
	// "sha256:…"); never empty.
	ID string
	// RepoTags and RepoDigests are the names it is known by; either may be
	// empty (an image known only by ID).
	RepoTags, RepoDigests []string
	// SizeBytes is the size the runtime reports. For containerd it is the
	// sum of the image's blobs, not the space removing it frees: shared
	// layers and unpacked snapshots make the two differ (#68203).
	SizeBytes int64
	// Pinned images are never removed by image GC (the CRI pinned flag).
	Pinned bool
	// RuntimeHandler is the handler the image was pulled for (the image
	// spec's runtime_handler); empty for the default.
	RuntimeHandler string
}

// ListImages returns every image the runtime holds, in the runtime's order.
func (c *Client) ListImages(ctx context.Context) ([]Image, error) {
	const rpc = "ListImages"
	resp, err := call(ctx, c, rpc, c.images.ListImages, &runtimeapi.ListImagesRequest{})
	if err != nil {
		return nil, err
	}
	return FromListImages(resp)
}

// FromListImages checks a ListImages answer and returns its images: every
// ID set and unique, sizes within MaxSizeBytes, no empty name, lists within
// MaxItems. A bad answer gets a *ResponseError naming the field.
func FromListImages(resp *runtimeapi.ListImagesResponse) ([]Image, error) {
	const rpc = "ListImages"
	if err := checkCount(rpc, "images", len(resp.GetImages())); err != nil {
		return nil, err
	}
	out := make([]Image, 0, len(resp.GetImages()))
	seen := make(map[string]int, len(resp.GetImages()))
	for i, img := range resp.GetImages() {
		field := fmt.Sprintf("images[%d]", i)
		im, err := toImage(rpc, field, img)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[im.ID]; dup {
			return nil, &ResponseError{RPC: rpc, Field: field + ".id", Value: im.ID,
				Rule: fmt.Sprintf("must be unique (images[%d] has it too)", j)}
		}
		seen[im.ID] = i
		out = append(out, im)
	}
	return out, nil
}

// ImageStatus looks an image up by ID or name. found is false (and err nil)
// when the runtime does not hold it, as CRI answers with a nil image.
func (c *Client) ImageStatus(ctx context.Context, ref string) (img Image, found bool, err error) {
	const rpc = "ImageStatus"
	if ref == "" {
		return Image{}, false, &InputError{Field: "ref", Value: ref, Rule: "must not be empty"}
	}
	resp, err := call(ctx, c, rpc, c.images.ImageStatus, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
	if err != nil {
		return Image{}, false, err
	}
	if resp.GetImage() == nil {
		return Image{}, false, nil
	}
	img, err = toImage(rpc, "image", resp.GetImage())
	if err != nil {
		return Image{}, false, err
	}
	return img, true, nil
}

// RemoveImage removes an image by ID. Removing an image the runtime does
// not hold succeeds, as CRI requires.
func (c *Client) RemoveImage(ctx context.Context, id string) error {
	if id == "" {
		return &InputError{Field: "id", Value: id, Rule: "must not be empty"}
	}
	_, err := call(ctx, c, "RemoveImage", c.images.RemoveImage, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: id}})
	return err
}

func toImage(rpc, field string, img *runtimeapi.Image) (Image, error) {
	if img.GetId() == "" {
		return Image{}, &ResponseError{RPC: rpc, Field: field + ".id", Rule: "must not be empty"}
	}
	if img.GetSize() > MaxSizeBytes {
		return Image{}, &ResponseError{RPC: rpc, Field: field + ".size", Value: fmt.Sprint(img.GetSize()),
			Rule: fmt.Sprintf("must be at most %d bytes (1 PiB)", int64(MaxSizeBytes))}
	}
	if err := checkNames(rpc, field+".repo_tags", img.GetRepoTags()); err != nil {
		return Image{}, err
	}
	if err := checkNames(rpc, field+".repo_digests", img.GetRepoDigests()); err != nil {
		return Image{}, err
	}
	return Image{
		ID:             img.GetId(),
		RepoTags:       img.GetRepoTags(),
		RepoDigests:    img.GetRepoDigests(),
		SizeBytes:      int64(img.GetSize()),
		Pinned:         img.GetPinned(),
		RuntimeHandler: img.GetSpec().GetRuntimeHandler(),
	}, nil
}

func checkNames(rpc, field string, names []string) error {
	if err := checkCount(rpc, field, len(names)); err != nil {
		return err
	}
	for i, n := range names {
		if n == "" {
			return &ResponseError{RPC: rpc, Field: fmt.Sprintf("%s[%d]", field, i), Rule: "must not be empty"}
		}
	}
	return nil
}

func checkCount(rpc, field string, n int) error {
	if n > MaxItems {
		return &ResponseError{RPC: rpc, Field: field, Value: fmt.Sprint(n),
			Rule: fmt.Sprintf("must hold at most %d items", MaxItems)}
	}
	return nil
}
