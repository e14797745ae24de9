package imagegc_test

import (
	"testing"
	"time"

	"github.com/nodeproof/nodeproof/core/imagegc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpecPolicyValidate: NewImageGCManager's checks in order, first failure
// wins (spec/imagegc.md §2.1).
func TestSpecPolicyValidate(t *testing.T) {
	tests := []struct {
		name      string
		high, low int
		want      string
	}{
		{"defaults", 85, 80, ""},
		{"low equal to high is allowed here", 80, 80, ""},
		{"bounds inclusive", 100, 0, ""},
		{"high negative", -1, 80, "invalid HighThresholdPercent -1, must be in range [0-100]"},
		{"high over 100", 101, 80, "invalid HighThresholdPercent 101, must be in range [0-100]"},
		{"high checked before low", 101, -5, "invalid HighThresholdPercent 101, must be in range [0-100]"},
		{"low negative", 85, -1, "invalid LowThresholdPercent -1, must be in range [0-100]"},
		{"low over 100", 100, 101, "invalid LowThresholdPercent 101, must be in range [0-100]"},
		{"low above high", 80, 85, "LowThresholdPercent 85 can not be higher than HighThresholdPercent 80"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := imagegc.Policy{HighThresholdPercent: tc.high, LowThresholdPercent: tc.low}
			assert.Equal(t, tc.want, errText(p.Validate()))
			_, err := imagegc.NewManager(p, imagegc.Options{})
			assert.Equal(t, tc.want, errText(err), "NewManager validates as NewImageGCManager")
		})
	}
}

func TestSpecDefaultPolicy(t *testing.T) {
	assert.Equal(t, imagegc.Policy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: 2 * time.Minute}, imagegc.DefaultPolicy())
	require.NoError(t, imagegc.DefaultPolicy().Validate())
}

// TestSpecValidateKubeletConfig: every rule runs, failures aggregated as
// utilerrors.NewAggregate prints them; low >= high is rejected here.
func TestSpecValidateKubeletConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  imagegc.KubeletConfig
		want string
	}{
		{"defaults", imagegc.KubeletConfig{85, 80, 2 * time.Minute, 0}, ""},
		{"max age above min age", imagegc.KubeletConfig{85, 80, 2 * time.Minute, 3 * time.Minute}, ""},
		// The range rules are inclusive at both ends, and a zero MinAge is
		// valid: each bound is tried at its value, where a strict and a
		// non-strict comparison part.
		{"thresholds at the ends of their range, no min age", imagegc.KubeletConfig{100, 0, 0, 0}, ""},
		{"high at 0 breaks only the order rule", imagegc.KubeletConfig{0, 0, 2 * time.Minute, 0},
			"invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) 0 must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) 0"},
		{"low at 100 breaks only the order rule", imagegc.KubeletConfig{100, 100, 2 * time.Minute, 0},
			"invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) 100 must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) 100"},
		{"low equal to high", imagegc.KubeletConfig{80, 80, 2 * time.Minute, 0},
			"invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) 80 must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) 80"},
		{"high out of range", imagegc.KubeletConfig{101, 80, 2 * time.Minute, 0},
			"invalid configuration: imageGCHighThresholdPercent (--image-gc-high-threshold) 101 must be between 0 and 100, inclusive"},
		{"low out of range and above high", imagegc.KubeletConfig{85, 101, 2 * time.Minute, 0},
			"[invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) 101 must be between 0 and 100, inclusive, " +
				"invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) 101 must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) 85]"},
		{"negative min age", imagegc.KubeletConfig{85, 80, -time.Second, 0},
			"invalid configuration: imageMinimumGCAge -1s must not be negative"},
		{"negative max age", imagegc.KubeletConfig{85, 80, 2 * time.Minute, -time.Second},
			"invalid configuration: imageMaximumGCAge -1s must not be negative"},
		{"max age equal to min age", imagegc.KubeletConfig{85, 80, 2 * time.Minute, 2 * time.Minute},
			"invalid configuration: imageMaximumGCAge 2m0s must be greater than imageMinimumGCAge 2m0s"},
		{"every rule at once, in order", imagegc.KubeletConfig{-1, 101, -time.Minute, -2 * time.Minute},
			"[invalid configuration: imageGCHighThresholdPercent (--image-gc-high-threshold) -1 must be between 0 and 100, inclusive, " +
				"invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) 101 must be between 0 and 100, inclusive, " +
				"invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) 101 must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) -1, " +
				"invalid configuration: imageMinimumGCAge -1m0s must not be negative, " +
				"invalid configuration: imageMaximumGCAge -2m0s must not be negative]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, errText(imagegc.ValidateKubeletConfig(tc.cfg)))
		})
	}
	assert.Equal(t, imagegc.Policy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: time.Minute, MaxAge: time.Hour},
		imagegc.KubeletConfig{85, 80, time.Minute, time.Hour}.Policy())
}

// TestSpecPeriodicGCEnabled: StartGarbageCollection skips the image GC loop
// only when high is 100 and MaxAge is 0.
func TestSpecPeriodicGCEnabled(t *testing.T) {
	assert.True(t, imagegc.DefaultPolicy().PeriodicGCEnabled())
	assert.False(t, imagegc.Policy{HighThresholdPercent: 100, LowThresholdPercent: 80}.PeriodicGCEnabled())
	assert.True(t, imagegc.Policy{HighThresholdPercent: 100, LowThresholdPercent: 80, MaxAge: time.Hour}.PeriodicGCEnabled())
	assert.True(t, imagegc.Policy{HighThresholdPercent: 99, LowThresholdPercent: 80}.PeriodicGCEnabled())
}

// TestSpecFormatSize: binary units, one decimal, TiB is the largest unit.
func TestSpecFormatSize(t *testing.T) {
	tests := []struct {
		bytes int64
		want  string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{1<<20 - 1, "1024.0 KiB"}, {1 << 20, "1.0 MiB"}, {5 << 30, "5.0 GiB"},
		{1 << 40, "1.0 TiB"}, {2048 << 40, "2048.0 TiB"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, imagegc.FormatSize(tc.bytes), "%d bytes", tc.bytes)
	}
}

// TestSpecGCLoop: the first failure (or one after a success) is only
// logged; a failure right after a failure records ImageGCFailed.
func TestSpecGCLoop(t *testing.T) {
	var loop imagegc.GCLoop
	fail := assert.AnError
	steps := []struct {
		err       error
		wantEvent bool
	}{
		{fail, false}, {fail, true}, {fail, true}, {nil, false}, {fail, false}, {nil, false}, {fail, false}, {fail, true},
	}
	for i, s := range steps {
		ev, ok := loop.Observe(s.err)
		require.Equal(t, s.wantEvent, ok, "run %d", i)
		if ok {
			assert.Equal(t, imagegc.Event{Type: "Warning", Reason: "ImageGCFailed", Message: fail.Error()}, ev)
		}
	}
}

// TestSpecInputAtTheBoundsIsAccepted: every bound of a runtime's answer is
// inclusive. Each value is tried at the bound itself, where a strict and a
// non-strict comparison part; one past it is rejected by the bad-input tests.
func TestSpecInputAtTheBoundsIsAccepted(t *testing.T) {
	images := make([]imagegc.Image, imagegc.MaxImages)
	images[0] = imagegc.Image{ID: "largest", SizeBytes: imagegc.MaxImageSizeBytes}
	images[1] = imagegc.Image{ID: "empty", SizeBytes: 0}
	containers := make([]imagegc.Container, imagegc.MaxContainers)
	containers[0].MountedImageIDs = make([]string, imagegc.MaxMountsPerContainer)
	assert.NoError(t, imagegc.RuntimeView{Images: images, Containers: containers}.Validate())

	for _, stats := range []imagegc.FsStats{
		{CapacityBytes: 0, AvailableBytes: 0},
		{CapacityBytes: imagegc.MaxFsBytes, AvailableBytes: imagegc.MaxFsBytes},
	} {
		assert.NoError(t, stats.Validate(), "%+v", stats)
	}
}
