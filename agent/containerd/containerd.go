package containerd

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/nodeproof/nodeproof/agent/cri"
)

// Bounds of the harness's waits. Each ends as soon as its condition holds;
// the bound only turns a hang into a failure that says what hung.
const (
	readyLimit  = 30 * time.Second // containerd answering CRI Version
	stopLimit   = 15 * time.Second // containerd exiting after SIGTERM
	importLimit = 2 * time.Minute  // one ctr images import
	rpcTimeout  = 30 * time.Second // every CRI call the harness makes
	pollEvery   = 50 * time.Millisecond
)

// DefaultFsSizeBytes is the tmpfs size when Options leave it zero.
const DefaultFsSizeBytes = 256 << 20

// BinaryEnv names the environment variable that points the tests at another
// containerd binary than the one in PATH: `make containerd-pinned` runs
// them against a containerd 1.7 built from source, which pins its sandbox
// image, where Debian's 1.6 never does. Its shim, ctr and runc stay
// Debian's.
const BinaryEnv = "NODEPROOF_CONTAINERD"

// Binary is the containerd Start runs: $NODEPROOF_CONTAINERD, else
// containerd from PATH.
func Binary() string {
	if b := os.Getenv(BinaryEnv); b != "" {
		return b
	}
	return "containerd"
}

// SandboxImageName is the pause image containerd's config names; Start
// imports it, built from busybox-static, so no sandbox pulls anything.
const SandboxImageName = "nodeproof.test/pause:1"

// Options configure a containerd. The zero value is a 256 MiB image
// filesystem on overlayfs under a cgroup parent of its own.
type Options struct {
	// FsSizeBytes is the size of the tmpfs holding containerd's root (its
	// content store, snapshots and metadata); the kernel rounds it up to
	// whole pages. Zero means DefaultFsSizeBytes.
	FsSizeBytes int64
	// Snapshotter is "overlayfs" (the default) or "native".
	Snapshotter string
	// CgroupParent is the cgroup under which the pods of this containerd
	// live, an absolute cgroup path that must not exist yet (Stop removes
	// it, in every hierarchy). Empty means /nodeproof-test-<random>. A
	// kubelet on this containerd uses it as its cgroupRoot.
	CgroupParent string
}

// Containerd is one running containerd.
type Containerd struct {
	// Dir holds everything: config, state, runc's root, the socket, the
	// log, and Root's mountpoint.
	Dir string
	// Socket is containerd's gRPC (and so CRI) socket.
	Socket string
	// Root is containerd's root, a tmpfs of Options.FsSizeBytes.
	Root string
	// CgroupParent is the cgroup parent sandboxes of this containerd must
	// use (a path of its own, never the host's kubepods); Stop removes it.
	CgroupParent string
	// Snapshotter is the snapshotter the CRI plugin and imports use.
	Snapshotter string
	// CRI is a client on Socket.
	CRI *cri.Client

	// shimSocketsBefore are the entries of shimSocketDir before Start; nil
	// when the directory did not exist.
	shimSocketsBefore []string
	// sandboxIDs are the sandboxes the teardown found, whose shims'
	// sockets are this containerd's (ShimSocket).
	sandboxIDs []string
	cmd        *exec.Cmd
	exited     chan struct{} // closed when the containerd process has been reaped
	log        string
}

// Unavailable says why this host cannot run a containerd (not root;
// containerd, ctr, runc or busybox-static not installed), or "" when it
// can. Tests skip with the reason.
func Unavailable() string {
	if os.Geteuid() != 0 {
		return "not root: containerd and its tmpfs need root"
	}
	for _, bin := range []string{Binary(), "ctr", "containerd-shim-runc-v2", "runc"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Sprintf("containerd not installed: %s not in PATH (Debian packages containerd and runc)", bin)
		}
	}
	if _, err := os.Stat(BusyboxPath); err != nil {
		return fmt.Sprintf("busybox-static not installed: %v", err)
	}
	return ""
}

// Start starts a containerd. It returns once the CRI socket answers Version
// and the sandbox image is imported. The caller must Stop it; a failed
// Start stops what it started itself.
func Start(opts Options) (*Containerd, error) {
	if why := Unavailable(); why != "" {
		return nil, errors.New("containerd: " + why)
	}
	if opts.FsSizeBytes == 0 {
		opts.FsSizeBytes = DefaultFsSizeBytes
	}
	if opts.FsSizeBytes < 0 {
		return nil, fmt.Errorf("containerd: Options.FsSizeBytes %d must not be negative", opts.FsSizeBytes)
	}
	switch opts.Snapshotter {
	case "":
		opts.Snapshotter = "overlayfs"
	case "overlayfs", "native":
	default:
		return nil, fmt.Errorf("containerd: Options.Snapshotter %q must be overlayfs or native", opts.Snapshotter)
	}
	if opts.CgroupParent == "" {
		opts.CgroupParent = "/nodeproof-test-" + strings.ToLower(rand.Text()[:12])
	}
	if !filepath.IsAbs(opts.CgroupParent) || filepath.Clean(opts.CgroupParent) != opts.CgroupParent || opts.CgroupParent == "/" {
		return nil, fmt.Errorf("containerd: Options.CgroupParent %q must be a clean absolute path below /", opts.CgroupParent)
	}

	// A short directory: the socket's path must fit in 107 bytes.
	dir, err := os.MkdirTemp("", "npctrd")
	if err != nil {
		return nil, err
	}
	c := &Containerd{
		Dir:               dir,
		Socket:            filepath.Join(dir, "containerd.sock"),
		Root:              filepath.Join(dir, "root"),
		CgroupParent:      opts.CgroupParent,
		Snapshotter:       opts.Snapshotter,
		exited:            make(chan struct{}),
		log:               filepath.Join(dir, "containerd.log"),
		shimSocketsBefore: listDir(shimSocketDir),
	}
	if err := c.start(opts); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

func (c *Containerd) start(opts Options) error {
	if err := os.Mkdir(c.Root, 0o700); err != nil {
		return err
	}
	if err := mountTmpfs(c.Root, opts.FsSizeBytes); err != nil {
		return fmt.Errorf("containerd: mounting a %d-byte tmpfs on %s: %w", opts.FsSizeBytes, c.Root, err)
	}
	config := filepath.Join(c.Dir, "config.toml")
	if err := c.writeConfig(config); err != nil {
		return err
	}
	logFile, err := os.Create(c.log)
	if err != nil {
		return err
	}
	c.cmd = exec.Command(Binary(), "--config", config)
	c.cmd.Stdout, c.cmd.Stderr = logFile, logFile
	if err := c.cmd.Start(); err != nil {
		logFile.Close()
		c.cmd = nil
		return fmt.Errorf("containerd: starting containerd: %w", err)
	}
	go func() {
		c.cmd.Wait()
		logFile.Close()
		close(c.exited)
	}()
	c.CRI, err = cri.New(cri.Options{Socket: c.Socket, Timeout: rpcTimeout})
	if err != nil {
		return err
	}
	if err := c.waitReady(); err != nil {
		return fmt.Errorf("containerd: %w\n%s", err, c.LogTail())
	}
	sandbox, err := SandboxImage()
	if err != nil {
		return err
	}
	return c.Import(sandbox)
}

// SandboxImage is the pause image: busybox sleeping for as long as a sleep
// can. containerd kills sandbox containers with SIGKILL, so it needs no
// signal handling.
func SandboxImage() (Image, error) {
	bb, err := BusyboxLayer()
	if err != nil {
		return Image{}, err
	}
	return Image{Name: SandboxImageName, Layers: []Layer{bb}, Cmd: []string{"/bin/sleep", "2147483647"}}, nil
}

var configTemplate = template.Must(template.New("config").Parse(`# containerd of one nodeproof test; nothing here is the host's.
version = 2
root = "{{.Root}}"
state = "{{.Dir}}/state"
# Snapshotters that cannot work here only log errors at start.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "{{.Socket}}"
[ttrpc]
  address = "{{.Dir}}/ttrpc.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "{{.Dir}}/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{{.SandboxImage}}"
  # ImageFsInfo's used bytes are refreshed this often (seconds).
  stats_collect_period = 1
  netns_mounts_under_state_dir = true
  # The sandbox's oom_score_adj is -998; lowering it needs CAP_SYS_RESOURCE,
  # which a test host in a container may lack. This keeps it no lower than
  # containerd's own.
  restrict_oom_score_adj = true
  disable_tcp_service = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{{.Dir}}/cni/bin"
    conf_dir = "{{.Dir}}/cni/conf"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "{{.Snapshotter}}"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "{{.Dir}}/runc"
`))

func (c *Containerd) writeConfig(path string) error {
	var buf bytes.Buffer
	if err := configTemplate.Execute(&buf, struct {
		Dir, Root, Socket, SandboxImage, Snapshotter string
	}{c.Dir, c.Root, c.Socket, SandboxImageName, c.Snapshotter}); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o600)
}

// waitReady polls CRI Version until it answers, containerd exits, or
// readyLimit passes.
func (c *Containerd) waitReady() error {
	ctx, cancel := context.WithTimeout(context.Background(), readyLimit)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	var last error
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, time.Second)
		_, err := c.CRI.Version(attempt)
		cancelAttempt()
		if err == nil {
			return nil
		}
		last = err
		select {
		case <-c.exited:
			return fmt.Errorf("containerd exited before serving CRI: %v", c.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("containerd not serving CRI on %s after %v: %v", c.Socket, readyLimit, last)
		case <-tick.C:
		}
	}
}

// ImageIDs lists the IDs of the images the runtime holds now, through CRI.
func (c *Containerd) ImageIDs(ctx context.Context) ([]string, error) {
	images, err := c.CRI.ListImages(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(images))
	for _, img := range images {
		ids = append(ids, img.ID)
	}
	return ids, nil
}

// Import builds images into one OCI archive and imports it with ctr into
// the k8s.io namespace, unpacked for the CRI plugin's snapshotter.
func (c *Containerd) Import(images ...Image) error {
	f, err := os.CreateTemp(c.Dir, "import-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := WriteArchive(f, images...); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), importLimit)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ctr", "-n", "k8s.io", "--address", c.Socket,
		"images", "import", "--snapshotter", c.Snapshotter, f.Name()).CombinedOutput()
	if err != nil {
		return fmt.Errorf("containerd: ctr images import: %w\n%s", err, out)
	}
	return nil
}

// LogTail is the end of containerd's log, for failure messages.
func (c *Containerd) LogTail() string {
	data, err := os.ReadFile(c.log)
	if err != nil {
		return "(no containerd log: " + err.Error() + ")"
	}
	const keep = 4000
	if len(data) > keep {
		data = data[len(data)-keep:]
	}
	return "containerd log (tail):\n" + string(data)
}

// errExited says containerd is gone, so the CRI teardown is skipped.
var errExited = errors.New("containerd exited")

// FillTo writes a filler file into containerd's root so that the image
// filesystem's usage, as the kubelet computes it from statfs
// (100 - available*100/capacity), is percent. Available sits half a percent
// inside the band, away from both edges, so containerd's own metadata
// writes do not move it out. A later call grows or shrinks the same file.
func (c *Containerd) FillTo(percent int64) error {
	path := filepath.Join(c.Root, "nodeproof-filler")
	var current int64
	if st, err := os.Stat(path); err == nil {
		current = st.Size()
	}
	capacity, available, err := cri.Statfs(c.Root)
	if err != nil {
		return err
	}
	target := capacity*(100-percent)/100 + capacity/200
	size := (current + available - target) / 4096 * 4096
	if size < 0 {
		return fmt.Errorf("containerd: FillTo(%d): the images alone use more", percent)
	}
	if err := os.WriteFile(path, make([]byte, size), 0o600); err != nil {
		return err
	}
	if _, available, err = cri.Statfs(c.Root); err != nil {
		return err
	}
	if got := 100 - available*100/capacity; got != percent {
		return fmt.Errorf("containerd: FillTo(%d): usage is %d%%", percent, got)
	}
	return nil
}
