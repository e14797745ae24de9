package reportview

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Table is a JSON array of objects whose shape the report does not own
// (linearizability histories, conformance comparisons, plugin check runs)
// as a table: what code reads, and what a reviewer reads.
type Table struct {
	// Columns are the objects' keys in order of first appearance.
	Columns []string
	// Cells holds one row per object, aligned with Columns: a string as it
	// is, any other value as compact JSON, "" for a missing key. The
	// verdict and the matrix read these.
	Cells [][]string
	// Headings are the columns in words ("Check time" for check_seconds)
	// and Figures the cells as a reviewer reads them ("1.3 ms" for
	// 0.00134383): what index.html and report.md show.
	Headings []string
	Figures  [][]string
}

// ParseTable reads a JSON array of objects; it returns the objects as
// they are, for report.json to keep verbatim, and their table.
func ParseTable(data []byte) ([]json.RawMessage, Table, error) {
	rows := []json.RawMessage{}
	var t Table
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, t, fmt.Errorf("want a JSON array of objects: %v", err)
	}
	column := map[string]int{}
	objects := make([]map[string]json.RawMessage, 0, len(rows))
	for i, raw := range rows {
		keys, values, err := objectFields(raw)
		if err != nil {
			return nil, t, fmt.Errorf("element %d: %v", i, err)
		}
		for _, k := range keys {
			if _, ok := column[k]; !ok {
				column[k] = len(t.Columns)
				t.Columns = append(t.Columns, k)
				t.Headings = append(t.Headings, Heading(k))
			}
		}
		objects = append(objects, values)
	}
	for _, values := range objects {
		cells := make([]string, len(t.Columns))
		figures := make([]string, len(t.Columns))
		for k, v := range values {
			cells[column[k]] = cellText(v)
			figures[column[k]] = Figure(k, v)
		}
		t.Cells = append(t.Cells, cells)
		t.Figures = append(t.Figures, figures)
	}
	return rows, t, nil
}

// objectFields returns an object's keys in document order and each key's
// last value.
func objectFields(raw json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("not a JSON object")
	}
	var keys []string
	values := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key := tok.(string) // inside an object the decoder only yields string keys here
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, nil, err
		}
		if _, dup := values[key]; !dup {
			keys = append(keys, key)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, value); err != nil {
			return nil, nil, err
		}
		values[key] = compact.Bytes()
	}
	return keys, values, nil
}

// cellText is a value as code reads it: a string as it is, anything else
// as (compact) JSON.
func cellText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// secondsSuffix marks a key whose value is a duration in seconds, the
// unit every nodeproof result file uses ("check_seconds", "seconds").
const secondsSuffix = "seconds"

// Heading is a key in words: underscores as spaces, the first letter
// capitalised, and a duration in seconds called a time, since its figure
// carries its own unit ("check_seconds" is "Check time").
func Heading(key string) string {
	words := strings.Fields(strings.ReplaceAll(key, "_", " "))
	if n := len(words); n > 0 && words[n-1] == secondsSuffix {
		words[n-1] = "time"
	}
	if len(words) == 0 {
		return key
	}
	s := strings.Join(words, " ")
	return strings.ToUpper(s[:1]) + s[1:]
}

// Figure is a value as a reviewer reads it: a duration in seconds with a
// unit fit to its size, any other number rounded to three significant
// digits (an integer stays whole), and everything else as code reads it.
func Figure(key string, v json.RawMessage) string {
	var n float64
	if json.Unmarshal(v, &n) != nil {
		return cellText(v)
	}
	if key == secondsSuffix || strings.HasSuffix(key, "_"+secondsSuffix) {
		return Duration(n)
	}
	return Number(n)
}

// Duration is a number of seconds in µs, ms, s or min, whichever keeps it
// between 1 and 1000 (min from a minute on), with one decimal below 10:
// 0.00134383 is "1.3 ms", 42.5 is "42 s".
func Duration(seconds float64) string {
	switch abs := math.Abs(seconds); {
	case abs == 0:
		return "0 s"
	case abs < 1e-3:
		return decimal(seconds*1e6) + " µs"
	case abs < 1:
		return decimal(seconds*1e3) + " ms"
	case abs < 60:
		return decimal(seconds) + " s"
	}
	return decimal(seconds/60) + " min"
}

// decimal keeps one decimal below 10 and none from 10 on, 9.96 included.
func decimal(v float64) string {
	if math.Abs(math.Round(v*10)/10) < 10 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// Number is a number with at most three significant digits, or whole
// when it is whole or 100 or more.
func Number(v float64) string {
	if v == math.Trunc(v) || math.Abs(v) >= 100 {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
