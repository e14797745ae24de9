package imagegc_test

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/core/imagegc"
)

var update = flag.Bool("update", false, "rewrite the expected outputs in testdata/ from what the code does")

// TestSpecGarbageCollect: GarbageCollect's rules (spec/imagegc.md §2.3,
// §2.4) with upstream's texts, one case per paragraph of
// testdata/garbage_collect.txt. Read that file's head for the directives.
func TestSpecGarbageCollect(t *testing.T) {
	if *update {
		require.NoError(t, flag.Set("rewrite", "true"))
	}
	var gc gcCase
	gc.reset()
	datadriven.RunTest(t, "testdata/garbage_collect.txt", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "policy":
			return gc.setPolicy(t, d)
		case "detect":
			gc.history = append(gc.history, detection{at: t0.Add(duration(t, d, "at", 0)), view: view(t, d)})
			return ""
		case "gc":
			defer gc.reset()
			return gc.run(t, d)
		}
		d.Fatalf(t, "unknown directive %q (want policy, detect or gc)", d.Cmd)
		return ""
	})
}

// detection is one Detect before the pass under test.
type detection struct {
	at   time.Time
	view imagegc.RuntimeView
}

// gcCase gathers the policy and detections the directives before a gc set.
type gcCase struct {
	policy  imagegc.Policy
	history []detection
}

func (c *gcCase) reset() {
	c.policy = imagegc.DefaultPolicy()
	c.history = nil
}

func (c *gcCase) setPolicy(t *testing.T, d *datadriven.TestData) string {
	var high, low int
	d.ScanArgs(t, "high", &high)
	d.ScanArgs(t, "low", &low)
	c.policy = imagegc.Policy{
		HighThresholdPercent: high,
		LowThresholdPercent:  low,
		MinAge:               duration(t, d, "min-age", 0),
		MaxAge:               duration(t, d, "max-age", 0),
	}
	return ""
}

// abcd are the images of every case that names none: a, b, c and d of
// 100, 200, 300 and 400 bytes.
var abcd = []imagegc.Image{img("a", 100), img("b", 200), img("c", 300), img("d", 400)}

// run detects the history (abcd at t0 when the case gives none), runs one
// pass and prints everything the pass did and left.
func (c *gcCase) run(t *testing.T, d *datadriven.TestData) string {
	m, err := imagegc.NewManager(c.policy, imagegc.Options{})
	require.NoError(t, err)
	history := c.history
	if history == nil {
		history = []detection{{t0, imagegc.RuntimeView{Images: abcd}}}
	}
	for _, h := range history {
		require.NoError(t, m.Detect(h.at, h.view))
	}
	rt := &fakeRuntime{view: view(t, d), removeErrs: map[string]error{}}
	rt.fs.CapacityBytes = intArg(t, d, "capacity", 0)
	rt.fs.AvailableBytes = intArg(t, d, "available", 0)
	if d.HasArg("fs-error") {
		// The error's text is the directive's input: it has spaces.
		rt.fsErr = errors.New(strings.TrimSpace(d.Input))
	}
	for _, id := range listArg(d, "remove-error") {
		rt.removeErrs[id] = fmt.Errorf("rpc error: %s busy", id)
	}
	now := t0.Add(duration(t, d, "now", 10*time.Minute))
	out, err := m.RunGarbageCollect(rt, now, t0.Add(duration(t, d, "began", 0)))
	require.NoError(t, err, "bad input")
	if out.Err != nil && out.FreedBytes > 0 {
		// The space pass wraps the runtime's errors (%w); the age pass
		// prints its aggregate with %v.
		for id, want := range rt.removeErrs {
			require.ErrorIs(t, out.Err, want, "the space pass wraps the runtime's error for %s", id)
		}
	}
	return describe(out, m, rt)
}

// describe prints a pass's outcome, a line a field, every field always, so
// that a change in any of them shows in the file.
func describe(out imagegc.Outcome, m *imagegc.Manager, rt *fakeRuntime) string {
	var b strings.Builder
	fmt.Fprintf(&b, "attempts: %s\n", orNone(attempts(out), ", "))
	if out.Err != nil {
		fmt.Fprintf(&b, "error: %s\n", out.Err)
	}
	for _, e := range out.Events {
		fmt.Fprintf(&b, "event: %s %s: %s\n", e.Type, e.Reason, e.Message)
	}
	fmt.Fprintf(&b, "freed: %d\n", out.FreedBytes)
	if u := out.Usage; u != nil {
		fmt.Fprintf(&b, "usage: capacity=%d available=%d percent=%d above-high=%t amount-to-free=%d\n",
			u.CapacityBytes, u.AvailableBytes, u.UsagePercent, u.AboveHigh, u.AmountToFreeBytes)
	} else {
		b.WriteString("usage: not read\n")
	}
	if out.HooksRan {
		fmt.Fprintf(&b, "hooks: ran, remaining %s\n", orNone(out.RemainingImages, " "))
	} else {
		b.WriteString("hooks: not run\n")
	}
	fmt.Fprintf(&b, "records: %s\n", orNone(recordKeys(m), " "))
	fmt.Fprintf(&b, "fs reads: %d\n", rt.fsReads)
	return b.String()
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

func orNone(items []string, sep string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, sep)
}

// view reads images=(id:size[:pinned],...) and containers=(id:image[+mounted...][:status-error],...);
// without images it is abcd.
func view(t *testing.T, d *datadriven.TestData) imagegc.RuntimeView {
	v := imagegc.RuntimeView{Images: abcd}
	if d.HasArg("images") {
		v.Images = nil
		for _, s := range listArg(d, "images") {
			parts := strings.Split(s, ":")
			size, err := strconv.ParseInt(parts[1], 10, 64)
			require.NoError(t, err, "images: %s", s)
			im := img(parts[0], size)
			im.Pinned = len(parts) == 3 && parts[2] == "pinned"
			v.Images = append(v.Images, im)
		}
	}
	for _, s := range listArg(d, "containers") {
		parts := strings.Split(s, ":")
		images := strings.Split(parts[1], "+")
		c := ctr(parts[0], images[0])
		c.MountedImageIDs = images[1:]
		if len(parts) == 3 && parts[2] == "status-error" {
			c.StatusErr = errors.New("container not found")
		}
		v.Containers = append(v.Containers, c)
	}
	return v
}

func listArg(d *datadriven.TestData, key string) []string {
	arg, ok := d.Arg(key)
	if !ok {
		return nil
	}
	return arg.Vals
}

func intArg(t *testing.T, d *datadriven.TestData, key string, def int64) int64 {
	if !d.HasArg(key) {
		return def
	}
	var v int
	d.ScanArgs(t, key, &v)
	return int64(v)
}

// duration reads a Go duration ("10m", "1h0m0.000000001s") after t0.
func duration(t *testing.T, d *datadriven.TestData, key string, def time.Duration) time.Duration {
	if !d.HasArg(key) {
		return def
	}
	var s string
	d.ScanArgs(t, key, &s)
	v, err := time.ParseDuration(s)
	require.NoError(t, err, "%s=%s", key, s)
	return v
}
