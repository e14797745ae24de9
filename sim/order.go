package sim

import "sort"

// sortedKeys returns a map's keys in order, so that no map order reaches
// the run's behaviour.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
