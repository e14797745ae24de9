package mutants

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// alongsidePackages are the trees whose tests are deterministic and touch
// nothing on the host: generated cases over pure cores and models, with
// no timing bounds, sockets, cgroups or runtimes. A mutant whose packages
// all lie in them may run beside another; the CPU they share only makes
// each slower. The others (the agents' and the plugin checker's tests
// with call bounds, the integration tests with real cgroups and
// containerd, the linearizability workloads) run alone, as they do under
// go test, so that a kill is never the load's doing.
var alongsidePackages = []string{"./core/", "./models/", "./properties", "./sim/", "./verify", "./findings", "./fuzz", "./upstream"}

// RunsAlongside reports whether m's tests may run beside another mutant's.
func RunsAlongside(m Mutant) bool {
	for _, p := range m.Packages {
		if !slices.ContainsFunc(alongsidePackages, func(tree string) bool { return strings.HasPrefix(p, tree) }) {
			return false
		}
	}
	return len(m.Packages) > 0
}

// RunAll runs every mutant with Run, at most jobs at a time, those that do
// not RunsAlongside alone, and calls done once per mutant, one call at a
// time, in the order they finish. It returns when every mutant has run or,
// once ctx is done, when those already started have stopped.
func RunAll(ctx context.Context, root string, ms []Mutant, opts Options, jobs int, done func(i int, r Result)) {
	schedule(ctx, ms, jobs, func(m Mutant) Result { return Run(ctx, root, m, opts) }, done)
}

// schedule is RunAll's scheduling, with the run of one mutant given.
func schedule(ctx context.Context, ms []Mutant, jobs int, run func(Mutant) Result, done func(i int, r Result)) {
	jobs = max(jobs, 1)
	// slots holds the free job slots; a mutant that runs alone takes all.
	slots := make(chan struct{}, jobs)
	for range jobs {
		slots <- struct{}{}
	}
	var (
		report sync.Mutex
		wg     sync.WaitGroup
	)
	for i, m := range ms {
		need := 1
		if !RunsAlongside(m) {
			need = jobs
		}
		for range need {
			<-slots
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := run(m)
			report.Lock()
			done(i, r)
			report.Unlock()
			for range need {
				slots <- struct{}{}
			}
		}()
	}
	wg.Wait()
}
