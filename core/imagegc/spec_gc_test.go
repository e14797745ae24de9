package imagegc_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/core/imagegc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// detection is one Detect before the pass under test.
type detection struct {
	at   time.Time
	view imagegc.RuntimeView
}

// attempts renders the RemoveImage calls as "id reason" or "id reason failed".
func attempts(out imagegc.Outcome) []string {
	s := []string{}
	for _, a := range out.Attempts {
		line := a.ImageID + " " + a.Reason
		if a.Err != nil {
			line += " failed"
		}
		s = append(s, line)
	}
	return s
}

const insufficient = "Insufficient free disk space on the node's image filesystem (%d%% of %s used). " +
	"Failed to free sufficient space by deleting unused images (freed %d bytes). " +
	"Investigate disk usage, as it could be used by active images, logs, volumes, or other data."

// TestSpecGarbageCollect: GarbageCollect's rules (spec/imagegc.md §2.3,
// §2.4) with upstream's texts. Four images a, b, c, d of 100, 200, 300 and
// 400 bytes are first detected at t0 unless a case says otherwise; the
// image filesystem holds 1000 bytes; the default policy (85/80, MinAge 2m).
func TestSpecGarbageCollect(t *testing.T) {
	abcd := []imagegc.Image{img("a", 100), img("b", 200), img("c", 300), img("d", 400)}
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	errA, errB := errors.New("rpc error: a busy"), errors.New("rpc error: b busy")
	statusGone := ctr("gone", "a")
	statusGone.StatusErr = errors.New("container not found")
	withMaxAge := imagegc.Policy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: 2 * time.Minute, MaxAge: time.Hour}

	tests := []struct {
		name       string
		policy     *imagegc.Policy // default policy when nil
		history    []detection     // default: abcd detected at t0, nothing in use
		view       imagegc.RuntimeView
		fs         imagegc.FsStats
		fsErr      error
		removeErrs map[string]error
		now        time.Time // default t0+10m
		beganGC    time.Time // default t0

		want          []string
		wantErr       string
		wantEvents    []imagegc.Event
		wantFreed     int64
		wantUsage     *imagegc.Usage
		wantHooks     bool
		wantRemaining []string
		wantRecords   []string
		wantFsReads   int
	}{
		{
			name: "usage below the high threshold frees nothing and runs no hooks",
			view: imagegc.RuntimeView{Images: abcd}, fs: imagegc.FsStats{CapacityBytes: 1000, AvailableBytes: 160},
			want: []string{}, wantUsage: &imagegc.Usage{CapacityBytes: 1000, AvailableBytes: 160, UsagePercent: 84},
			wantRecords: []string{"a", "b", "c", "d"}, wantFsReads: 1,
		},
		{
			name: "usage at the high threshold frees down to the low one and stops when enough is freed",
			// usage 100 - 150*100/1000 = 85; amount 1000*20/100 - 150 = 50.
			view: imagegc.RuntimeView{Images: abcd}, fs: imagegc.FsStats{CapacityBytes: 1000, AvailableBytes: 150},
			want: []string{"a space"}, wantFreed: 100, wantHooks: true,
			wantUsage:   &imagegc.Usage{CapacityBytes: 1000, AvailableBytes: 150, UsagePercent: 85, AboveHigh: true, AmountToFreeBytes: 50},
			wantRecords: []string{"b", "c", "d"}, wantFsReads: 1,
		},
		{
			name: "the space pass stops when it has freed exactly the amount, without FreeDiskSpaceFailed",
			// amount 1000*20/100 - 150 = 50, and a frees exactly 50.
			history: []detection{{t0, imagegc.RuntimeView{Images: []imagegc.Image{img("a", 50), img("b", 200)}}}},
			view:    imagegc.RuntimeView{Images: []imagegc.Image{img("a", 50), img("b", 200)}},
			fs:      imagegc.FsStats{CapacityBytes: 1000, AvailableBytes: 150},
			want:    []string{"a space"}, wantFreed: 50, wantHooks: true,
			wantUsage:   &imagegc.Usage{CapacityBytes: 1000, AvailableBytes: 150, UsagePercent: 85, AboveHigh: true, AmountToFreeBytes: 50},
			wantRecords: []string{"b"}, wantFsReads: 1,
		},
		{
			name: "integer division of the usage: 84.9 % counts as 85",
			// 151*100/1000 = 15 (integer), so usage is 85.
			view: imagegc.RuntimeView{Images: abcd}, fs: imagegc.FsStats{CapacityBytes: 1000, AvailableBytes: 151},
			want: []string{"a space"}, wantFreed: 100, wantHooks: true,
			wantUsage:   &imagegc.Usage{CapacityBytes: 1000, AvailableBytes: 151, UsagePercent: 85, AboveHigh: true, AmountToFreeBytes: 49},
			wantRecords: []string{"b", "c", "d"}, wantFsReads: 1,
		},
		{
			name: "the hooks get the skipped images but not those after the break",
			history: []detection{
				{t0, imagegc.RuntimeView{Images: []imagegc.Image{img("o", 100), img("p", 100)}}},
				{at(time.Minute), imagegc.RuntimeView{Images: []imagegc.Image{img("o", 100), img("p", 100)}, Containers: []imagegc.Container{ctr("c1", "o")}}},
				{at(2 * time.Minute), imagegc.RuntimeView{Images: []imagegc.Image{img("o", 100), img("p", 100)}, Containers: []imagegc.Container{ctr("c2", "p")}}},
				{at(9 * time.Minute), imagegc.RuntimeView{Images: []imagegc.Image{img("o", 100), img("p", 100), img("y", 1000)}}},
			},
			// Order: y (never used, but 1m old: skipped), o, p (last used later).
			view: imagegc.RuntimeView{Images: []imagegc.Image{img("o", 100), img("p", 100), img("y", 1000)}},
			fs:   imagegc.FsStats{CapacityBytes: 1000, AvailableBytes: 150},
			want: []string{"o space"}, wantFreed: 100, wantHooks: true, wantRemaining: []string{"y"},
			wantUsage:   &imagegc.Usage{CapacityBytes: 1000, AvailableBytes: 150, UsagePercent: 85, AboveHigh: true, AmountToFreeBytes: 50},
			wantRecords: []string{"p", "y"}, wantFsReads: 1,
		},
		{
			name: "MinAge is strict: exactly MinAge old is eligible, a nanosecond younger is not",
			history: []detection{
				{t0, imagegc.RuntimeView{Images: []imagegc.Image{img("a", 100)}}},
				{at(time.Nanosecond), imagegc.RuntimeView{Images: []imagegc.Image{img("a", 100), img("b", 100)}}},
			},
			view: imagegc.RuntimeView{Images: []imagegc.Image{img("a", 100), img("b", 100)}},
			fs:   imagegc.FsStats{CapacityBytes: 1000}, now: at(2 * time.Minute),
			want: []string{"a space"}, wantFreed: 100, wantHooks: true, wantRemaining: []string{"b"},
			wantErr:     "Insufficient free disk space on the node's image filesystem (100% of 1000 B used). Failed to free sufficient space by deleting unused images (freed 100 bytes). Investigate disk usage, as it could be used by active images, logs, volumes, or other data.",
			wantEvents:  []imagegc.Event{{Type: "Warning", Reason: "FreeDiskSpaceFailed", Message: "Insufficient free disk space on the node's image filesystem (100% of 1000 B used). Failed to free sufficient space by deleting unused images (freed 100 bytes). Investigate disk usage, as it could be used by active images, logs, volumes, or other data."}},
			wantUsage:   &imagegc.Usage{CapacityBytes: 1000, UsagePercent: 100, AboveHigh: true, AmountToFreeBytes: 200},
			wantRecords: []string{"b"}, wantFsReads: 1,
		},
		{
			name: "an image last used at the pass's time is used too recently",
			history: []detection{
				{t0, imagegc.RuntimeView{Images: []imagegc.Image{img("a", 100), img("b", 100)}}},
				{at(10 * time.Minute), imagegc.RuntimeView{Images: []imagegc.Image{img("a", 100), img("b", 100)}, Containers: []imagegc.Container{ctr("c1", "a")}}},
			},
			// The container is gone by the pass's own detection, at the same
			// instant: a is examined (after b) and skipped.
			view: imagegc.RuntimeView{Images: []imagegc.Image{img("a", 100), img("b", 100)}}, fs: imagegc.FsStats{CapacityBytes: 1000},
			want: []string{"b space"}, wantFreed: 100, wantHooks: true, wantRemaining: []string{"a"},
			wantErr:     fmt.Sprintf(insufficient, 100, "1000 B", 100),
			wantEvents:  []imagegc.Event{{Type: "Warning", Reason: "FreeDiskSpaceFailed", Message: fmt.Sprintf(insufficient, 100, "1000 B", 100)}},
			wantUsage:   &imagegc.Usage{CapacityBytes: 1000, UsagePercent: 100, AboveHigh: true, AmountToFreeBytes: 200},
			wantRecords: []string{"a"}, wantFsReads: 1,
		},
		{
			name: "images in use (container or image volume) and pinned images are never evicted",
			view: imagegc.RuntimeView{
				Images:     []imagegc.Image{img("a", 100), pinned("b", 200), img("c", 300), img("d", 400)},
				Containers: []imagegc.Container{ctr("c1", "a"), {ID: "c2", ImageID: "x", MountedImageIDs: []string{"d"}}},
			},
			fs:   imagegc.FsStats{CapacityBytes: 1000},
			want: []string{"c space"}, wantFreed: 300, wantHooks: true,
			wantUsage:   &imagegc.Usage{CapacityBytes: 1000, UsagePercent: 100, AboveHigh: true, AmountToFreeBytes: 200},
			wantRecords: []string{"a", "b", "d"}, wantFsReads: 1,
		},
		{
			name:   "available above capacity is clamped (#116020)",
			policy: &imagegc.Policy{HighThresholdPercent: 0, LowThresholdPercent: 0},
			view:   imagegc.RuntimeView{Images: abcd}, fs: imagegc.FsStats{CapacityBytes: 1000, AvailableBytes: 5000},
			// usage 0 >= high 0; amount 1000 - 1000 = 0: the first removal is enough.
			want: []string{"a space"}, wantFreed: 100, wantHooks: true,
			wantUsage:   &imagegc.Usage{CapacityBytes: 1000, AvailableBytes: 1000, UsagePercent: 0, AboveHigh: true},
			wantRecords: []string{"b", "c", "d"}, wantFsReads: 1,
		},
		{
			name: "capacity 0 is an InvalidDiskCapacity warning and an error",
			view: imagegc.RuntimeView{Images: abcd}, fs: imagegc.FsStats{AvailableBytes: 10},
			want: []string{}, wantErr: "invalid capacity 0 on image filesystem",
			wantEvents:  []imagegc.Event{{Type: "Warning", Reason: "InvalidDiskCapacity", Message: "invalid capacity 0 on image filesystem"}},
			wantRecords: []string{"a", "b", "c", "d"}, wantFsReads: 1,
		},
		{
			name: "an ImageFsStats error is returned as is",
			view: imagegc.RuntimeView{Images: abcd}, fsErr: errors.New("failed to get imageFs info: unable to find data in memory cache"),
			want: []string{}, wantErr: "failed to get imageFs info: unable to find data in memory cache",
			wantRecords: []string{"a", "b", "c", "d"}, wantFsReads: 1,
		},
		{
			name: "a failed removal is recorded and the pass continues; no hooks, no event",
			view: imagegc.RuntimeView{Images: abcd}, fs: imagegc.FsStats{CapacityBytes: 1000},
			removeErrs: map[string]error{"b": errB},
			want:       []string{"a space", "b space failed", "c space"}, wantFreed: 400,
			wantErr:     "wanted to free 200 bytes, but freed 400 bytes space with errors in image deletion: rpc error: b busy",
			wantUsage:   &imagegc.Usage{CapacityBytes: 1000, UsagePercent: 100, AboveHigh: true, AmountToFreeBytes: 200},
			wantRecords: []string{"b", "d"}, wantFsReads: 1,
		},
		{
			name: "several failed removals are aggregated",
			view: imagegc.RuntimeView{Images: abcd}, fs: imagegc.FsStats{CapacityBytes: 1000},
			removeErrs: map[string]error{"a": errA, "b": errB},
			want:       []string{"a space failed", "b space failed", "c space"}, wantFreed: 300,
			wantErr:     "wanted to free 200 bytes, but freed 300 bytes space with errors in image deletion: [rpc error: a busy, rpc error: b busy]",
			wantUsage:   &imagegc.Usage{CapacityBytes: 1000, UsagePercent: 100, AboveHigh: true, AmountToFreeBytes: 200},
			wantRecords: []string{"a", "b", "d"}, wantFsReads: 1,
		},
		{
			name: "a GetContainerStatus error aborts the detection and the round",
			view: imagegc.RuntimeView{Images: []imagegc.Image{img("a", 100), img("new", 5)}, Containers: []imagegc.Container{statusGone}},
			fs:   imagegc.FsStats{CapacityBytes: 1000},
			want: []string{}, wantErr: "get container status: container not found",
			wantRecords: []string{"a", "b", "c", "d"},
		},
		{
			name:   "MaxAge: no age removal until one MaxAge after the loop began",
			policy: &withMaxAge, now: at(time.Hour),
			view: imagegc.RuntimeView{Images: abcd}, fs: imagegc.FsStats{CapacityBytes: 1000, AvailableBytes: 1000},
			want: []string{}, wantUsage: &imagegc.Usage{CapacityBytes: 1000, AvailableBytes: 1000},
			wantRecords: []string{"a", "b", "c", "d"}, wantFsReads: 1,
		},
		{
			name:   "MaxAge: after the wait an image never seen in use goes, however new; age removals are not counted as freed",
			policy: &withMaxAge, now: at(time.Hour + time.Nanosecond),
			history: []detection{
				{t0, imagegc.RuntimeView{Images: abcd}},
				{at(30 * time.Minute), imagegc.RuntimeView{Images: abcd, Containers: []imagegc.Container{ctr("c1", "a"), ctr("c2", "b"), ctr("c3", "c"), ctr("c4", "d")}}},
			},
			// n is first listed by the pass's own detection.
			view: imagegc.RuntimeView{Images: append([]imagegc.Image{img("n", 50)}, abcd...)},
			fs:   imagegc.FsStats{CapacityBytes: 1000, AvailableBytes: 1000},
			want: []string{"n age"}, wantUsage: &imagegc.Usage{CapacityBytes: 1000, AvailableBytes: 1000},
			wantRecords: []string{"a", "b", "c", "d"}, wantFsReads: 1,
		},
		{
			name:   "MaxAge: a failed age removal ends the round before ImageFsStats",
			policy: &withMaxAge, now: at(2 * time.Hour), beganGC: t0,
			view: imagegc.RuntimeView{Images: abcd}, fs: imagegc.FsStats{CapacityBytes: 1000},
			removeErrs: map[string]error{"b": errB},
			want:       []string{"a age", "b age failed", "c age", "d age"},
			wantErr:    "wanted to free images older than 1h0m0s, encountered errors in image deletion: rpc error: b busy",
			// The aggregate is printed with %v: not wrapped.
			wantRecords: []string{"b"},
		},
		{
			name:   "MaxAge then the space pass over what the age pass left",
			policy: &withMaxAge, now: at(2 * time.Hour),
			history: []detection{
				{t0, imagegc.RuntimeView{Images: abcd}},
				{at(90 * time.Minute), imagegc.RuntimeView{Images: abcd, Containers: []imagegc.Container{ctr("c1", "c"), ctr("c2", "d")}}},
			},
			view: imagegc.RuntimeView{Images: abcd}, fs: imagegc.FsStats{CapacityBytes: 1000, AvailableBytes: 100},
			want: []string{"a age", "b age", "c space"}, wantFreed: 300, wantHooks: true,
			wantUsage:   &imagegc.Usage{CapacityBytes: 1000, AvailableBytes: 100, UsagePercent: 90, AboveHigh: true, AmountToFreeBytes: 100},
			wantRecords: []string{"d"}, wantFsReads: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			policy := imagegc.DefaultPolicy()
			if tc.policy != nil {
				policy = *tc.policy
			}
			m, err := imagegc.NewManager(policy, imagegc.Options{})
			require.NoError(t, err)
			history := tc.history
			if history == nil {
				history = []detection{{t0, imagegc.RuntimeView{Images: abcd}}}
			}
			for _, d := range history {
				require.NoError(t, m.Detect(d.at, d.view))
			}
			now, beganGC := tc.now, tc.beganGC
			if now.IsZero() {
				now = at(10 * time.Minute)
			}
			if beganGC.IsZero() {
				beganGC = t0
			}
			rt := &fakeRuntime{view: tc.view, fs: tc.fs, fsErr: tc.fsErr, removeErrs: tc.removeErrs}
			out, err := m.RunGarbageCollect(rt, now, beganGC)
			require.NoError(t, err, "bad input")

			assert.Equal(t, tc.want, attempts(out), "RemoveImage calls")
			assert.Equal(t, tc.wantErr, errText(out.Err), "error")
			assert.Equal(t, tc.wantEvents, out.Events, "events")
			assert.Equal(t, tc.wantFreed, out.FreedBytes, "freed")
			assert.Equal(t, tc.wantUsage, out.Usage, "usage")
			assert.Equal(t, tc.wantHooks, out.HooksRan, "post-GC hooks ran")
			assert.Equal(t, tc.wantRemaining, out.RemainingImages, "post-GC hooks' input")
			assert.Equal(t, tc.wantRecords, recordKeys(m), "records after the pass")
			assert.Equal(t, tc.wantFsReads, rt.fsReads, "ImageFsStats calls")
			for id, want := range tc.removeErrs {
				if tc.wantErr != "" && out.FreedBytes > 0 {
					assert.ErrorIs(t, out.Err, want, "the space pass wraps the runtime's error for %s (%%w)", id)
				}
			}
		})
	}
}
