package prober

import "sort"

// Update is what a results cache publishes when a container's result
// changes or first appears (upstream's results.Update, with the probe type
// of the cache that sent it).
type Update struct {
	Type        ProbeType
	ContainerID string
	Result      Result
	PodUID      string
}

// Results is one probe type's results cache (pkg/kubelet/prober/results),
// keyed by container ID. The zero value is not usable; NewResults makes
// one.
type Results struct {
	probeType ProbeType
	cache     map[string]Result
}

// NewResults returns an empty cache for probe type t.
func NewResults(t ProbeType) *Results {
	return &Results{probeType: t, cache: map[string]Result{}}
}

// Get returns the cached result of a container.
func (r *Results) Get(containerID string) (Result, bool) {
	res, ok := r.cache[containerID]
	return res, ok
}

// Set caches a result and returns the update upstream's Set sends on its
// channel, only when the result is new or differs from the cached one.
func (r *Results) Set(containerID string, result Result, podUID string) (Update, bool) {
	if prev, ok := r.cache[containerID]; ok && prev == result {
		return Update{}, false
	}
	r.cache[containerID] = result
	return Update{Type: r.probeType, ContainerID: containerID, Result: result, PodUID: podUID}, true
}

// Remove forgets a container's result; it publishes nothing.
func (r *Results) Remove(containerID string) { delete(r.cache, containerID) }

// Entry is one cached result.
type Entry struct {
	ContainerID string
	Result      Result
}

// Entries returns the cache in container ID order.
func (r *Results) Entries() []Entry {
	out := make([]Entry, 0, len(r.cache))
	for id, res := range r.cache {
		out = append(out, Entry{id, res})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ContainerID < out[j].ContainerID })
	return out
}
