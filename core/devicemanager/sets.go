package devicemanager

import "sort"

// deviceSet is a set of device IDs. Every iteration over one goes through
// sorted, so the core never inherits Go's map order.
type deviceSet map[string]struct{}

func newDeviceSet(ids ...string) deviceSet {
	s := make(deviceSet, len(ids))
	for _, id := range ids {
		s[id] = struct{}{}
	}
	return s
}

func (s deviceSet) has(id string) bool {
	_, ok := s[id]
	return ok
}

func (s deviceSet) sorted() []string {
	ids := make([]string, 0, len(s))
	for id := range s {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func (s deviceSet) containsAll(other deviceSet) bool {
	for id := range other {
		if !s.has(id) {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
