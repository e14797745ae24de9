package imagegc

import (
	"fmt"
	"strings"
)

// InputError is bad input: a view, a filesystem reading or a protocol
// misuse the core refuses. Field names the value (images[3].sizeBytes),
// Rule the rule it breaks. Nothing changes when one is returned.
type InputError struct {
	Field, Rule string
}

func (e *InputError) Error() string { return e.Field + ": " + e.Rule }

func inputErrorf(field, format string, args ...any) *InputError {
	return &InputError{Field: field, Rule: fmt.Sprintf(format, args...)}
}

// aggregateError prints a list of errors as apimachinery's
// utilerrors.Aggregate does: one error alone as its text, several
// deduplicated by text, joined with ", " inside brackets. Nested
// aggregates are flattened, as upstream's visit does.
type aggregateError []error

// aggregate returns nil for no errors, as utilerrors.NewAggregate.
func aggregate(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return aggregateError(errs)
}

func (a aggregateError) Error() string {
	if len(a) == 1 {
		return a[0].Error()
	}
	var texts []string
	seen := map[string]bool{}
	a.visit(func(err error) {
		if msg := err.Error(); !seen[msg] {
			seen[msg] = true
			texts = append(texts, msg)
		}
	})
	if len(texts) == 1 {
		return texts[0]
	}
	return "[" + strings.Join(texts, ", ") + "]"
}

func (a aggregateError) visit(f func(error)) {
	for _, err := range a {
		if nested, ok := err.(aggregateError); ok {
			nested.visit(f)
			continue
		}
		f(err)
	}
}

// Unwrap lets errors.Is and errors.As see the runtime's errors, as
// upstream's Aggregate.Is does.
func (a aggregateError) Unwrap() []error { return a }
