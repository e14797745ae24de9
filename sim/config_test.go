package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRates(t *testing.T) {
	def, err := ParseRates("default")
	require.NoError(t, err)
	require.Equal(t, DefaultRates(), def)
	none, err := ParseRates("none")
	require.NoError(t, err)
	require.Equal(t, Rates{}, none)
	some, err := ParseRates("kill-error=0.5, probe-timeout=1")
	require.NoError(t, err)
	require.Equal(t, Rates{KillError: 0.5, ProbeTimeout: 1}, some)

	for _, tc := range []struct{ in, want string }{
		{"kill-error", `faults: "kill-error": want kind=rate`},
		{"disk-full=0.1", `faults: "disk-full": unknown fault kind`},
		{"disk-fill=1.5", "faults: disk-fill: rate 1.5 must be in [0, 1]"},
		{"disk-fill=-0.1", "faults: disk-fill: rate -0.1 must be in [0, 1]"},
		{"disk-fill=NaN", "faults: disk-fill: rate NaN must be in [0, 1]"},
		{"disk-fill=often", `faults: disk-fill: rate "often" is not a number`},
		{"disk-fill=0.1,disk-fill=0.2", "faults: disk-fill: given twice"},
		// Empty is no silent "none": a script whose variable is unset must
		// not run without faults unawares.
		{"", `faults: empty: give default, none (every kind off) or kind=rate,... of the kinds plugin-crash, plugin-reregister, `},
		{"  ", "faults: empty: give default, none"},
	} {
		_, err := ParseRates(tc.in)
		require.Error(t, err, tc.in)
		assert.Contains(t, err.Error(), tc.want, tc.in)
	}
}

func TestRatesStringRoundTrips(t *testing.T) {
	for _, r := range []Rates{DefaultRates(), {}, {KillError: 0.25}, {DiskFill: 1e-5, PluginCrash: 1}} {
		back, err := ParseRates(r.String())
		require.NoError(t, err, r.String())
		want := Rates{}
		for k, v := range r {
			if v != 0 {
				want[k] = v
			}
		}
		require.Equal(t, want, back)
	}
	require.Equal(t, "none", Rates{KillError: 0}.String())
	require.Equal(t, "disk-fill=0.1,kill-error=0.2", Rates{KillError: 0.2, DiskFill: 0.1}.String())
}

func TestAllFaultsHaveDefaultRates(t *testing.T) {
	def := DefaultRates()
	require.Len(t, def, len(AllFaults()))
	for _, f := range AllFaults() {
		require.Greater(t, def[f], 0.0, f)
	}
}

func TestValidate(t *testing.T) {
	require.NoError(t, DefaultConfig().Validate())
	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Duration = 0 }, "duration: 0s must be positive"},
		{func(c *Config) { c.Pods = 0 }, "pods: 0 must be between 1 and 100"},
		{func(c *Config) { c.Pods = 101 }, "pods: 101 must be between 1 and 100"},
		{func(c *Config) { c.NodeMaxPods = -1 }, "nodeMaxPods: -1 must be between 0 (the default, 110) and 110"},
		{func(c *Config) { c.NodeMaxPods = 111 }, "nodeMaxPods: 111 must be between 0 (the default, 110) and 110"},
		{func(c *Config) { c.TraceLen = -1 }, "traceLen: -1 must not be negative"},
		{func(c *Config) { c.Faults = Rates{"meteor": 0.1} }, `faults: "meteor": unknown fault kind`},
		{func(c *Config) { c.Faults = Rates{KillError: 2} }, "faults: kill-error: rate 2 must be in [0, 1]"},
	} {
		c := DefaultConfig()
		tc.change(&c)
		err := c.Validate()
		require.Error(t, err, tc.want)
		assert.Contains(t, err.Error(), tc.want)
		_, err = New(c, NewSeeded(1))
		require.Error(t, err, tc.want)
	}
}

func TestReplayCommand(t *testing.T) {
	c := DefaultConfig()
	c.Faults = Rates{KillError: 0.5}
	require.Equal(t, "nodeproof sim --seed 1 --hours 24 --pods 20 --faults kill-error=0.5", c.ReplayCommand())
	c.Duration = 90 * time.Minute
	c.Seed, c.Pods = 7, 3
	require.Equal(t, "nodeproof sim --seed 7 --hours 1.5 --pods 3 --faults kill-error=0.5", c.ReplayCommand())
	c.NodeMaxPods = 2
	require.Equal(t, "nodeproof sim --seed 7 --hours 1.5 --pods 3 --max-pods 2 --faults kill-error=0.5", c.ReplayCommand())
}

func TestSeededSource(t *testing.T) {
	a, b := NewSeeded(42), NewSeeded(42)
	for range 100 {
		require.Equal(t, a.Intn(1000), b.Intn(1000))
	}
	src := NewSeeded(3)
	counts := make([]int, 4)
	for range 40000 {
		counts[src.Intn(4)]++
		require.False(t, src.Chance(0))
		require.True(t, src.Chance(1))
	}
	for i, n := range counts {
		// Each of 4 outcomes within 5% of 10000: far outside chance for
		// a uniform draw, well inside it for a biased one.
		require.InDelta(t, 10000, n, 500, "outcome %d", i)
	}
	require.Equal(t, 0, src.Intn(1))
}
