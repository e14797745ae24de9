package integration

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	hostcg "github.com/containerd/cgroups/v3"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/nodeproof/nodeproof/agent/cgroupfs"
	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Controllers the tests need, by name.
const (
	cpuCtrl     = "cpu"
	memoryCtrl  = "memory"
	pidsCtrl    = "pids"
	hugetlbCtrl = "hugetlb"
)

// reporter is what the cgroup checks need of a *testing.T, a *testing.B or
// a *rapid.T. Errorf and FailNow make it a testify TestingT, so the checks
// can compare with require and assert.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	FailNow()
	Logf(format string, args ...any)
}

// cgroupMountDir is where the host's cgroup filesystems are mounted.
const cgroupMountDir = "/sys/fs/cgroup"

func u64(v uint64) *uint64 { return &v }
func i64(v int64) *int64   { return &v }

// newCgroupManager returns a manager on a root of the test's own, or skips
// the test with the reason the host cannot run it: not root, no cgroup
// filesystem, a needed controller missing, cgroupfs not writable. On
// cleanup it deletes the root and checks every controller mount for
// leftovers; the goroutine check runs after that.
func newCgroupManager(t testing.TB, need ...string) *cgroupfs.Manager {
	t.Helper()
	return newCgroupManagerWith(t, cgroupfs.Options{}, need...)
}

// newCgroupManagerWith is newCgroupManager with options other than the root
// and the logger, which it sets.
func newCgroupManagerWith(t testing.TB, opts cgroupfs.Options, need ...string) *cgroupfs.Manager {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: creating cgroups needs root")
	}
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
	root := "nodeproof-test-" + strings.ToLower(rand.Text()[:12])
	opts.Root = root
	opts.Logger = slog.New(slog.NewTextHandler(&logSink{t: t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	m, err := cgroupfs.New(opts)
	if err != nil {
		t.Skipf("no usable cgroup filesystem: %v", err)
	}
	for _, c := range need {
		if slices.Contains(m.Missing(), c) {
			t.Skipf("cgroup v%d without the %s controller", m.Version(), c)
		}
	}
	// A probe cgroup tells a read-only cgroupfs (a container without
	// privileges) from a failure of the manager.
	if err := m.Apply([]cgroups.Cgroup{{Path: "probe"}}); err != nil {
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, unix.EROFS) {
			t.Skipf("cgroupfs not writable: %v", err)
		}
		t.Fatalf("creating a probe cgroup: %v", err)
	}
	t.Cleanup(func() {
		assert.NoError(t, m.Delete(), "Delete")
		assertNoLeftovers(t, root)
	})
	require.NoError(t, m.Apply(nil), "removing the probe cgroup")
	// Tests start without even the root, so they can tell what they wrote.
	require.NoError(t, m.Delete(), "removing the probe's root")
	return m
}

// assertNoLeftovers looks for root under every cgroup mount of the host,
// whichever controllers the manager used.
func assertNoLeftovers(t testing.TB, root string) {
	t.Helper()
	candidates := []string{cgroupMountDir}
	entries, err := os.ReadDir(cgroupMountDir)
	require.NoError(t, err, "listing %s", cgroupMountDir)
	for _, e := range entries {
		candidates = append(candidates, filepath.Join(cgroupMountDir, e.Name()))
	}
	mounts := 0
	for _, dir := range candidates {
		var st unix.Statfs_t
		if unix.Statfs(dir, &st) != nil || (st.Type != unix.CGROUP_SUPER_MAGIC && st.Type != unix.CGROUP2_SUPER_MAGIC) {
			continue
		}
		mounts++
		_, err := os.Lstat(filepath.Join(dir, root))
		assert.True(t, errors.Is(err, fs.ErrNotExist), "cgroup %s left behind under %s (stat: %v)", root, dir, err)
	}
	assert.NotZero(t, mounts, "no cgroup mount found under %s to check for leftovers", cgroupMountDir)
}

// coreFiles is what core renders for each cgroup of h on version v
// (Hierarchy.Files): the writes Apply performs, which Verify reads back.
func coreFiles(t reporter, v cgroups.Version, h []cgroups.Cgroup) map[string][]cgroups.File {
	t.Helper()
	rendered, err := cgroups.Hierarchy(h).Files(v)
	require.NoError(t, err, "core refuses to render the hierarchy for v%d", v)
	out := make(map[string][]cgroups.File, len(rendered))
	for _, cf := range rendered {
		out[cf.Path] = cf.Files
	}
	return out
}

// checkApplied reads back every file want lists for each cgroup of h and
// fails the test on any difference from what the kernel should report. Files
// of controllers the host lacks may only be reported unsupported when the
// manager said they are missing. It returns how many files it compared.
func checkApplied(t reporter, m *cgroupfs.Manager, h []cgroups.Cgroup, want map[string][]cgroups.File) int {
	t.Helper()
	checked, unsupported := 0, 0
	for _, cg := range h {
		files, ok := want[cg.Path]
		if !ok {
			t.Errorf("%s: no expected files given", cg.Path)
			continue
		}
		err := m.Verify(cg.Path, files)
		var mismatch *cgroupfs.MismatchError
		var un *cgroupfs.UnsupportedError
		switch {
		case err == nil:
		case errors.As(err, &mismatch) || errors.As(err, &un):
			assert.Nil(t, mismatch)
			if un != nil {
				for _, c := range un.Controllers {
					assert.True(t, slices.Contains(m.Missing(), c), "%s: %s reported unsupported though the manager has it: %v", cg.Path, c, un)
				}
				unsupported += len(un.Files)
			}
		default:
			t.Errorf("%s: %v", cg.Path, err)
			continue
		}
		checked += len(files)
	}
	checked -= unsupported
	assert.NotZero(t, checked, "no file was compared (%d unsupported)", unsupported)
	if unsupported > 0 {
		t.Logf("%d files not checked: controllers %v are missing on this host", unsupported, m.Missing())
	}
	return checked
}

// realisticCase is one cgroup of a node with the kubelet's values and the
// files it writes on each version, typed out by hand from the spec in the
// order core renders them (only the order within a controller reaches the
// kernel as an order).
type realisticCase struct {
	cg     cgroups.Cgroup
	v1, v2 []cgroups.File
}

func files(kv ...string) []cgroups.File {
	var out []cgroups.File
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, cgroups.File{Name: kv[i], Value: kv[i+1]})
	}
	return out
}

// realisticNode is a 4-CPU node with 3800m and 7.5Gi allocatable, its QoS
// tiers and one pod of each shape the kubelet configures differently.
func realisticNode() []realisticCase {
	const unbounded = 1 << 62 // the QoS tiers' hugetlb limit
	hp := func(limit int64) map[int64]int64 { return map[int64]int64{2 << 20: limit} }
	return []realisticCase{
		{cgroups.Cgroup{Path: "kubepods", Config: cgroups.ResourceConfig{
			CPUShares: u64(3891), Memory: i64(8053063680), PidsLimit: i64(32768), HugePageLimit: hp(unbounded)}},
			files("cpu.shares", "3891", "memory.limit_in_bytes", "8053063680", "hugetlb.2MB.limit_in_bytes", "4611686018427387904",
				"pids.max", "32768"),
			files("cpu.weight", "149", "memory.max", "8053063680", "hugetlb.2MB.max", "4611686018427387904",
				"pids.max", "32768")},
		{cgroups.Cgroup{Path: "kubepods/burstable", Config: cgroups.ResourceConfig{
			CPUShares: u64(358), HugePageLimit: hp(unbounded)}},
			files("cpu.shares", "358", "hugetlb.2MB.limit_in_bytes", "4611686018427387904"),
			files("cpu.weight", "14", "hugetlb.2MB.max", "4611686018427387904")},
		{cgroups.Cgroup{Path: "kubepods/besteffort", Config: cgroups.ResourceConfig{
			CPUShares: u64(2), HugePageLimit: hp(unbounded)}},
			files("cpu.shares", "2", "hugetlb.2MB.limit_in_bytes", "4611686018427387904"),
			files("cpu.weight", "1", "hugetlb.2MB.max", "4611686018427387904")},
		// Guaranteed, 1 CPU and 512Mi.
		{cgroups.Cgroup{Path: "kubepods/pod6f1c9a52-0d4e-4b7a-9a57-3c2f0b8e1d01", Config: cgroups.ResourceConfig{
			CPUShares: u64(1024), CPUQuota: i64(100000), CPUPeriod: u64(100000), Memory: i64(536870912),
			PidsLimit: i64(1024), HugePageLimit: hp(0)}},
			files("cpu.shares", "1024", "cpu.cfs_period_us", "100000", "cpu.cfs_quota_us", "100000",
				"memory.limit_in_bytes", "536870912", "hugetlb.2MB.limit_in_bytes", "0", "pids.max", "1024"),
			files("cpu.weight", "39", "cpu.max", "100000 100000", "memory.max", "536870912", "hugetlb.2MB.max", "0",
				"pids.max", "1024")},
		// Guaranteed with cpuCFSQuota off: quota -1.
		{cgroups.Cgroup{Path: "kubepods/pod1b0e7c3d-5f2a-4c6e-8d9b-7a4f2e1c0b02", Config: cgroups.ResourceConfig{
			CPUShares: u64(2048), CPUQuota: i64(-1), CPUPeriod: u64(100000), Memory: i64(1 << 30)}},
			files("cpu.shares", "2048", "cpu.cfs_period_us", "100000", "cpu.cfs_quota_us", "-1",
				"memory.limit_in_bytes", "1073741824"),
			files("cpu.weight", "79", "cpu.max", "max 100000", "memory.max", "1073741824")},
		// Guaranteed 5m: shares 5, quota at the 1ms floor, a custom 50ms period.
		{cgroups.Cgroup{Path: "kubepods/pod9c3d2e1f-7a6b-4d5c-9e8f-0a1b2c3d4e03", Config: cgroups.ResourceConfig{
			CPUShares: u64(5), CPUQuota: i64(1000), CPUPeriod: u64(50000), Memory: i64(64 << 20)}},
			files("cpu.shares", "5", "cpu.cfs_period_us", "50000", "cpu.cfs_quota_us", "1000",
				"memory.limit_in_bytes", "67108864"),
			files("cpu.weight", "1", "cpu.max", "1000 50000", "memory.max", "67108864")},
		// Burstable 250m/500m with a 100M memory limit: the kernel keeps
		// whole pages, 99999744 bytes.
		{cgroups.Cgroup{Path: "kubepods/burstable/pod4e5f6a7b-8c9d-4e0f-a1b2-c3d4e5f6a704", Config: cgroups.ResourceConfig{
			CPUShares: u64(256), CPUQuota: i64(50000), CPUPeriod: u64(100000), Memory: i64(100000000),
			PidsLimit: i64(1024), HugePageLimit: hp(0)}},
			files("cpu.shares", "256", "cpu.cfs_period_us", "100000", "cpu.cfs_quota_us", "50000",
				"memory.limit_in_bytes", "100000000", "hugetlb.2MB.limit_in_bytes", "0", "pids.max", "1024"),
			files("cpu.weight", "10", "cpu.max", "50000 100000", "memory.max", "100000000", "hugetlb.2MB.max", "0",
				"pids.max", "1024")},
		// Burstable with requests only: shares, nothing else.
		{cgroups.Cgroup{Path: "kubepods/burstable/pod7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c05", Config: cgroups.ResourceConfig{
			CPUShares: u64(102), PidsLimit: i64(-1), HugePageLimit: hp(0)}},
			files("cpu.shares", "102", "hugetlb.2MB.limit_in_bytes", "0", "pids.max", "max"),
			files("cpu.weight", "4", "hugetlb.2MB.max", "0", "pids.max", "max")},
		{cgroups.Cgroup{Path: "kubepods/besteffort/pod0d1e2f3a-4b5c-4d6e-9f7a-8b9c0d1e2f06", Config: cgroups.ResourceConfig{
			CPUShares: u64(2), PidsLimit: i64(1024), HugePageLimit: hp(0)}},
			files("cpu.shares", "2", "hugetlb.2MB.limit_in_bytes", "0", "pids.max", "1024"),
			files("cpu.weight", "1", "hugetlb.2MB.max", "0", "pids.max", "1024")},
	}
}

// TestCgroupApplyRealisticNode applies a node's hierarchy and reads every
// value back, then reads a few files straight from the filesystem so that
// Verify is not the only judge.
func TestCgroupApplyRealisticNode(t *testing.T) {
	m := newCgroupManager(t, cpuCtrl, memoryCtrl, pidsCtrl)
	var h []cgroups.Cgroup
	want := map[string][]cgroups.File{}
	for _, c := range realisticNode() {
		h = append(h, c.cg)
		if m.Version() == cgroups.V1 {
			want[c.cg.Path] = c.v1
		} else {
			want[c.cg.Path] = c.v2
		}
	}
	// The table is typed out by hand from the spec; core must agree with it
	// before the filesystem is asked anything.
	for path, got := range coreFiles(t, m.Version(), h) {
		assert.True(t, slices.Equal(got, want[path]), "%s: core renders %v, the table says %v", path, got, want[path])
	}
	require.NoError(t, m.Apply(h), "Apply")
	t.Logf("compared %d files", checkApplied(t, m, h, want))

	burstable := "kubepods/burstable/pod4e5f6a7b-8c9d-4e0f-a1b2-c3d4e5f6a704"
	raw := map[string]string{"memory.limit_in_bytes": "99999744", "cpu.cfs_quota_us": "50000", "cpu.shares": "256"}
	if m.Version() == cgroups.V2 {
		raw = map[string]string{"memory.max": "99999744", "cpu.max": "50000 100000", "cpu.weight": "10"}
	}
	for file, value := range raw {
		ctrl, _, _ := strings.Cut(file, ".")
		dir := filepath.Join(cgroupMountDir, ctrl, m.Root(), burstable)
		if m.Version() == cgroups.V2 {
			dir = filepath.Join(m.RootDirs()[0], burstable)
		}
		b, err := os.ReadFile(filepath.Join(dir, file))
		require.NoError(t, err)
		assert.Equal(t, value, strings.TrimSpace(string(b)), "%s/%s", dir, file)
	}
}

// inode identifies a directory, so a test can tell an update in place from
// a cgroup removed and created again.
func inode(t reporter, dir string) uint64 {
	t.Helper()
	var st unix.Stat_t
	require.NoError(t, unix.Stat(dir, &st), "stat %s", dir)
	return st.Ino
}

func assertGone(t reporter, m *cgroupfs.Manager, path string) {
	t.Helper()
	dirs, err := m.Dirs(path)
	require.NoError(t, err)
	for _, d := range dirs {
		_, err := os.Lstat(d)
		assert.True(t, errors.Is(err, fs.ErrNotExist), "%s still exists after its pod went away (stat: %v)", d, err)
	}
}

// TestCgroupPodsComeAndGo updates a hierarchy in place as pods are added,
// resized and removed: cgroups that stay keep their directories, a removed
// pod's cgroup disappears from every controller, and a pod whose process
// still runs is kept until the process is gone.
func TestCgroupPodsComeAndGo(t *testing.T) {
	m := newCgroupManager(t, cpuCtrl, memoryCtrl, pidsCtrl)
	tiers := []cgroups.Cgroup{
		{Path: "kubepods", Config: cgroups.ResourceConfig{CPUShares: u64(2048)}},
		{Path: "kubepods/burstable", Config: cgroups.ResourceConfig{CPUShares: u64(512)}},
	}
	podA := cgroups.Cgroup{Path: "kubepods/burstable/poda", Config: cgroups.ResourceConfig{
		CPUShares: u64(256), Memory: i64(128 << 20)}}
	podB := cgroups.Cgroup{Path: "kubepods/burstable/podb", Config: cgroups.ResourceConfig{
		CPUShares: u64(256), CPUQuota: i64(20000), CPUPeriod: u64(100000)}}
	apply := func(h ...cgroups.Cgroup) {
		t.Helper()
		require.NoError(t, m.Apply(h), "Apply")
		checkApplied(t, m, h, coreFiles(t, m.Version(), h))
	}
	dirOf := func(path string) string {
		dirs, err := m.Dirs(path)
		require.NoError(t, err)
		return dirs[0]
	}

	apply(tiers[0], tiers[1], podA)
	inoA, inoTier := inode(t, dirOf(podA.Path)), inode(t, dirOf(tiers[1].Path))

	// A pod arrives; the burstable tier's shares grow with it.
	tiers[1].Config.CPUShares = u64(768)
	apply(tiers[0], tiers[1], podA, podB)
	assert.Equal(t, inoA, inode(t, dirOf(podA.Path)), "adding a pod recreated the cgroups that stayed")
	assert.Equal(t, inoTier, inode(t, dirOf(tiers[1].Path)), "adding a pod recreated the cgroups that stayed")

	// A pod is resized in place.
	podA.Config.Memory = i64(256 << 20)
	apply(tiers[0], tiers[1], podA, podB)
	assert.Equal(t, inoA, inode(t, dirOf(podA.Path)), "resizing a pod recreated its cgroup")

	// A pod goes away.
	apply(tiers[0], tiers[1], podB)
	assertGone(t, m, podA.Path)

	// A pod whose process still runs cannot go yet, nor can its tier: the
	// removal fails with one EBUSY naming the pod's cgroup, the tier stays
	// without an error of its own, and the next Apply after the process
	// ends removes both.
	c := startChild(t, childSpin)
	require.NoError(t, m.AddProc(podB.Path, c.pid()), "AddProc")
	err := m.Apply([]cgroups.Cgroup{tiers[0]})
	var fe *cgroupfs.FileError
	require.True(t, errors.As(err, &fe), "removing a cgroup with a process: got %v, want an rmdir EBUSY FileError for %s", err, podB.Path)
	require.Equal(t, "rmdir", fe.Op, "removing a cgroup with a process: got %v, want an rmdir EBUSY FileError for %s", err, podB.Path)
	require.Equal(t, podB.Path, fe.Path, "removing a cgroup with a process: got %v, want an rmdir EBUSY FileError for %s", err, podB.Path)
	require.True(t, errors.Is(err, unix.EBUSY), "removing a cgroup with a process: got %v, want an rmdir EBUSY FileError for %s", err, podB.Path)
	if joined, ok := err.(interface{ Unwrap() []error }); ok && len(joined.Unwrap()) != 1 {
		t.Errorf("got %d errors, want only the busy pod's: %v", len(joined.Unwrap()), err)
	}
	_, err = os.Stat(dirOf(tiers[1].Path))
	assert.NoError(t, err, "the busy pod's tier is gone")
	c.kill(t)
	require.NoError(t, m.Apply([]cgroups.Cgroup{tiers[0]}), "Apply after the process ended")
	assertGone(t, m, podB.Path)
	assertGone(t, m, tiers[1].Path)
}

// child is the test binary re-executed as a workload (see runChild). It
// starts blocked on its stdin so the test can place it in a cgroup before
// it does anything.
type child struct {
	cmd     *exec.Cmd
	release *os.File
	stderr  bytes.Buffer
	done    chan struct{}
	err     error // cmd.Wait's result, set before done closes
}

func startChild(t testing.TB, mode string) *child {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	c := &child{release: w, done: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0])
	c.cmd.Env = append(os.Environ(), childEnv+"="+mode)
	c.cmd.Stdin = r
	c.cmd.Stderr = &c.stderr
	if err := c.cmd.Start(); err != nil {
		r.Close()
		w.Close()
		t.Fatalf("starting the child: %v", err)
	}
	r.Close()
	go func() {
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	// Registered after the manager's cleanup, so it runs first: the cgroup
	// can be removed only once the child is gone.
	t.Cleanup(func() {
		w.Close()
		c.cmd.Process.Kill()
		<-c.done
	})
	return c
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// start lets the child run its workload.
func (c *child) start(t testing.TB) {
	t.Helper()
	_, err := c.release.Write([]byte{1})
	require.NoError(t, err, "releasing the child")
}

// wait waits for the child to end, at most waitLimit.
func (c *child) wait(t testing.TB) error {
	t.Helper()
	timer := time.NewTimer(waitLimit)
	defer timer.Stop()
	select {
	case <-c.done:
		return c.err
	case <-timer.C:
		// Its stderr can be read only once it has ended.
		c.cmd.Process.Kill()
		<-c.done
		t.Fatalf("the child did not end within %v; stderr: %s", waitLimit, c.stderr.String())
		return nil
	}
}

func (c *child) kill(t testing.TB) {
	t.Helper()
	c.cmd.Process.Kill()
	c.wait(t)
}

// killedBy reports whether a child ended by the given signal.
func killedBy(err error, sig syscall.Signal) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// readStat reads a flat keyed file (cpu.stat, memory.oom_control,
// memory.events) into a map.
func readStat(t testing.TB, m *cgroupfs.Manager, path, file string) map[string]int64 {
	t.Helper()
	v, err := m.Read(path, []string{file})
	require.NoError(t, err, "reading %s", file)
	out := map[string]int64{}
	for _, line := range strings.Split(v[file], "\n") {
		k, val, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(val, 10, 64)
		require.NoError(t, err, "%s: line %q", file, line)
		out[k] = n
	}
	return out
}

// TestCgroupMemoryLimitOOMKills places a process in a pod cgroup with a
// 64Mi limit and lets it allocate: the kernel must refuse the charges and
// OOM-kill it with SIGKILL, never letting its usage pass the limit.
func TestCgroupMemoryLimitOOMKills(t *testing.T) {
	m := newCgroupManager(t, cpuCtrl, memoryCtrl, pidsCtrl)
	const limit = 64 << 20
	// The kernel lets a task that is already being OOM-killed charge the
	// pages it faults on its way out (mm/memcontrol.c, the force path of
	// try_charge), so the peak may pass the limit by a few pages; the child
	// tries for 1Gi.
	const overshoot = 1 << 20
	pod := "kubepods/pod-oom"
	if err := m.Apply([]cgroups.Cgroup{
		{Path: "kubepods"},
		{Path: pod, Config: cgroups.ResourceConfig{CPUShares: u64(1024), Memory: i64(limit)}},
	}); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	c := startChild(t, childAllocate)
	require.NoError(t, m.AddProc(pod, c.pid()), "AddProc")
	c.start(t)
	err := c.wait(t)
	require.True(t, killedBy(err, syscall.SIGKILL), "the child ended with %v, want SIGKILL from the OOM killer; stderr: %s", err, c.stderr.String())

	if m.Version() == cgroups.V1 {
		v, err := m.Read(pod, []string{"memory.failcnt", "memory.max_usage_in_bytes"})
		require.NoError(t, err)
		failcnt, _ := strconv.ParseInt(v["memory.failcnt"], 10, 64)
		peak, _ := strconv.ParseInt(v["memory.max_usage_in_bytes"], 10, 64)
		oom := readStat(t, m, pod, "memory.oom_control")
		t.Logf("memory.failcnt=%d memory.max_usage_in_bytes=%d oom_kill=%d", failcnt, peak, oom["oom_kill"])
		assert.NotZero(t, failcnt, "memory.failcnt = 0: the limit never refused a charge")
		assert.GreaterOrEqual(t, oom["oom_kill"], int64(1), "memory.oom_control oom_kill")
		assert.LessOrEqual(t, peak, int64(limit+overshoot), "peak usage %d passed the limit %d by more than %d", peak, limit, overshoot)
	} else {
		events := readStat(t, m, pod, "memory.events")
		v, err := m.Read(pod, []string{"memory.peak"})
		require.NoError(t, err)
		peak, _ := strconv.ParseInt(v["memory.peak"], 10, 64)
		t.Logf("memory.events max=%d oom_kill=%d memory.peak=%d", events["max"], events["oom_kill"], peak)
		assert.NotZero(t, events["max"], "memory.events max=%d oom_kill=%d, want both > 0", events["max"], events["oom_kill"])
		assert.GreaterOrEqual(t, events["oom_kill"], int64(1), "memory.events max=%d oom_kill=%d, want both > 0", events["max"], events["oom_kill"])
		assert.LessOrEqual(t, peak, int64(limit+overshoot), "peak usage %d passed the limit %d by more than %d", peak, limit, overshoot)
	}
}

// TestCgroupCPUQuotaThrottles runs a busy loop in a pod cgroup allowed 10ms
// per 100ms: the scheduler must throttle it. The wait polls cpu.stat until
// it shows throttling and the time spent throttled, bounded by waitLimit:
// the kernel counts a throttle when it starts and adds its time only when
// the period refills, so the first throttle shows with a time of 0.
func TestCgroupCPUQuotaThrottles(t *testing.T) {
	m := newCgroupManager(t, cpuCtrl, memoryCtrl, pidsCtrl)
	pod := "kubepods/pod-throttle"
	if err := m.Apply([]cgroups.Cgroup{
		{Path: "kubepods"},
		{Path: pod, Config: cgroups.ResourceConfig{CPUShares: u64(102), CPUQuota: i64(10000), CPUPeriod: u64(100000)}},
	}); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	c := startChild(t, childSpin)
	require.NoError(t, m.AddProc(pod, c.pid()), "AddProc")
	c.start(t)

	throttledKey, timeKey := "nr_throttled", "throttled_time"
	if m.Version() == cgroups.V2 {
		timeKey = "throttled_usec"
	}
	deadline := time.Now().Add(waitLimit)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var stat map[string]int64
	for {
		stat = readStat(t, m, pod, "cpu.stat")
		if stat[throttledKey] > 0 && stat[timeKey] > 0 {
			break
		}
		require.False(t, time.Now().After(deadline), "no throttling (%s > 0 and %s > 0) within %v: cpu.stat %v", throttledKey, timeKey, waitLimit, stat)
		<-tick.C
	}
	c.kill(t)
	t.Logf("cpu.stat nr_periods=%d %s=%d %s=%d", stat["nr_periods"], throttledKey, stat[throttledKey], timeKey, stat[timeKey])
}

// TestCgroupDeleteLeavesNothing deletes a tree that also holds a cgroup an
// earlier run left behind, through a second manager on the same root (a
// restarted agent), and deletes again to show Delete is idempotent.
func TestCgroupDeleteLeavesNothing(t *testing.T) {
	m := newCgroupManager(t, cpuCtrl, memoryCtrl, pidsCtrl)
	var h []cgroups.Cgroup
	for _, c := range realisticNode() {
		h = append(h, c.cg)
	}
	require.NoError(t, m.Apply(h), "Apply")
	roots := m.RootDirs()
	leftover := filepath.Join(roots[0], "kubepods", "burstable", "pod-from-an-earlier-run", "container")
	require.NoError(t, os.MkdirAll(leftover, 0o755))
	restarted, err := cgroupfs.New(cgroupfs.Options{Root: m.Root(), Version: m.Version(),
		Logger: slog.New(slog.NewTextHandler(&logSink{t: t}, nil))})
	require.NoError(t, err)
	require.NoError(t, restarted.Delete(), "Delete")
	for _, d := range roots {
		_, err := os.Lstat(d)
		assert.True(t, errors.Is(err, fs.ErrNotExist), "%s still exists after Delete (stat: %v)", d, err)
	}
	assertNoLeftovers(t, m.Root())
	assert.NoError(t, restarted.Delete(), "second Delete")
	assert.NoError(t, m.Delete(), "Delete by the first manager after the tree is gone")
}

// TestCgroupBadInputWritesNothing gives Apply, Read and AddProc paths and
// configs that break a rule: each error names the field and the rule, and
// nothing reaches the filesystem.
func TestCgroupBadInputWritesNothing(t *testing.T) {
	m := newCgroupManager(t, cpuCtrl)
	ok := cgroups.Cgroup{Path: "kubepods"}
	cases := []struct {
		name      string
		h         []cgroups.Cgroup
		field     string
		ruleWords string
	}{
		{"empty path", []cgroups.Cgroup{ok, {Path: ""}}, "hierarchy[1].Path", "must not be empty"},
		{"absolute", []cgroups.Cgroup{{Path: "/kubepods"}}, "hierarchy[0].Path", "relative"},
		{"dot dot", []cgroups.Cgroup{ok, {Path: "kubepods/../../escape"}}, "hierarchy[1].Path", `".."`},
		{"dot", []cgroups.Cgroup{ok, {Path: "kubepods/./pod"}}, "hierarchy[1].Path", `"."`},
		{"double slash", []cgroups.Cgroup{ok, {Path: "kubepods//pod"}}, "hierarchy[1].Path", "empty elements"},
		{"trailing slash", []cgroups.Cgroup{ok, {Path: "kubepods/"}}, "hierarchy[1].Path", "empty elements"},
		{"duplicate", []cgroups.Cgroup{ok, ok}, "hierarchy[1].Path", "duplicate of hierarchy[0]"},
		{"child first", []cgroups.Cgroup{{Path: "kubepods/pod"}, ok}, "hierarchy[0].Path", "parent \"kubepods\" must come earlier"},
		{"memory", []cgroups.Cgroup{ok, {Path: "kubepods/pod", Config: cgroups.ResourceConfig{Memory: i64(-2)}}},
			"hierarchy[1].Config.memory", "-1 (unlimited)"},
		{"quota under 1ms", []cgroups.Cgroup{ok, {Path: "kubepods/pod", Config: cgroups.ResourceConfig{CPUQuota: i64(500), CPUPeriod: u64(100000)}}},
			"hierarchy[1].Config.cpuQuota", "at least 1000"},
		{"pids zero", []cgroups.Cgroup{{Path: "kubepods", Config: cgroups.ResourceConfig{PidsLimit: i64(0)}}},
			"hierarchy[0].Config.PidsLimit", "positive"},
		{"page size", []cgroups.Cgroup{{Path: "kubepods", Config: cgroups.ResourceConfig{HugePageLimit: map[int64]int64{3000: 0}}}},
			"hierarchy[0].Config.HugePageLimit[3000]", "power of two"},
		{"hugetlb limit", []cgroups.Cgroup{{Path: "kubepods", Config: cgroups.ResourceConfig{HugePageLimit: map[int64]int64{2 << 20: -1}}}},
			"hierarchy[0].Config.hugePageLimit[2MB]", "negative"},
		// v1 refuses every Unified file, v2 this name: either way the field
		// is the config's.
		{"unified file", []cgroups.Cgroup{{Path: "kubepods", Config: cgroups.ResourceConfig{Unified: map[string]string{"../memory.min": "1"}}}},
			"hierarchy[0].Config.", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := m.Apply(tc.h)
			var ie *cgroupfs.InputError
			require.True(t, errors.As(err, &ie), "Apply: got %v, want an *InputError", err)
			require.True(t, strings.HasPrefix(ie.Field, tc.field), "got field %q rule %q (%v); want field %q and a rule saying %q", ie.Field, ie.Rule, err, tc.field, tc.ruleWords)
			assert.Contains(t, ie.Rule, tc.ruleWords, "got field %q rule %q (%v); want field %q and a rule saying %q", ie.Field, ie.Rule, err, tc.field, tc.ruleWords)
			for _, d := range m.RootDirs() {
				_, err := os.Lstat(d)
				assert.True(t, errors.Is(err, fs.ErrNotExist), "bad input reached the filesystem: %s exists", d)
			}
		})
	}
	if m.Version() == cgroups.V1 {
		err := m.Apply([]cgroups.Cgroup{{Path: "kubepods", Config: cgroups.ResourceConfig{Unified: map[string]string{"memory.min": "1"}}}})
		var ie *cgroupfs.InputError
		require.True(t, errors.As(err, &ie), "Unified on v1: got %v, want an *InputError for hierarchy[0].Config.Unified", err)
		assert.Equal(t, "hierarchy[0].Config.Unified", ie.Field, "Unified on v1: got %v, want an *InputError for hierarchy[0].Config.Unified", err)
	}
	for _, tc := range []struct {
		path  string
		files []string
		field string
	}{
		{"", []string{"cpu.shares"}, "path"},
		{"../x", []string{"cpu.shares"}, "path"},
		{"/kubepods", []string{"cpu.shares"}, "path"},
		{"kubepods", []string{"../cpu.shares"}, "files[0]"},
		{"kubepods", []string{"cpu.shares", ""}, "files[1]"},
	} {
		_, err := m.Read(tc.path, tc.files)
		var ie *cgroupfs.InputError
		require.True(t, errors.As(err, &ie), "Read(%q, %q): got %v, want an *InputError for %s", tc.path, tc.files, err, tc.field)
		assert.Equal(t, tc.field, ie.Field, "Read(%q, %q): got %v, want an *InputError for %s", tc.path, tc.files, err, tc.field)
	}
	var ie *cgroupfs.InputError
	err := m.AddProc("kubepods/../..", os.Getpid())
	require.True(t, errors.As(err, &ie), "AddProc with ..: got %v, want an *InputError for path", err)
	assert.Equal(t, "path", ie.Field, "AddProc with ..: got %v, want an *InputError for path", err)
}

// TestCgroupKernelRefusalNamesFile writes a value core renders but the
// kernel refuses, a pids limit above PID_MAX_LIMIT (4194304): the kernel's
// EINVAL comes back naming the cgroup and the file, and the cgroups applied
// before it stay.
func TestCgroupKernelRefusalNamesFile(t *testing.T) {
	m := newCgroupManager(t, cpuCtrl, pidsCtrl)
	h := []cgroups.Cgroup{
		{Path: "kubepods", Config: cgroups.ResourceConfig{CPUShares: u64(1024)}},
		{Path: "kubepods/pod-many", Config: cgroups.ResourceConfig{PidsLimit: i64(1 << 23)}},
	}
	err := m.Apply(h)
	var fe *cgroupfs.FileError
	require.True(t, errors.As(err, &fe), "got %v, want a FileError for kubepods/pod-many pids.max wrapping EINVAL", err)
	require.Equal(t, "kubepods/pod-many", fe.Path, "got %v, want a FileError for kubepods/pod-many pids.max wrapping EINVAL", err)
	require.Equal(t, "pids.max", fe.File, "got %v, want a FileError for kubepods/pod-many pids.max wrapping EINVAL", err)
	require.True(t, errors.Is(err, unix.EINVAL), "got %v, want a FileError for kubepods/pod-many pids.max wrapping EINVAL", err)
	assert.Contains(t, err.Error(), "kubepods/pod-many", "the message %q does not name the cgroup and the file", err)
	assert.Contains(t, err.Error(), "pids.max", "the message %q does not name the cgroup and the file", err)
	checkApplied(t, m, h[:1], coreFiles(t, m.Version(), h[:1]))
}

// TestCgroupPeriodBeforeQuota changes a pod's CFS period on the real
// kernel, where cgroup v1 checks every quota against the period in place
// and against the parent's share: a 250ms period with a 1-CPU quota can be
// set only period first (a quota written first is measured against 100ms,
// 2.5 CPUs under a 1-CPU pod), and going back to 100ms only by writing the
// quota before the period the kernel refused, as runc does. On v2 cpu.max
// sets both at once; the test checks the values there too.
func TestCgroupPeriodBeforeQuota(t *testing.T) {
	m := newCgroupManager(t, cpuCtrl)
	cpu := func(quota int64, period uint64) cgroups.ResourceConfig {
		return cgroups.ResourceConfig{CPUShares: u64(1024), CPUQuota: i64(quota), CPUPeriod: u64(period)}
	}
	for _, step := range []struct {
		name   string
		period uint64
	}{
		{"create with a 250ms period", 250_000},
		{"shrink to 100ms", 100_000},
		{"grow to 1s", 1_000_000},
	} {
		quota := int64(step.period) // one CPU
		h := []cgroups.Cgroup{
			{Path: "kubepods"},
			{Path: "kubepods/pod-period", Config: cpu(quota, step.period)},
			{Path: "kubepods/pod-period/app", Config: cpu(quota, step.period)},
		}
		require.NoError(t, m.Apply(h), "%s: Apply", step.name)
		checkApplied(t, m, h, coreFiles(t, m.Version(), h))
	}
}

// TestCgroupMissingControllerIsReported applies limits of the controllers
// this host lacks (hugetlb, on the testbed's hosts): Apply skips them, and
// Read and Verify say which files are unsupported and why.
func TestCgroupMissingControllerIsReported(t *testing.T) {
	m := newCgroupManager(t, cpuCtrl)
	missing := m.Missing()
	if len(missing) == 0 {
		t.Skip("every controller the manager writes is available on this host")
	}
	cfg := cgroups.ResourceConfig{CPUShares: u64(512), Memory: i64(64 << 20), PidsLimit: i64(100),
		HugePageLimit: map[int64]int64{2 << 20: 0}}
	require.NoError(t, m.Apply([]cgroups.Cgroup{{Path: "kubepods", Config: cfg}}), "Apply with limits of missing controllers %v", missing)
	err := m.Verify("kubepods", coreFiles(t, m.Version(), []cgroups.Cgroup{{Path: "kubepods", Config: cfg}})["kubepods"])
	var un *cgroupfs.UnsupportedError
	require.True(t, errors.As(err, &un), "Verify: got %v, want an *UnsupportedError for %v", err, missing)
	var mismatch *cgroupfs.MismatchError
	assert.False(t, errors.As(err, &mismatch), "the available controllers' values differ: %v", mismatch)
	assert.True(t, slices.Equal(un.Controllers, missing), "unsupported controllers %v, want %v", un.Controllers, missing)
	for _, f := range un.Files {
		ctrl, _, _ := strings.Cut(f, ".")
		assert.True(t, slices.Contains(missing, ctrl), "%s reported unsupported, but %s is available", f, ctrl)
	}
	t.Logf("reported: %v", un)
	values, err := m.Read("kubepods", []string{"cpu.stat", un.Files[0]})
	require.True(t, errors.As(err, &un), "Read: got %v and %d values, want the cpu.stat value and an *UnsupportedError", err, len(values))
	assert.Len(t, values, 1, "Read: got %v and %d values, want the cpu.stat value and an *UnsupportedError", err, len(values))
}

// TestCgroupVerifyCatchesMismatch changes a value behind the manager's back:
// Verify must name the file with what it wanted and what it found.
func TestCgroupVerifyCatchesMismatch(t *testing.T) {
	m := newCgroupManager(t, cpuCtrl)
	cfg := cgroups.ResourceConfig{CPUShares: u64(1024)}
	require.NoError(t, m.Apply([]cgroups.Cgroup{{Path: "kubepods", Config: cfg}}))
	file, tampered := "cpu.shares", "4096"
	dir := filepath.Join(cgroupMountDir, "cpu", m.Root(), "kubepods")
	if m.Version() == cgroups.V2 {
		file, tampered, dir = "cpu.weight", "100", filepath.Join(m.RootDirs()[0], "kubepods")
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(tampered), 0))
	err := m.Verify("kubepods", coreFiles(t, m.Version(), []cgroups.Cgroup{{Path: "kubepods", Config: cfg}})["kubepods"])
	var mismatch *cgroupfs.MismatchError
	require.True(t, errors.As(err, &mismatch), "Verify after tampering: got %v, want a *MismatchError", err)
	require.Len(t, mismatch.Mismatches, 1, "got %+v, want one mismatch of %s reading %s", mismatch.Mismatches, file, tampered)
	assert.Equal(t, file, mismatch.Mismatches[0].File, "got %+v, want one mismatch of %s reading %s", mismatch.Mismatches, file, tampered)
	assert.Equal(t, tampered, mismatch.Mismatches[0].Got, "got %+v, want one mismatch of %s reading %s", mismatch.Mismatches, file, tampered)
	assert.Contains(t, err.Error(), fmt.Sprintf("got %q", tampered), "the message %q does not show the value found", err)

	// A cgroup that is not there fails even when no file is expected of it.
	var fe *cgroupfs.FileError
	err = m.Verify("kubepods/never-applied", nil)
	require.True(t, errors.As(err, &fe), "Verify of a missing cgroup: got %v, want a FileError wrapping ErrNotExist", err)
	assert.True(t, errors.Is(err, fs.ErrNotExist), "Verify of a missing cgroup: got %v, want a FileError wrapping ErrNotExist", err)
}

// TestCgroupV2WithoutDelegatedControllers drives the cgroup v2 path on a
// host whose v2 root delegates no controller, as a hybrid host's unified
// mount: the tree is created and removed through cgroup2, every limit is
// skipped and reported unsupported, and a pod holding a process stays until
// the process ends. A host that delegates controllers runs the other tests
// on v2 instead.
func TestCgroupV2WithoutDelegatedControllers(t *testing.T) {
	if hostcg.Mode() != hostcg.Hybrid {
		t.Skip("not a hybrid host: the v2 mount is the host's only one, covered by the other tests")
	}
	m := newCgroupManagerWith(t, cgroupfs.Options{Version: cgroups.V2})
	if c := m.Controllers(); len(c) > 0 {
		t.Skipf("the v2 root delegates %v here; the other tests cover the v2 path", c)
	}
	var h []cgroups.Cgroup
	for _, c := range realisticNode() {
		h = append(h, c.cg)
	}
	require.NoError(t, m.Apply(h), "Apply")
	pod := realisticNode()[3]
	dirs, err := m.Dirs(pod.cg.Path)
	require.NoError(t, err)
	require.Len(t, dirs, 1, "v2 directories %v, want one under %s", dirs, cgroupfs.HybridV2Mountpoint)
	require.True(t, strings.HasPrefix(dirs[0], cgroupfs.HybridV2Mountpoint+"/"), "v2 directories %v, want one under %s", dirs, cgroupfs.HybridV2Mountpoint)
	_, err = os.Stat(filepath.Join(dirs[0], "cgroup.procs"))
	require.NoError(t, err, "the pod cgroup is not a v2 cgroup")
	err = m.Verify(pod.cg.Path, pod.v2)
	var un *cgroupfs.UnsupportedError
	require.True(t, errors.As(err, &un), "Verify: got %v, want every one of %d files unsupported on v2", err, len(pod.v2))
	require.Len(t, un.Files, len(pod.v2), "Verify: got %v, want every one of %d files unsupported on v2", err, len(pod.v2))
	require.Equal(t, 2, un.Version, "Verify: got %v, want every one of %d files unsupported on v2", err, len(pod.v2))
	values, err := m.Read(pod.cg.Path, []string{"cgroup.controllers", "cgroup.type"})
	require.NoError(t, err, "Read of the core files: %v, %v; want no controllers in a domain cgroup", values, err)
	assert.Equal(t, "", values["cgroup.controllers"], "Read of the core files: %v, %v; want no controllers in a domain cgroup", values, err)
	assert.Equal(t, "domain", values["cgroup.type"], "Read of the core files: %v, %v; want no controllers in a domain cgroup", values, err)

	c := startChild(t, childSpin)
	require.NoError(t, m.AddProc(pod.cg.Path, c.pid()), "AddProc")
	procs, err := m.Read(pod.cg.Path, []string{"cgroup.procs"})
	require.NoError(t, err, "cgroup.procs = %v (%v), want the child's pid %d", procs, err, c.pid())
	assert.Equal(t, strconv.Itoa(c.pid()), procs["cgroup.procs"], "cgroup.procs = %v (%v), want the child's pid %d", procs, err, c.pid())
	rest := slices.DeleteFunc(slices.Clone(h), func(cg cgroups.Cgroup) bool { return cg.Path == pod.cg.Path })
	var fe *cgroupfs.FileError
	err = m.Apply(rest)
	require.True(t, errors.As(err, &fe), "removing a v2 cgroup with a process: got %v, want an EBUSY FileError for %s", err, pod.cg.Path)
	require.Equal(t, pod.cg.Path, fe.Path, "removing a v2 cgroup with a process: got %v, want an EBUSY FileError for %s", err, pod.cg.Path)
	require.True(t, errors.Is(err, unix.EBUSY), "removing a v2 cgroup with a process: got %v, want an EBUSY FileError for %s", err, pod.cg.Path)
	c.kill(t)
	require.NoError(t, m.Apply(rest), "Apply after the process ended")
	assertGone(t, m, pod.cg.Path)
}
