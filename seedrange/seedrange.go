package seedrange

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse reads "A..B", two whole numbers with B at least A. Its errors read
// after the name of the flag or field the range came from:
// "--seeds must be a range ...", "--seeds \"5..1\": the range's end ...".
func Parse(s string) (first, last uint64, err error) {
	a, b, ok := strings.Cut(s, "..")
	if ok {
		first, err = strconv.ParseUint(a, 10, 64)
	}
	if ok && err == nil {
		last, err = strconv.ParseUint(b, 10, 64)
	}
	if !ok || err != nil {
		return 0, 0, fmt.Errorf("must be a range A..B of seeds (whole numbers from 0), got %q", s)
	}
	if last < first {
		return 0, 0, fmt.Errorf("%q: the range's end %d is below its start %d", s, last, first)
	}
	return first, last, nil
}
