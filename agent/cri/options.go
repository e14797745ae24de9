package cri

import (
	"fmt"
	"path/filepath"
	"time"
)

// DefaultTimeout is the kubelet's default --runtime-request-timeout.
const DefaultTimeout = 2 * time.Minute

// MaxItems bounds every list the runtime returns (images, containers,
// sandboxes, filesystems, tags). A node with more is refused with a
// *ResponseError rather than half read. The gRPC message limit (16 MiB, as
// the kubelet's) bounds the bytes; this bounds the count.
const MaxItems = 1 << 16

// MaxSizeBytes is the largest image or filesystem size accepted: 1 PiB.
// CRI sizes are unsigned; anything above this is a runtime's bug (an
// underflow, a negative number sent as unsigned), not a disk.
const MaxSizeBytes = 1 << 50

// maxMessageBytes is the largest answer accepted, the kubelet's limit.
const maxMessageBytes = 16 << 20

// Options configure a Client. Only Socket is required.
type Options struct {
	// Socket is the absolute path of the runtime's CRI Unix socket, such as
	// /run/containerd/containerd.sock.
	Socket string
	// Timeout bounds every RPC, from the call to the answer. Zero means
	// DefaultTimeout; negative is an error.
	Timeout time.Duration
}

func (o Options) resolve() (Options, error) {
	if o.Socket == "" || !filepath.IsAbs(o.Socket) {
		return o, &InputError{Field: "Options.Socket", Value: o.Socket, Rule: "must be an absolute path"}
	}
	switch {
	case o.Timeout < 0:
		return o, &InputError{Field: "Options.Timeout", Value: fmt.Sprint(o.Timeout), Rule: "must not be negative"}
	case o.Timeout == 0:
		o.Timeout = DefaultTimeout
	}
	return o, nil
}
