package containerdtest

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/nodeproof/nodeproof/agent/containerd"
)

// The names the tests use, from agent/containerd.
type (
	Options = containerd.Options
	Image   = containerd.Image
	Layer   = containerd.Layer
	Pod     = containerd.Pod
)

const (
	SandboxImageName   = containerd.SandboxImageName
	BusyboxPath        = containerd.BusyboxPath
	DefaultFsSizeBytes = containerd.DefaultFsSizeBytes
)

var (
	BusyboxLayer = containerd.BusyboxLayer
	DataLayer    = containerd.DataLayer
	SandboxImage = containerd.SandboxImage
)

// Containerd is one running containerd of a test.
type Containerd struct {
	*containerd.Containerd
	t testing.TB
}

// Start starts a containerd for t, or skips t with the reason the host
// cannot run one. It returns once the CRI socket answers Version and the
// sandbox image is imported. Cleanup stops and removes everything, and
// fails t if anything is left.
func Start(t testing.TB, opts Options) *Containerd {
	t.Helper()
	if why := containerd.Unavailable(); why != "" {
		t.Skip(why)
	}
	// The goroutine check is registered first, so that it runs last,
	// after the teardown.
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
	c, err := containerd.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(c.LogTail())
		}
		if err := c.Stop(); err != nil {
			t.Errorf("containerdtest teardown: %v", err)
		}
	})
	return &Containerd{Containerd: c, t: t}
}

// ImageIDs lists the IDs of the images the runtime holds now, through CRI;
// it fails the test when the runtime cannot say.
func (c *Containerd) ImageIDs() []string {
	c.t.Helper()
	ids, err := c.Containerd.ImageIDs(context.Background())
	if err != nil {
		c.t.Fatal(err)
	}
	return ids
}

// Import builds images and imports them (agent/containerd's Import),
// failing the test on an error.
func (c *Containerd) Import(images ...Image) {
	c.t.Helper()
	if err := c.Containerd.Import(images...); err != nil {
		c.t.Fatal(err)
	}
}

// ImportErr is Import returning the error, for a test that expects one (an
// image filesystem too small for the images).
func (c *Containerd) ImportErr(images ...Image) error {
	return c.Containerd.Import(images...)
}
