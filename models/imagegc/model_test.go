package imagegc

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestCollectHandCases(t *testing.T) {
	policy := Policy{High: 85, Low: 80, MinAge: 2 * time.Minute}
	seen := map[string]Record{
		"a": {FirstDetected: t0, Size: 100},
		"b": {FirstDetected: t0, Size: 200},
		"c": {FirstDetected: t0, LastUsed: t0.Add(time.Minute), Size: 300},
		"p": {FirstDetected: t0, Size: 50, Pinned: true},
	}
	listed := []Image{{"a", 100, false}, {"b", 200, false}, {"c", 300, false}, {"p", 50, true}, {"y", 1000, false}}
	now := t0.Add(10 * time.Minute)
	tests := []struct {
		name      string
		round     Round
		want      []Removal
		wantFreed int64
		wantErr   string
		wantLeft  []string
	}{
		{
			name:  "below the high threshold",
			round: Round{CapacityBytes: 1000, AvailableBytes: 160},
			want:  nil, wantLeft: []string{"a", "b", "c", "p", "y"},
		},
		{
			name:  "frees in order until enough, skipping the young and the pinned",
			round: Round{CapacityBytes: 1000, AvailableBytes: 0}, // amount 200
			want:  []Removal{{"a", "space", false}, {"b", "space", false}}, wantFreed: 300,
			wantLeft: []string{"c", "p", "y"},
		},
		{
			name:  "a failed removal continues and ends in the error",
			round: Round{CapacityBytes: 1000, AvailableBytes: 0, FailingRemovals: map[string]string{"a": "busy"}},
			want:  []Removal{{"a", "space", true}, {"b", "space", false}}, wantFreed: 200,
			wantErr:  "wanted to free 200 bytes, but freed 200 bytes space with errors in image deletion: busy",
			wantLeft: []string{"a", "c", "p", "y"},
		},
		{
			name:  "not enough evictable bytes",
			round: Round{CapacityBytes: 4 << 30, AvailableBytes: 0, InUse: map[string]bool{"b": true}},
			want:  []Removal{{"a", "space", false}, {"c", "space", false}}, wantFreed: 400,
			wantErr: "Insufficient free disk space on the node's image filesystem (100% of 4.0 GiB used). " +
				"Failed to free sufficient space by deleting unused images (freed 400 bytes). " +
				"Investigate disk usage, as it could be used by active images, logs, volumes, or other data.",
			wantLeft: []string{"b", "p", "y"},
		},
		{
			name:  "MaxAge after the start-up wait, then below the threshold",
			round: Round{CapacityBytes: 1000, AvailableBytes: 1000, BeganGC: t0.Add(-time.Hour), Policy: Policy{High: 85, Low: 80, MinAge: time.Minute, MaxAge: 5 * time.Minute}},
			want:  []Removal{{"a", "age", false}, {"b", "age", false}, {"y", "age", false}, {"c", "age", false}}, wantLeft: []string{"p"},
		},
		{
			name:  "DeleteUnusedImages ignores the thresholds",
			round: Round{DeleteUnused: true},
			want:  []Removal{{"a", "space", false}, {"b", "space", false}, {"c", "space", false}}, wantFreed: 600,
			wantLeft: []string{"p", "y"},
		},
		{
			name:  "capacity 0",
			round: Round{AvailableBytes: 5},
			want:  nil, wantErr: "invalid capacity 0 on image filesystem", wantLeft: []string{"a", "b", "c", "p", "y"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.round
			r.Records, r.Images, r.Now = seen, listed, now
			if r.Policy == (Policy{}) {
				r.Policy = policy
			}
			if r.BeganGC.IsZero() {
				r.BeganGC = t0
			}
			// y is first detected by this round: 0 old, skipped by MinAge.
			res := Collect(r)
			assert.Equal(t, tc.want, res.Removals)
			assert.Equal(t, tc.wantFreed, res.Freed)
			assert.Equal(t, tc.wantErr, res.Err)
			var left []string
			for _, im := range listed {
				if _, ok := res.Records[im.ID]; ok {
					left = append(left, im.ID)
				}
			}
			assert.Equal(t, tc.wantLeft, left)
			assert.Len(t, seen, 4, "input records untouched")
		})
	}
}

func TestHumanSize(t *testing.T) {
	for b, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 3 << 20: "3.0 MiB", 2048 << 40: "2048.0 TiB"} {
		assert.Equal(t, want, humanSize(b))
	}
}

func TestJoined(t *testing.T) {
	assert.Equal(t, "x", joined([]string{"x"}))
	assert.Equal(t, "x", joined([]string{"x", "x"}))
	assert.Equal(t, "[x, y]", joined([]string{"x", "y", "x"}))
}
