package cri

import (
	"context"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Filesystem is one image filesystem as the runtime reports it.
type Filesystem struct {
	// Mountpoint is the directory the runtime stores images under (for
	// containerd its snapshotter's root); absolute.
	Mountpoint string
	// UsedBytes is what the runtime counts as its images' usage. containerd
	// refreshes it periodically (stats_collect_period), so it lags.
	UsedBytes  int64
	InodesUsed int64
}

// ImageFsInfo returns the runtime's image filesystems (at least one).
func (c *Client) ImageFsInfo(ctx context.Context) ([]Filesystem, error) {
	const rpc = "ImageFsInfo"
	resp, err := call(ctx, c, rpc, c.images.ImageFsInfo, &runtimeapi.ImageFsInfoRequest{})
	if err != nil {
		return nil, err
	}
	return FromImageFsInfo(resp)
}

// FromImageFsInfo checks an ImageFsInfo answer and returns its image
// filesystems: at least one, absolute mountpoints, used bytes set and
// within MaxSizeBytes.
func FromImageFsInfo(resp *runtimeapi.ImageFsInfoResponse) ([]Filesystem, error) {
	const rpc = "ImageFsInfo"
	fss := resp.GetImageFilesystems()
	if len(fss) == 0 {
		return nil, &ResponseError{RPC: rpc, Field: "image_filesystems", Rule: "must not be empty"}
	}
	if err := checkCount(rpc, "image_filesystems", len(fss)); err != nil {
		return nil, err
	}
	out := make([]Filesystem, 0, len(fss))
	for i, fs := range fss {
		field := fmt.Sprintf("image_filesystems[%d]", i)
		mp := fs.GetFsId().GetMountpoint()
		if !filepath.IsAbs(mp) {
			return nil, &ResponseError{RPC: rpc, Field: field + ".fs_id.mountpoint", Value: mp, Rule: "must be an absolute path"}
		}
		if fs.GetUsedBytes() == nil {
			return nil, &ResponseError{RPC: rpc, Field: field + ".used_bytes", Rule: "must be set"}
		}
		used := fs.GetUsedBytes().GetValue()
		if used > MaxSizeBytes {
			return nil, &ResponseError{RPC: rpc, Field: field + ".used_bytes", Value: fmt.Sprint(used),
				Rule: fmt.Sprintf("must be at most %d bytes (1 PiB)", int64(MaxSizeBytes))}
		}
		inodes := fs.GetInodesUsed().GetValue()
		if inodes > MaxSizeBytes {
			return nil, &ResponseError{RPC: rpc, Field: field + ".inodes_used", Value: fmt.Sprint(inodes),
				Rule: fmt.Sprintf("must be at most %d", int64(MaxSizeBytes))}
		}
		out = append(out, Filesystem{Mountpoint: mp, UsedBytes: int64(used), InodesUsed: int64(inodes)})
	}
	return out, nil
}

// FsStats is the image filesystem as the kubelet's image GC reads it: the
// capacity and available bytes are the kernel's (statfs), the used bytes the
// runtime's.
type FsStats struct {
	Mountpoint     string
	CapacityBytes  int64 // statfs: blocks × block size
	AvailableBytes int64 // statfs: blocks available to unprivileged users × block size, as cAdvisor reads it
	UsedBytes      int64 // the runtime's ImageFsInfo
}

// ImageFsStats is ImageFsInfo's first filesystem with statfs on its
// mountpoint, what the kubelet's stats provider gives image GC.
func (c *Client) ImageFsStats(ctx context.Context) (FsStats, error) {
	fss, err := c.ImageFsInfo(ctx)
	if err != nil {
		return FsStats{}, err
	}
	fs := fss[0]
	capacity, available, err := Statfs(fs.Mountpoint)
	if err != nil {
		return FsStats{}, err
	}
	return FsStats{Mountpoint: fs.Mountpoint, CapacityBytes: capacity, AvailableBytes: available, UsedBytes: fs.UsedBytes}, nil
}

// Statfs returns the capacity and the bytes available to unprivileged users
// of the filesystem holding path.
func Statfs(path string) (capacityBytes, availableBytes int64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, 0, fmt.Errorf("cri: statfs %s: %w", path, err)
	}
	return int64(st.Blocks) * st.Bsize, int64(st.Bavail) * st.Bsize, nil
}
