package phrase

import (
	"math"
	"strconv"
)

// Rate writes n per second over seconds: without decimals from 100 up, one
// decimal below, "-" when no time passed.
func Rate(n, seconds float64) string {
	if seconds <= 0 {
		return "-"
	}
	r := n / seconds
	if r >= 100 {
		return strconv.FormatFloat(math.Round(r), 'f', 0, 64)
	}
	return strconv.FormatFloat(r, 'f', 1, 64)
}

// Stat writes a statistic with at most four decimals and no trailing zeros.
func Stat(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64)
}

// RoundMilli keeps three decimals of a figure (seconds, hours) for JSON:
// enough to read, short.
func RoundMilli(v float64) float64 {
	return math.Round(v*1000) / 1000
}

// RoundMicro keeps six decimals of a statistic for JSON: enough to read,
// short.
func RoundMicro(v float64) float64 {
	return math.Round(v*1e6) / 1e6
}
