package realkubelet

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nodeproof/nodeproof/agent/containerd"
)

// Bounds of the harness's waits. Each wait ends as soon as its condition
// holds; the bound only turns a hang into an error that says what hung.
const (
	readyLimit = 60 * time.Second // kubelet started to healthz and PodResources
	stopLimit  = 15 * time.Second // a killed kubelet reaped
	pollEvery  = 50 * time.Millisecond
)

// NodeName is the node's name (the kubelet's --hostname-override): static
// pods are named <name>-<NodeName>.
const NodeName = "nodeproof"

// BusyboxImageName is an image every node holds from the start: busybox,
// with sh as its command. Test pods use it with a command of their own.
const BusyboxImageName = "nodeproof.test/busybox:1"

// Options configure a node. The zero value is a node on the cached kubelet
// binary (built first if there is none) with a 256 MiB image filesystem.
type Options struct {
	// Kubelet is the kubelet binary; empty means Binary's.
	Kubelet string
	// ImageFsSizeBytes is the size of containerd's root, a tmpfs; zero
	// means agent/containerd's default.
	ImageFsSizeBytes int64
	// Images are imported into containerd before the kubelet starts,
	// besides the sandbox image and BusyboxImageName.
	Images []containerd.Image
}

// Node is a running kubelet and its containerd. Its methods are not safe
// for concurrent use.
type Node struct {
	// Dir is the node's private directory: everything it writes is below.
	Dir string
	// RootDir is the kubelet's --root-dir (pods, plugins, pod-resources).
	RootDir string
	// ManifestDir is the kubelet's staticPodPath.
	ManifestDir string
	// DevicePluginDir is, on the host, the directory the kubelet sees as
	// DevicePluginPath: kubelet.sock, the plugins' sockets and the device
	// manager's checkpoint are here.
	DevicePluginDir string
	// PodLogsDir holds the containers' logs.
	PodLogsDir string
	// VolumePluginDir is the kubelet's flexvolume directory, empty.
	VolumePluginDir string
	// CgroupRoot is the kubelet's cgroupRoot, present in every cgroup v1
	// hierarchy, and containerd's cgroup parent.
	CgroupRoot string
	// Containerd is the node's runtime; its CRI client observes what the
	// kubelet asked of it.
	Containerd *containerd.Containerd

	kubelet    string
	configPath string
	logPath    string
	proc       *process
	// The clients of healthz and the :10250 server; Stop closes their
	// idle connections.
	healthClient, serverClient *http.Client
}

// process is one run of the kubelet.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once reaped
}

// Start starts a node: containerd, the cgroupRoot, then the kubelet, and
// returns once the kubelet is ready (healthz answers, the PodResources API
// and the device plugin registration socket serve). The caller must Stop it; a failed Start stops what it
// started itself.
func Start(ctx context.Context, opts Options) (*Node, error) {
	if why := Unavailable(); why != "" {
		return nil, errors.New("realkubelet: " + why)
	}
	kubelet := opts.Kubelet
	if kubelet == "" {
		var err error
		if kubelet, err = Binary(ctx); err != nil {
			return nil, err
		}
	}
	for _, port := range []int{HealthzPort, ServerPort} {
		if listening(port) {
			return nil, fmt.Errorf("realkubelet: something already listens on 127.0.0.1:%d (another kubelet?)", port)
		}
	}
	dir, err := os.MkdirTemp("", "npnode")
	if err != nil {
		return nil, err
	}
	n := &Node{
		Dir:             dir,
		RootDir:         filepath.Join(dir, "root"),
		ManifestDir:     filepath.Join(dir, "manifests"),
		DevicePluginDir: filepath.Join(dir, "device-plugins"),
		PodLogsDir:      filepath.Join(dir, "pod-logs"),
		VolumePluginDir: filepath.Join(dir, "volume-plugins"),
		CgroupRoot:      "/nodeproof-kubelet-" + strings.ToLower(rand.Text()[:12]),
		kubelet:         kubelet,
		configPath:      filepath.Join(dir, "kubelet-config.yaml"),
		logPath:         filepath.Join(dir, "kubelet.log"),
		healthClient:    &http.Client{Transport: &http.Transport{}},
		serverClient:    newServerClient(),
	}
	if err := n.start(ctx, opts); err != nil {
		return nil, errors.Join(err, n.Stop())
	}
	return n, nil
}

// Unavailable says why this host cannot run a node (not root; no
// containerd, runc or busybox-static; not Linux with cgroup v1), or "" when
// it can. Tests skip with the reason.
func Unavailable() string {
	if why := containerd.Unavailable(); why != "" {
		return why
	}
	if mounts, err := cgroupV1Mounts(); err != nil || len(mounts) == 0 {
		return "no cgroup v1 hierarchy mounted: the harness runs the kubelet on cgroup v1"
	}
	if _, err := exec.LookPath("mount"); err != nil {
		return "mount (util-linux) not in PATH"
	}
	return ""
}

func (n *Node) start(ctx context.Context, opts Options) error {
	for _, d := range []string{n.RootDir, n.ManifestDir, n.DevicePluginDir, n.PodLogsDir, n.VolumePluginDir} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return err
		}
	}
	var err error
	n.Containerd, err = containerd.Start(containerd.Options{FsSizeBytes: opts.ImageFsSizeBytes, CgroupParent: n.CgroupRoot})
	if err != nil {
		return err
	}
	busybox, err := containerd.BusyboxLayer()
	if err != nil {
		return err
	}
	images := append([]containerd.Image{{Name: BusyboxImageName, Layers: []containerd.Layer{busybox}, Cmd: []string{"/bin/sh"}}}, opts.Images...)
	if err := n.Containerd.Import(images...); err != nil {
		return err
	}
	if err := makeCgroupRoot(n.CgroupRoot); err != nil {
		return err
	}
	if err := n.writeConfig(); err != nil {
		return err
	}
	return n.StartKubelet(ctx)
}

// StartKubelet starts the kubelet, when it is not running, and waits until
// it is ready and every resource in replugged lists devices again in
// GetAllocatableResources: after a restart, that the plugins of those
// resources registered again and sent their devices.
func (n *Node) StartKubelet(ctx context.Context, replugged ...string) error {
	if n.proc != nil {
		select {
		case <-n.proc.exited:
			// It died by itself; this is its next start.
			n.proc = nil
		default:
			return errors.New("realkubelet: the kubelet is running already")
		}
	}
	script, err := n.namespaceScript(n.kubelet, []string{
		"--config", n.configPath,
		"--root-dir", n.RootDir,
		"--cert-dir", filepath.Join(n.RootDir, "pki"),
		"--hostname-override", NodeName,
		"--v", "2",
	})
	if err != nil {
		return err
	}
	log, err := os.OpenFile(n.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("realkubelet: starting the kubelet: %w", err)
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	n.proc = p
	return n.waitReady(ctx, replugged)
}

// KillKubelet kills the kubelet with SIGKILL, as `kill -9` does, and waits
// until it is reaped. Its containers keep running; its mount namespace
// goes with it.
func (n *Node) KillKubelet() error {
	if n.proc == nil {
		return errors.New("realkubelet: the kubelet is not running")
	}
	p := n.proc
	n.proc = nil
	p.cmd.Process.Kill()
	select {
	case <-p.exited:
		return nil
	case <-time.After(stopLimit):
		return fmt.Errorf("realkubelet: kubelet %d not reaped %v after SIGKILL", p.cmd.Process.Pid, stopLimit)
	}
}

// RestartKubelet kills the kubelet with SIGKILL and starts it again,
// waiting as StartKubelet does.
func (n *Node) RestartKubelet(ctx context.Context, replugged ...string) error {
	if err := n.KillKubelet(); err != nil {
		return err
	}
	return n.StartKubelet(ctx, replugged...)
}

// waitReady polls, until readyLimit, for healthz to answer "ok", the
// device plugin registration socket and the PodResources API to serve, and
// each resource in replugged to list
// devices; it fails at once if the kubelet exits.
func (n *Node) waitReady(ctx context.Context, replugged []string) error {
	ctx, cancel := context.WithTimeout(ctx, readyLimit)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	var last error
	for {
		if last = n.ready(ctx, replugged); last == nil {
			return nil
		}
		select {
		case <-n.proc.exited:
			return fmt.Errorf("realkubelet: the kubelet exited before it was ready: %v\n%s", n.proc.cmd.ProcessState, n.LogTail())
		case <-ctx.Done():
			return fmt.Errorf("realkubelet: the kubelet not ready after %v: %v\n%s", readyLimit, last, n.LogTail())
		case <-tick.C:
		}
	}
}

func (n *Node) ready(ctx context.Context, replugged []string) error {
	if err := n.Healthz(ctx); err != nil {
		return err
	}
	// Plugins register through kubelet.sock, which the device manager
	// serves last of all.
	conn, err := net.DialTimeout("unix", filepath.Join(n.DevicePluginDir, "kubelet.sock"), rpcTimeout)
	if err != nil {
		return err
	}
	conn.Close()
	alloc, err := n.Allocatable(ctx)
	if err != nil {
		return err
	}
	for _, r := range replugged {
		if len(alloc[r]) == 0 {
			return fmt.Errorf("resource %s lists no devices (its plugin has not registered again)", r)
		}
	}
	return nil
}

// listening says whether something accepts connections on 127.0.0.1:port.
func listening(port int) bool {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// LogTail is the end of the kubelet's log (every run's, appended), for
// failure messages.
func (n *Node) LogTail() string {
	data, err := os.ReadFile(n.logPath)
	if err != nil {
		return "(no kubelet log: " + err.Error() + ")"
	}
	const keep = 6000
	if len(data) > keep {
		data = data[len(data)-keep:]
	}
	return "kubelet log (tail):\n" + string(data)
}

// Stop kills the kubelet, then stops containerd (which removes the pods'
// sandboxes and containers, its shims, mounts and the cgroupRoot in every
// hierarchy), then removes the node's directory. It goes on after an error
// and returns them all, with anything of the node still on the host.
func (n *Node) Stop() error {
	var errs []error
	if n.proc != nil {
		errs = append(errs, n.KillKubelet())
	}
	if n.Containerd != nil {
		errs = append(errs, n.Containerd.Stop())
	}
	n.healthClient.CloseIdleConnections()
	n.serverClient.CloseIdleConnections()
	if err := os.RemoveAll(n.Dir); err != nil {
		errs = append(errs, fmt.Errorf("realkubelet: removing %s: %w", n.Dir, err))
	}
	for _, left := range n.leftovers() {
		errs = append(errs, errors.New("realkubelet: left behind: "+left))
	}
	return errors.Join(errs...)
}
