package properties

import (
	"fmt"

	"pgregory.net/rapid"
)

// Action is one step of a suite's state machine, drawn Weight times as
// often as an action of weight 1.
type Action struct {
	Weight int
	Do     func(*rapid.T)
}

// Actions builds the map rapid's Repeat takes: the weighted actions, and
// check under the key "", run after every step.
//
// Repeat draws one of the map's keys, in name order with a bias towards
// the first, so a suite weighs an action by the number of keys it appears
// under. An action of weight n appears under its name and then name#2 ...
// name#n: '#' sorts before every letter and digit, so the keys stay next to
// each other and the weight adds to the action's place in the order rather
// than moving it. Weights below 1 are a mistake in the suite and panic.
func Actions(check func(*rapid.T), actions map[string]Action) map[string]func(*rapid.T) {
	out := map[string]func(*rapid.T){"": check}
	for name, a := range actions {
		if name == "" || a.Weight < 1 || a.Do == nil {
			panic(fmt.Sprintf("properties: action %q needs a name, a weight of at least 1 and a step", name))
		}
		out[name] = a.Do
		for i := 2; i <= a.Weight; i++ {
			out[fmt.Sprintf("%s#%d", name, i)] = a.Do
		}
	}
	return out
}
