package conformance

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Deviation I1 on made-up upstream outcomes: explainGCTies excuses a choice
// between tied images and what follows from it, and nothing else.

func u64(v uint64) *uint64 { return &v }

// tiedScenario: two images listed at the kubelet's start, so first
// detected together and never used (a tie), on a full filesystem; the space
// pass removes both (MinAge 0) or keeps both (MinAge 5m).
func tiedScenario(minAge time.Duration) gcScenario {
	return gcScenario{
		Policy: gcPolicy{High: 50, Low: 0, MinAge: minAge},
		Images: []gcImage{{ID: "sha256:00"}, {ID: "sha256:01"}},
		Steps: []gcStep{
			{Op: "pull", Image: 0, Size: 100}, {Op: "pull", Image: 1, Size: 100},
			{Op: "fs", Capacity: u64(1000), Available: u64(0)},
			{Op: "detect"}, {Op: "wait", Wait: time.Minute}, {Op: "gc"},
		},
	}
}

// untiedScenario: the same images first detected a minute apart.
func untiedScenario() gcScenario {
	return gcScenario{
		Policy: gcPolicy{High: 50, Low: 0},
		Images: []gcImage{{ID: "sha256:00"}, {ID: "sha256:01"}},
		Steps: []gcStep{
			{Op: "pull", Image: 0, Size: 100}, {Op: "detect"}, {Op: "wait", Wait: time.Minute},
			{Op: "pull", Image: 1, Size: 100}, {Op: "detect"}, {Op: "wait", Wait: time.Minute},
			{Op: "fs", Capacity: u64(1000), Available: u64(0)}, {Op: "gc"},
		},
	}
}

// swapRemovals swaps the first two RemoveImage calls of the last call.
func swapRemovals(r gcResult) gcResult {
	r.Calls = slices.Clone(r.Calls)
	last := &r.Calls[len(r.Calls)-1]
	last.Calls = slices.Clone(last.Calls)
	last.Calls[1], last.Calls[2] = last.Calls[2], last.Calls[1]
	return r
}

func TestImageGCExplainTies(t *testing.T) {
	in := tiedScenario(0)
	ours := runOurGC(in)
	gc := ours.Calls[len(ours.Calls)-1]
	require.Equal(t, []gcRuntimeCall{{Call: "ImageFsStats"}, {Call: "RemoveImage", Image: "sha256:00"}, {Call: "RemoveImage", Image: "sha256:01"}}, gc.Calls)
	require.True(t, gcTieReachable(in))

	ids, err := explainGCTies(in, ours, swapRemovals(ours))
	require.NoError(t, err)
	assert.Equal(t, []string{"I1"}, ids, "upstream tried the other tied image first")

	wrongErr := swapRemovals(ours)
	wrongErr.Calls[0].Err = "made up"
	_, err = explainGCTies(in, ours, wrongErr)
	assert.ErrorContains(t, err, "step 3", "a difference in the detection before the tie is not I1's")

	wrongStats := ours
	wrongStats.Calls = slices.Clone(ours.Calls)
	wrongStats.Calls[1].Calls = []gcRuntimeCall{{Call: "RemoveImage", Image: "sha256:00"}}
	_, err = explainGCTies(in, ours, wrongStats)
	assert.ErrorContains(t, err, "not a choice between tied images", "a removal before ImageFsStats is not I1's")

	freed := ours
	freed.Calls = slices.Clone(ours.Calls)
	freed.Calls[1].FreedBytes++
	_, err = explainGCTies(in, ours, freed)
	assert.ErrorContains(t, err, "beyond the order of tied images", "the same removals with other freed bytes are not I1's")
}

func TestImageGCExplainUntied(t *testing.T) {
	in := untiedScenario()
	ours := runOurGC(in)
	require.False(t, gcTieReachable(in))
	_, err := explainGCTies(in, ours, swapRemovals(ours))
	assert.ErrorContains(t, err, "not a choice between tied images", "images first detected at different times are not tied")
}

func TestImageGCExplainHooksOrder(t *testing.T) {
	in := tiedScenario(5 * time.Minute)
	ours := runOurGC(in)
	gc := ours.Calls[len(ours.Calls)-1]
	require.NotNil(t, gc.Hooks)
	require.Equal(t, []string{"sha256:00", "sha256:01"}, gc.Hooks.Remaining, "both images are too new for MinAge")

	theirs := ours
	theirs.Calls = slices.Clone(ours.Calls)
	theirs.Calls[1].Hooks = &gcHooks{Remaining: []string{"sha256:01", "sha256:00"}, At: gc.Hooks.At}
	ids, err := explainGCTies(in, ours, theirs)
	require.NoError(t, err)
	assert.Equal(t, []string{"I1"}, ids, "the hooks may get tied images in either order")

	theirs.Calls[1].Hooks = &gcHooks{Remaining: []string{"sha256:01"}, At: gc.Hooks.At}
	_, err = explainGCTies(in, ours, theirs)
	assert.ErrorContains(t, err, "beyond the order of tied images", "a missing image is not I1's")
}

// TestImageGCTieIsUpstreamsMapOrder shows the deviation is real: on the
// tied scenario upstream removes the two images in both orders, as Go's
// map order falls, where nodeproof always removes sha256:00 first.
func TestImageGCTieIsUpstreamsMapOrder(t *testing.T) {
	in := tiedScenario(0)
	firsts := map[string]int{}
	for range 64 {
		gc := runTheirGC(t, in).Calls[1]
		require.Len(t, gc.Calls, 3)
		firsts[gc.Calls[1].Image]++
	}
	assert.Len(t, firsts, 2, "upstream removed %v first", firsts)
}
