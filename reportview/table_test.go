package reportview

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseTable: code reads the values as they are, a reviewer reads
// headings in words and figures with their unit; the rows are kept
// verbatim for report.json.
func TestParseTable(t *testing.T) {
	rows, table, err := ParseTable([]byte(`[
		{"history": "seed 1", "unknown_outcomes": 7, "check_seconds": 0.00134383, "result": "Ok", "ratio": 0.123456, "findings": ["a", "b"]},
		{"history": "seed 2", "result": "Illegal", "passed": false, "result": "Unknown", "seconds": 75}]`))
	require.NoError(t, err)
	assert.Len(t, rows, 2)
	assert.JSONEq(t, `{"history": "seed 2", "result": "Illegal", "passed": false, "result": "Unknown", "seconds": 75}`, string(rows[1]), "verbatim")
	assert.Equal(t, []string{"history", "unknown_outcomes", "check_seconds", "result", "ratio", "findings", "passed", "seconds"}, table.Columns)
	assert.Equal(t, []string{"History", "Unknown outcomes", "Check time", "Result", "Ratio", "Findings", "Passed", "Time"}, table.Headings)
	assert.Equal(t, [][]string{
		{"seed 1", "7", "0.00134383", "Ok", "0.123456", `["a","b"]`, "", ""},
		{"seed 2", "", "", "Unknown", "", "", "false", "75"},
	}, table.Cells, "the values, a duplicate key's last")
	assert.Equal(t, [][]string{
		{"seed 1", "7", "1.3 ms", "Ok", "0.123", `["a","b"]`, "", ""},
		{"seed 2", "", "", "Unknown", "", "", "false", "1.2 min"},
	}, table.Figures)
}

func TestParseTableRefusesWhatIsNotAnArrayOfObjects(t *testing.T) {
	for input, want := range map[string]string{
		`{"a": 1}`:      "want a JSON array of objects",
		`[1, 2]`:        "element 0: not a JSON object",
		`[{"a": 1}, 3]`: "element 1: not a JSON object",
	} {
		_, _, err := ParseTable([]byte(input))
		assert.ErrorContains(t, err, want, input)
	}
}

func TestDuration(t *testing.T) {
	for seconds, want := range map[float64]string{
		0: "0 s", 0.00000042: "0.4 µs", 0.000250: "250 µs", 0.00134383: "1.3 ms", 0.00996: "10 ms", 0.0221: "22 ms",
		0.5: "500 ms", 2: "2.0 s", 42.5: "42 s", 59.9: "60 s", 90: "1.5 min", 3600: "60 min",
	} {
		assert.Equal(t, want, Duration(seconds), "%v s", seconds)
	}
}

func TestNumber(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 7: "7", 123456: "123456", 0.123456: "0.123", 12.3456: "12.3", 123.456: "123", -0.5: "-0.5",
	} {
		assert.Equal(t, want, Number(v), "%v", v)
	}
}

func TestFigure(t *testing.T) {
	for _, tc := range []struct{ key, value, want string }{
		{"check_seconds", "0.00134383", "1.3 ms"},
		{"seconds", "12.25", "12 s"},
		{"findings_seconds_total", "0.5", "0.5"}, // not a duration key: a plain number
		{"result", `"Ok"`, "Ok"},
		{"check_seconds", `"n/a"`, "n/a"}, // a string stays as written
		{"passed", "true", "true"},
		{"faults", "27", "27"},
	} {
		assert.Equal(t, tc.want, Figure(tc.key, json.RawMessage(tc.value)), "%s: %s", tc.key, tc.value)
	}
}

func TestHeading(t *testing.T) {
	for key, want := range map[string]string{
		"history": "History", "unknown_outcomes": "Unknown outcomes", "check_seconds": "Check time", "seconds": "Time",
		"killed_by": "Killed by", "": "", "_": "_",
	} {
		assert.Equal(t, want, Heading(key), "%q", key)
	}
}
