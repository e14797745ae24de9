package devicemanager

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the expected outputs in testdata/ from what the model does")

// t0 is an arbitrary kubelet start; every at= is an offset from it.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// TestModel drives the model through the files in testdata/, one model a
// file, each directive printing what the model answered. Read the head of
// testdata/allocate.txt for the directives.
func TestModel(t *testing.T) {
	if *update {
		require.NoError(t, flag.Set("rewrite", "true"))
	}
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		m := New()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return run(t, m, d)
		})
	})
}

func run(t *testing.T, m *Model, d *datadriven.TestData) string {
	resource := func() string {
		var r string
		d.ScanArgs(t, "resource", &r)
		return r
	}
	switch d.Cmd {
	case "register":
		return fmt.Sprintf("conn %d\n", m.Register(resource(), Options{Preferred: d.HasArg("preferred"), PreStart: d.HasArg("prestart")}))
	case "update":
		var devices []Device
		for _, id := range list(d, "healthy") {
			devices = append(devices, Device{ID: id, Healthy: true})
		}
		for _, id := range list(d, "unhealthy") {
			devices = append(devices, Device{ID: id})
		}
		m.Update(resource(), devices)
		return ""
	case "disconnect":
		var conn int
		d.ScanArgs(t, "conn", &conn)
		m.Disconnect(resource(), conn, at(t, d))
		return ""
	case "capacity":
		read := m.Capacity
		if d.HasArg("view") {
			read = m.CapacityView
		}
		counts, deleted := read(at(t, d))
		return describeCapacity(counts, deleted)
	case "sources-ready":
		m.SourcesReady()
		return ""
	case "gc":
		m.GC(list(d, "active"))
		return describeHoldings(m.Holdings())
	case "plan":
		plan, failure := m.Plan(pod(t, d), container(t, d), list(d, "active"))
		if failure != nil {
			return describeFailure(failure)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "plan %d", plan.ID)
		for _, q := range plan.Requests {
			fmt.Fprintf(&b, " %s=%s", q.Resource, strings.Join(q.Devices, ","))
		}
		return b.String() + "\n"
	case "commit":
		m.Commit(planID(t, d))
		return describeHoldings(m.Holdings())
	case "abort":
		m.Abort(planID(t, d))
		return ""
	case "holdings":
		return describeHoldings(m.Holdings())
	case "registered":
		var b strings.Builder
		for _, r := range m.Registered() {
			fmt.Fprintf(&b, "%s: %s\n", r.Resource, orNone(r.Devices))
		}
		return b.String()
	case "restart":
		var running [][2]string
		for _, pc := range list(d, "running") {
			pod, ctr, ok := strings.Cut(pc, "/")
			require.True(t, ok, "running=%s: want pod/container", pc)
			running = append(running, [2]string{pod, ctr})
		}
		m.Restart(at(t, d), running)
		return ""
	case "prestart":
		calls, reallocate, failure := m.PreStart(pod(t, d), container(t, d), d.HasArg("active"))
		if failure != nil {
			return describeFailure(failure)
		}
		var b strings.Builder
		for _, c := range calls {
			fmt.Fprintf(&b, "PreStartContainer %s: %s\n", c.Resource, strings.Join(c.Devices, ","))
		}
		fmt.Fprintf(&b, "allocate again: %t\n", reallocate)
		return b.String()
	}
	d.Fatalf(t, "unknown directive %q", d.Cmd)
	return ""
}

// container reads container=NAME limits=(resource:count,...) [init]
// [sidecar] [prefer=(resource:id+id,...)] [prefer-error=(resource,...)].
func container(t *testing.T, d *datadriven.TestData) Container {
	c := Container{Init: d.HasArg("init"), Sidecar: d.HasArg("sidecar")}
	d.ScanArgs(t, "container", &c.Name)
	preferred := map[string][]string{}
	for _, p := range list(d, "prefer") {
		resource, ids, _ := strings.Cut(p, ":")
		preferred[resource] = strings.Split(ids, "+")
	}
	failing := list(d, "prefer-error")
	for _, l := range list(d, "limits") {
		resource, count, ok := strings.Cut(l, ":")
		require.True(t, ok, "limits: %s: want resource:count", l)
		n, err := strconv.ParseInt(count, 10, 64)
		require.NoError(t, err, "limits: %s", l)
		c.Limits = append(c.Limits, Limit{Resource: resource, Count: n, Preferred: preferred[resource], PreferredErr: contains(failing, resource)})
	}
	return c
}

func pod(t *testing.T, d *datadriven.TestData) string {
	var p string
	d.ScanArgs(t, "pod", &p)
	return p
}

func planID(t *testing.T, d *datadriven.TestData) int {
	var id int
	d.ScanArgs(t, "plan", &id)
	return id
}

func at(t *testing.T, d *datadriven.TestData) time.Time {
	if !d.HasArg("at") {
		return t0
	}
	var s string
	d.ScanArgs(t, "at", &s)
	offset, err := time.ParseDuration(s)
	require.NoError(t, err, "at=%s", s)
	return t0.Add(offset)
}

func list(d *datadriven.TestData, key string) []string {
	arg, ok := d.Arg(key)
	if !ok {
		return nil
	}
	return arg.Vals
}

func describeCapacity(counts []Count, deleted []string) string {
	var b strings.Builder
	for _, c := range counts {
		allocatable := "no allocatable"
		if c.HasAllocatable {
			allocatable = fmt.Sprintf("allocatable %d", c.Allocatable)
		}
		fmt.Fprintf(&b, "%s: capacity %d, %s\n", c.Resource, c.Capacity, allocatable)
	}
	fmt.Fprintf(&b, "deleted: %s\n", orNone(deleted))
	return b.String()
}

func describeHoldings(holdings []Holding) string {
	if len(holdings) == 0 {
		return "no holdings\n"
	}
	var b strings.Builder
	for _, h := range holdings {
		fmt.Fprintf(&b, "%s/%s %s: %s\n", h.Pod, h.Container, h.Resource, strings.Join(h.Devices, ","))
	}
	return b.String()
}

func describeFailure(f *Failure) string {
	if f.Message == "" {
		return "failure " + f.Kind + "\n"
	}
	return fmt.Sprintf("failure %s: %s\n", f.Kind, f.Message)
}

func orNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ",")
}
