package imagegc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/agent/cri"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/core/imagegc"
	"github.com/nodeproof/nodeproof/integration/containerdtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// imagegcNow is the injected clock of the imagegc tests.
var imagegcNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// runImageGCCommand runs `nodeproof imagegc args` on the injected clock.
func runImageGCCommand(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	root := cli.NewRoot(NewCommand(func() time.Time { return imagegcNow }))
	code = cli.Execute(root, append([]string{"imagegc"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestImageGCFlagDefaults(t *testing.T) {
	cmd := NewCommand(time.Now)
	require.NoError(t, cmd.ParseFlags(nil))
	for flag, want := range map[string]string{"cri-socket": "/run/containerd/containerd.sock", "high": "85", "low": "80",
		"min-age": "2m0s", "max-age": "0s", "timeout": "2m0s", "kubelet-uptime": "0s"} {
		assert.Equal(t, want, cmd.Flags().Lookup(flag).DefValue, flag)
	}
	opts := Options{Socket: defaultCRISocket, High: 85, Low: 80, MinAge: 2 * time.Minute, Timeout: time.Minute}
	require.NoError(t, opts.Validate())
	assert.Equal(t, imagegc.DefaultPolicy(), opts.policy)
	assert.Equal(t, 7*time.Minute, opts.Uptime, "long enough: above the min age by one GC period")
	assert.False(t, opts.uptimeGiven)

	opts = Options{Socket: defaultCRISocket, High: 85, Low: 80, MinAge: time.Minute, MaxAge: time.Hour, Timeout: time.Minute}
	require.NoError(t, opts.Validate())
	assert.Equal(t, time.Hour+imagegc.GCPeriod, opts.Uptime, "long enough: past the max-age wait")
	opts = Options{Socket: defaultCRISocket, High: 85, Low: 80, Timeout: time.Minute, uptimeGiven: true}
	require.NoError(t, opts.Validate())
	assert.Zero(t, opts.Uptime, "an explicit 0: the kubelet has just started")
	assert.True(t, opts.uptimeGiven)
}

// TestImageGCFlagsRejected: bad flags exit 2 before any runtime is read,
// naming the flag and the kubelet's rule.
func TestImageGCFlagsRejected(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--high", "101"}, "nodeproof imagegc: --high 101 --low 80 --min-age 2m0s --max-age 0s (the kubelet's image GC settings): invalid configuration: imageGCHighThresholdPercent (--image-gc-high-threshold) 101 must be between 0 and 100, inclusive\n"},
		{[]string{"--low", "85"}, "invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) 85 must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) 85\n"},
		{[]string{"--low", "-1", "--min-age", "-1s"}, "[invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) -1 must be between 0 and 100, inclusive, invalid configuration: imageMinimumGCAge -1s must not be negative]\n"},
		{[]string{"--max-age", "1m"}, "invalid configuration: imageMaximumGCAge 1m0s must be greater than imageMinimumGCAge 2m0s\n"},
		{[]string{"--timeout", "0s"}, "nodeproof imagegc: --timeout 0s: must be more than 0\n"},
		{[]string{"--kubelet-uptime", "-1m"}, "nodeproof imagegc: --kubelet-uptime -1m0s: must not be negative\n"},
		{[]string{"--cri-socket", "run/c.sock"}, `nodeproof imagegc: --cri-socket "run/c.sock": must be an absolute path to the runtime's Unix socket (or unix:///PATH)` + "\n"},
		{[]string{"--high", "x"}, `invalid argument "x" for "--high" flag`},
		{[]string{"extra"}, `nodeproof imagegc: unexpected argument "extra"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runImageGCCommand(tc.args...)
			assert.Equal(t, cli.StatusUsage, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

func TestImageGCUnreachableRuntime(t *testing.T) {
	socket := t.TempDir() + "/none.sock"
	code, stdout, stderr := runImageGCCommand("--cri-socket", socket, "--timeout", "5s")
	assert.Equal(t, cli.StatusFailed, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "nodeproof imagegc: reading the runtime on "+socket+": ")
	assert.Contains(t, stderr, "cri: Version: rpc error: code = Unavailable")
}

// TestImageGCAgainstContainerd runs the command against a real containerd
// with one pod running app and three unused images, the image filesystem
// at 87%: it predicts the kubelet's removals and removes nothing.
func TestImageGCAgainstContainerd(t *testing.T) {
	ctrd := containerdtest.Start(t, containerdtest.Options{FsSizeBytes: 64 << 20})
	ctx := context.Background()
	bb, err := containerdtest.BusyboxLayer()
	require.NoError(t, err)
	layer := func(name string, mib int64, seed uint64) containerdtest.Layer {
		l, err := containerdtest.DataLayer(name, mib<<20, seed)
		require.NoError(t, err)
		return l
	}
	app := containerdtest.Image{Name: "nodeproof.test/app:1", Layers: []containerdtest.Layer{bb, layer("app", 1, 1)}}
	unused := []containerdtest.Image{
		{Name: "nodeproof.test/c:1", Layers: []containerdtest.Layer{layer("c", 3, 2)}},
		{Name: "nodeproof.test/d:1", Layers: []containerdtest.Layer{layer("d", 2, 3)}},
	}
	ctrd.Import(append([]containerdtest.Image{app}, unused...)...)
	_, err = ctrd.RunPod(ctx, "app", app.Name, "/bin/sleep", "3600")
	require.NoError(t, err)
	require.NoError(t, ctrd.FillTo(87))
	images, err := ctrd.CRI.ListImages(ctx)
	require.NoError(t, err)
	require.Len(t, images, 4)
	appID, err := app.ID()
	require.NoError(t, err)

	// Every image but app's is unused, so (containerd 1.6 pins nothing)
	// evictable; all tie on last use (zero) and first detection (the
	// kubelet's start), so they go in ID order.
	var candidates []string
	tags, sizes := map[string]string{}, map[string]int64{}
	for _, img := range images {
		tags[img.ID], sizes[img.ID] = img.RepoTags[0], img.SizeBytes
		if img.ID != appID && !img.Pinned {
			candidates = append(candidates, img.ID)
		}
	}
	slices.Sort(candidates)

	t.Run("space", func(t *testing.T) {
		code, stdout, stderr := runImageGCCommand("--cri-socket", ctrd.Socket, "--json")
		require.Equal(t, cli.StatusOK, code, stderr)
		var got cri.GCPrediction
		require.NoError(t, json.Unmarshal([]byte(stdout), &got))
		require.NotNil(t, got.UsageBefore)
		assert.Equal(t, 87, got.UsageBefore.Percent)
		// The removals are the shortest prefix of the order whose sizes
		// reach capacity*(100-low)/100 - available.
		toFree := got.UsageBefore.CapacityBytes*20/100 - got.UsageBefore.AvailableBytes
		var want []cri.GCRemoval
		var freed int64
		for _, id := range candidates {
			if freed >= toFree {
				break
			}
			want = append(want, cri.GCRemoval{ImageID: id, Tag: tags[id], SizeBytes: sizes[id], Size: imagegc.FormatSize(sizes[id]), Reason: imagegc.RemovedForSpace})
			freed += sizes[id]
		}
		require.GreaterOrEqual(t, freed, toFree, "the images chosen hold enough")
		assert.Equal(t, want, got.Removals)
		assert.Equal(t, got.UsageBefore.AvailableBytes+freed, got.UsageAfter.AvailableBytes)
		assert.Less(t, got.UsageAfter.Percent, 81, "at or below low after the kubelet's arithmetic")
		assert.Empty(t, got.Error)
		assert.Empty(t, got.Events)
		assert.Equal(t, cri.GCAssumptions{KubeletStarted: imagegcNow.Add(-7 * time.Minute), KubeletUptime: "7m0s",
			ImagesInUse: 1, ImagesNotInUse: 3, Notes: got.Assumptions.Notes}, got.Assumptions)
		assert.Contains(t, got.Assumptions.Notes, "last used: now for the 1 image(s) a listed container uses (exited containers included); unknown, so zero as after a kubelet restart, for the other 3")
		assert.Equal(t, imagegcNow, got.Now)
		assert.Len(t, ctrd.ImageIDs(), 4, "nothing removed")
	})

	t.Run("just started", func(t *testing.T) {
		// One minute after a kubelet start nothing is MinAge old: the
		// kubelet would fail to free anything, and says so.
		code, stdout, stderr := runImageGCCommand("--cri-socket", ctrd.Socket, "--kubelet-uptime", "1m")
		require.Equal(t, cli.StatusOK, code, stderr)
		assert.Contains(t, stdout, "  - the kubelet started 1m0s ago (--kubelet-uptime)\n")
		assert.Contains(t, stdout, "usage before: 87% (")
		assert.Contains(t, stdout, "would remove: nothing\n")
		assert.Contains(t, stdout, "outcome: error: Insufficient free disk space on the node's image filesystem (87% of 64.0 MiB used). Failed to free sufficient space by deleting unused images (freed 0 bytes).")
		assert.Contains(t, stdout, "event: Warning FreeDiskSpaceFailed: Insufficient free disk space")
		t.Logf("nodeproof imagegc --kubelet-uptime 1m:\n%s", stdout)
	})

	t.Run("max age", func(t *testing.T) {
		code, stdout, stderr := runImageGCCommand("--cri-socket", ctrd.Socket, "--max-age", "1h")
		require.Equal(t, cli.StatusOK, code, stderr)
		var lines []string
		for i, id := range candidates {
			lines = append(lines, fmt.Sprintf("  %d. %s %s  %s  age\n", i+1, id, tags[id], imagegc.FormatSize(sizes[id])))
		}
		assert.Contains(t, stdout, "would remove, in order:\n"+strings.Join(lines, "")+"usage after: ", "every unused image, last used unknown (zero), is older than the max age")
		assert.Contains(t, stdout, "outcome: ok\n")
		t.Logf("nodeproof imagegc --max-age 1h:\n%s", stdout)
		assert.Len(t, ctrd.ImageIDs(), 4, "nothing removed")
	})
}

// TestCRISocketFlag: --cri-socket takes a path or the kubelet's
// unix:///PATH endpoint, and refuses anything else naming the flag.
func TestCRISocketFlag(t *testing.T) {
	for flag, want := range map[string]string{
		"/run/containerd/containerd.sock":        "/run/containerd/containerd.sock",
		"unix:///run/containerd/containerd.sock": "/run/containerd/containerd.sock",
	} {
		got, err := criSocketPath(flag)
		require.NoError(t, err, flag)
		assert.Equal(t, want, got)
	}
	for flag, want := range map[string]string{
		"tcp://127.0.0.1:1": `--cri-socket "tcp://127.0.0.1:1": only a Unix socket can be read, as a path or unix:///PATH, not a tcp:// endpoint`,
		"containerd.sock":   `--cri-socket "containerd.sock": must be an absolute path`,
		"unix://rel.sock":   `--cri-socket "unix://rel.sock": must be an absolute path`,
	} {
		_, err := criSocketPath(flag)
		assert.ErrorContains(t, err, want, flag)
	}
	status, _, stderr := runImageGCCommand("--cri-socket", "tcp://127.0.0.1:1")
	assert.Equal(t, cli.StatusUsage, status)
	assert.Contains(t, stderr, "nodeproof imagegc: --cri-socket \"tcp://127.0.0.1:1\": only a Unix socket")
	assert.NotContains(t, stderr, "Options.Socket", "no internal name")
}
