package properties

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// rapidFailFileVersion is the version line of the fail files that
// pgregory.net/rapid v1.3.0 (go.mod) writes and replays: rapidVersion in its
// persist.go. rapid ignores a file of another version without a word and
// generates a new case instead, so replay checks it first.
const rapidFailFileVersion = "v0.4.8"

// maxFailFileBytes bounds what ReadFailFile reads. A fail file holds one
// shrunk case, its draws and its log: kilobytes, not megabytes.
const maxFailFileBytes = 16 << 20

// failFileLogRE matches a line of the test's log that rapid copies into a
// fail file as a comment, naming the test, then the logged line: "#
// 2026/11/22 21:33:04.359033 [TestSuites/cgroups] step 1: ...".
var failFileLogRE = regexp.MustCompile(`^# \d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{6} \[([^\]]+)\] (.*)`)

// FailFileCase is the case a rapid fail file records.
type FailFileCase struct {
	// Test is the test that wrote it, such as TestSuites/cgroups.
	Test string
	// Seed is the seed of the failing case; 0 when rapid had none.
	Seed uint64
	// Draws counts the recorded draws.
	Draws int
	// Steps counts the step lines of the case's log: the steps it ran up
	// to its failure.
	Steps int
}

// Suite is the suite the case's test ran: the last element of
// TestSuites/<suite>, as `go test ./properties/suites` names it.
func (c FailFileCase) Suite() string {
	return c.Test[strings.LastIndex(c.Test, "/")+1:]
}

// ReadFailFile reads a rapid fail file as rapid's loadFailFile does, and
// refuses what rapid would silently skip: a file that is empty, of another
// format version or not a fail file at all, or whose draws do not parse.
// Errors say why, without the path.
func ReadFailFile(path string) (FailFileCase, error) {
	var c FailFileCase
	f, err := os.Open(path)
	if err != nil {
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			return c, pathErr.Err
		}
		return c, err
	}
	defer f.Close()
	// rapid reads lines with a default bufio.Scanner too, so a line it
	// cannot read is one this refuses.
	scanner := bufio.NewScanner(io.LimitReader(f, maxFailFileBytes+1))
	var (
		lines, read int
		data        []string
		dataLines   []int
	)
	for scanner.Scan() {
		lines++
		read += len(scanner.Bytes()) + 1
		s := strings.TrimSpace(scanner.Text())
		if m := failFileLogRE.FindStringSubmatch(s); m != nil {
			if c.Test == "" {
				c.Test = m[1]
			}
			if stepRE.MatchString(m[2]) {
				c.Steps++
			}
		}
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		data = append(data, s)
		dataLines = append(dataLines, lines)
	}
	switch {
	case read > maxFailFileBytes:
		return c, fmt.Errorf("larger than %d MiB: not a rapid fail file", maxFailFileBytes>>20)
	case scanner.Err() != nil:
		return c, fmt.Errorf("not a rapid fail file: line %d: %v", lines+1, scanner.Err())
	case lines == 0:
		return c, errors.New("empty: no recorded case")
	case len(data) == 0:
		return c, errors.New("holds no recorded case, only comments")
	}

	version, seed, ok := strings.Cut(data[0], "#")
	if !ok || strings.Contains(seed, "#") {
		return c, fmt.Errorf("not a rapid fail file: line %d %q is not rapid's VERSION#SEED line", dataLines[0], shorten(data[0]))
	}
	if version != rapidFailFileVersion {
		return c, fmt.Errorf("written in rapid's format %q; this nodeproof's rapid (pgregory.net/rapid v1.3.0) reads %q only", shorten(version), rapidFailFileVersion)
	}
	if c.Seed, err = strconv.ParseUint(seed, 10, 64); err != nil {
		return c, fmt.Errorf("line %d: seed %q is not a number", dataLines[0], shorten(seed))
	}
	for i, d := range data[1:] {
		if _, err := strconv.ParseUint(d, 0, 64); err != nil {
			return c, fmt.Errorf("line %d: %q is not a recorded draw (a 64-bit number such as 0x1f)", dataLines[i+1], shorten(d))
		}
	}
	c.Draws = len(data) - 1
	switch {
	case c.Draws == 0:
		return c, errors.New("records no draws: no case to replay")
	case c.Test == "":
		return c, errors.New("names no test: rapid starts each line of the test's log, the comments, with [TEST]")
	}
	return c, nil
}

// shorten keeps a quoted line of a foreign file readable.
func shorten(s string) string {
	const most = 60
	if len(s) <= most {
		return s
	}
	return s[:most] + "..."
}
