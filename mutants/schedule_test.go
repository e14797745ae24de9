package mutants

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunsAlongside(t *testing.T) {
	assert.True(t, RunsAlongside(Mutant{Packages: []string{"./properties/..."}}))
	assert.True(t, RunsAlongside(Mutant{Packages: []string{"./core/pod/...", "./fuzz/manifests/..."}}))
	assert.False(t, RunsAlongside(Mutant{Packages: []string{"./properties", "./linearizability"}}), "one package with real sockets makes it run alone")
	assert.False(t, RunsAlongside(Mutant{Packages: []string{"./agent/plugincheck"}}))
	assert.False(t, RunsAlongside(Mutant{Packages: []string{"./integration"}}))
	assert.False(t, RunsAlongside(Mutant{}))
}

// TestScheduleOverlapsOnlyWhatMayRunAlongside runs two pure mutants that
// each wait for the other to start (so they must overlap), then one that
// must run alone, and checks the alone one never overlapped anything and
// every mutant was reported once.
func TestScheduleOverlapsOnlyWhatMayRunAlongside(t *testing.T) {
	pure := func(id string) Mutant { return Mutant{ID: id, Packages: []string{"./core/..."}} }
	ms := []Mutant{pure("a"), pure("b"), {ID: "alone", Packages: []string{"./integration"}}, pure("c")}
	started := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
	var (
		mu               sync.Mutex
		running, maxSeen int
		overlappedAlone  bool
	)
	run := func(m Mutant) Result {
		mu.Lock()
		running++
		maxSeen = max(maxSeen, running)
		if m.ID == "alone" && running > 1 {
			overlappedAlone = true
		}
		mu.Unlock()
		if ch, ok := started[m.ID]; ok {
			close(ch)
			other := map[string]string{"a": "b", "b": "a"}[m.ID]
			select {
			case <-started[other]:
			case <-time.After(10 * time.Second):
				t.Errorf("%s ran and %s never started beside it: the scheduler serialised two mutants that may run alongside", m.ID, other)
			}
		}
		mu.Lock()
		running--
		mu.Unlock()
		return Result{ID: m.ID}
	}
	reported := map[int]string{}
	schedule(context.Background(), ms, 2, run, func(i int, r Result) { reported[i] = r.ID })
	require.Equal(t, map[int]string{0: "a", 1: "b", 2: "alone", 3: "c"}, reported)
	assert.Equal(t, 2, maxSeen)
	assert.False(t, overlappedAlone, "a mutant that must run alone ran beside another")
}

func TestScheduleOneJobRunsInOrder(t *testing.T) {
	ms := []Mutant{{ID: "a", Packages: []string{"./core/..."}}, {ID: "b", Packages: []string{"./sim/..."}}}
	var order []string
	schedule(context.Background(), ms, 1, func(m Mutant) Result { return Result{ID: m.ID} }, func(_ int, r Result) { order = append(order, r.ID) })
	assert.Equal(t, []string{"a", "b"}, order)
}

func TestScheduleStopsStartingWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ms := []Mutant{{ID: "a", Packages: []string{"./core/..."}}, {ID: "b", Packages: []string{"./core/..."}}}
	var ran []string
	schedule(ctx, ms, 1, func(m Mutant) Result { cancel(); return Result{ID: m.ID} }, func(_ int, r Result) { ran = append(ran, r.ID) })
	assert.Equal(t, []string{"a"}, ran)
}
