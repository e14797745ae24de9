package reportview

import (
	"math"
	"strconv"
)

// Millis rounds seconds (or hours) to three decimals: the precision of
// every duration in report.json.
func Millis(seconds float64) float64 {
	return math.Round(seconds*1000) / 1000
}

// Micro keeps six decimals of a statistic: enough to read, short in JSON.
func Micro(v float64) float64 {
	return math.Round(v*1e6) / 1e6
}

// Stat prints a statistic with at most four decimals and no trailing zeros.
func Stat(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64)
}

// OrDash writes an empty string as "-".
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
