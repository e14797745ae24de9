package prober

import "fmt"

// InputError is bad input the core refuses: a container ID that is not
// "<runtime>://<id>", a step out of turn, a collection past its bound, a
// probe that was not defaulted. Field names the value, Rule the rule it
// breaks. Nothing changes when one is returned.
type InputError struct {
	Field, Rule string
}

func (e *InputError) Error() string { return e.Field + ": " + e.Rule }

func inputErrorf(field, format string, args ...any) *InputError {
	return &InputError{Field: field, Rule: fmt.Sprintf(format, args...)}
}
