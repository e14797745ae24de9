package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/kubernetes/pkg/kubelet/checkpointmanager"
	cperrors "k8s.io/kubernetes/pkg/kubelet/checkpointmanager/errors"
	upstream "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/checkpoint"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
)

// Which checkpoint files are accepted: a file is read by nodeproof
// (checkpoint.Read, then File.Verify) and by the kubelet's own read path
// (checkpointmanager.GetCheckpoint into the device manager's checkpoint
// type: the file store, UnmarshalCheckpoint, VerifyChecksum). Both must
// load the same files with the same content, and refuse the same files in
// the same way: as corrupted (the checksum over the decoded content differs
// from the stored one, content and both checksums compared) or as
// unreadable.
//
// The files are what the kubelet writes for generated content, then
// optionally changed by mutations (byte flips, insertions, deletions), which
// may be resealed (the checksum recomputed by upstream over what upstream
// decodes, so that odd content reaches the checksum comparison), then
// optionally respelled in ways encoding/json reads as the same content
// (reindented, whitespace, key order, letter case, escapes, number
// spellings, unknown and repeated keys) or as broken (the checksum as 1e0).

// acceptInput is one generated file and how it was made.
type acceptInput struct {
	Steps []string
	File  string // a string so that a mismatch report shows it readably
}

// acceptVerdict is what a reader makes of a file.
type acceptVerdict struct {
	Outcome string // "loads", "corrupted" or "unreadable"
	// Data, Stored and Computed are compared for loads and corrupted.
	Data             checkpoint.Data
	Stored, Computed uint64
}

const (
	outcomeLoads      = "loads"
	outcomeCorrupted  = "corrupted"
	outcomeUnreadable = "unreadable"
)

func TestCheckpointAccept(t *testing.T) {
	dir := t.TempDir()
	mgr, err := checkpointmanager.NewCheckpointManager(dir)
	if err != nil {
		t.Fatal(err)
	}
	const key = "kubelet_internal_checkpoint"
	path := filepath.Join(dir, key)
	tally := map[string]int{}
	nonCanonicalLoads := 0

	res := Compare(t, Comparison[acceptInput, acceptVerdict]{
		Name: "checkpoint.Accept",
		Gen:  genAcceptInput(),
		Ours: func(in acceptInput) acceptVerdict {
			f, err := checkpoint.Read([]byte(in.File))
			switch {
			case err != nil:
				return acceptVerdict{Outcome: outcomeUnreadable}
			case f.Verify() != nil:
				return acceptVerdict{Outcome: outcomeCorrupted, Data: f.Data, Stored: f.StoredChecksum, Computed: f.ComputedChecksum}
			}
			if !f.Canonical() {
				nonCanonicalLoads++
			}
			return acceptVerdict{Outcome: outcomeLoads, Data: f.Data}
		},
		Theirs: func(in acceptInput) acceptVerdict {
			if err := os.WriteFile(path, []byte(in.File), 0o600); err != nil {
				panic(err)
			}
			cp := upstream.New(nil, nil)
			err := mgr.GetCheckpoint(key, cp)
			v := acceptVerdict{Outcome: outcomeLoads}
			if ce, ok := errors.AsType[*cperrors.CorruptCheckpointError](err); ok {
				v = acceptVerdict{Outcome: outcomeCorrupted, Stored: ce.ExpectedCS, Computed: ce.ActualCS}
			} else if err != nil {
				v = acceptVerdict{Outcome: outcomeUnreadable}
			}
			if v.Outcome != outcomeUnreadable {
				v.Data = fromUpstream(cp.GetData())
			}
			tally[v.Outcome]++
			return v
		},
	})
	t.Logf("%d cases, %d mismatches; upstream's verdicts: %d load (%d of them non-canonical), %d corrupted, %d unreadable",
		res.Cases, res.Mismatches, tally[outcomeLoads], nonCanonicalLoads, tally[outcomeCorrupted], tally[outcomeUnreadable])
	// A generator that stopped producing one kind of file would make the
	// comparison pass while checking less; each kind must be common.
	for _, n := range []int{tally[outcomeLoads] - nonCanonicalLoads, nonCanonicalLoads, tally[outcomeCorrupted], tally[outcomeUnreadable]} {
		if n < res.Cases/50 {
			t.Errorf("the generated files are lopsided: %v, %d non-canonical loads, of %d cases", tally, nonCanonicalLoads, res.Cases)
			break
		}
	}
}

// fromUpstream converts what upstream's checkpoint holds, keeping nil as nil.
func fromUpstream(entries []upstream.PodDevicesEntry, devices map[string][]string) checkpoint.Data {
	var out checkpoint.Data
	if entries != nil {
		out.PodDeviceEntries = []checkpoint.PodDevicesEntry{}
	}
	for _, e := range entries {
		var ids checkpoint.DevicesPerNUMA
		if e.DeviceIDs != nil {
			ids = checkpoint.DevicesPerNUMA(e.DeviceIDs)
		}
		out.PodDeviceEntries = append(out.PodDeviceEntries, checkpoint.PodDevicesEntry{PodUID: e.PodUID,
			ContainerName: e.ContainerName, ResourceName: e.ResourceName, DeviceIDs: ids, AllocResp: e.AllocResp})
	}
	out.RegisteredDevices = devices
	return out
}

// marshalUpstream is the file the kubelet writes for d.
func marshalUpstream(d checkpoint.Data) []byte {
	b, err := toUpstream(d).MarshalCheckpoint()
	if err != nil {
		panic(err)
	}
	return b
}

// checksumSuffix ends every file the kubelet writes.
var checksumSuffix = regexp.MustCompile(`,"Checksum":[0-9]+}$`)

func genAcceptInput() *rapid.Generator[acceptInput] {
	return rapid.Custom(func(t *rapid.T) acceptInput {
		var in acceptInput
		step := func(format string, args ...any) { in.Steps = append(in.Steps, fmt.Sprintf(format, args...)) }
		file := marshalUpstream(genCheckpoint().Draw(t, "content"))

		switch rapid.IntRange(0, 3).Draw(t, "mutation") {
		case 1: // anywhere, the checksum included
			file = mutate(t, file, len(file), step)
		case 2: // in the content only, then resealed
			body := checksumSuffix.FindIndex(file)[0]
			file = reseal(mutate(t, file[:body], body, step), file[body:], step)
		case 3: // in the content only
			body := checksumSuffix.FindIndex(file)[0]
			file = append(mutate(t, file[:body], body, step), file[body:]...)
		}

		for range rapid.IntRange(0, 3).Draw(t, "respellings") {
			name := rapid.SampledFrom(respellingNames).Draw(t, "respelling")
			step("%s", name)
			file = respellings[name](t, file)
		}
		in.File = string(file)
		return in
	})
}

// mutate changes b, within its first n bytes, by one to three byte flips,
// insertions, deletions or changed characters of strings.
func mutate(t *rapid.T, b []byte, n int, step func(string, ...any)) []byte {
	b = bytes.Clone(b)
	for range rapid.IntRange(1, 3).Draw(t, "mutations") {
		if n == 0 {
			break
		}
		at := rapid.IntRange(0, n-1).Draw(t, "at")
		switch rapid.IntRange(0, 3).Draw(t, "kind") {
		case 0:
			bit := byte(1) << rapid.IntRange(0, 7).Draw(t, "bit")
			b[at] ^= bit
			step("flip bit %#x of byte %d", bit, at)
		case 1:
			c := rapid.SampledFrom([]byte(`{}[],:"\ 019aeflnrstuxz+-.`+"\n\xff\xc3")).Draw(t, "byte")
			b = append(b[:at], append([]byte{c}, b[at:]...)...)
			n++
			step("insert %q at %d", c, at)
		case 2:
			// A character of a string changes, which keeps the file JSON:
			// the content changes, or turns invalid UTF-8 into U+FFFD.
			var inside []int
			forEachOutsideStrings(b[:n], func(i int, c byte, inString bool) {
				if inString && c != '"' && c != '\\' {
					inside = append(inside, i)
				}
			})
			if len(inside) == 0 {
				continue
			}
			at = inside[rapid.IntRange(0, len(inside)-1).Draw(t, "in string")]
			c := rapid.SampledFrom([]byte("aZ0 ._-\xff\xc3\x80")).Draw(t, "character")
			b[at] = c
			step("set byte %d, in a string, to %q", at, c)
		default:
			k := min(rapid.IntRange(1, 4).Draw(t, "length"), n-at)
			b = append(b[:at], b[at+k:]...)
			n -= k
			step("delete %d bytes at %d", k, at)
		}
	}
	return b
}

// reseal appends to a changed body the suffix with the checksum upstream
// computes over what upstream decodes from it, if it decodes.
func reseal(body, suffix []byte, step func(string, ...any)) []byte {
	file := append(bytes.Clone(body), suffix...)
	cp := upstream.New(nil, nil)
	if cp.UnmarshalCheckpoint(file) != nil {
		return file
	}
	sealed, err := upstream.New(cp.GetData()).MarshalCheckpoint()
	if err != nil {
		return file
	}
	step("reseal")
	return append(bytes.Clone(body), checksumSuffix.Find(sealed)...)
}

var respellingNames = []string{
	"reindent", "whitespace", "trailing newline", "key order", "letter case", "escapes",
	"NUMA key spelling", "unknown field", "repeated key", "base64 line break", "checksum spelling",
}

// respellings change a file's bytes. All but "checksum spelling" keep what
// encoding/json decodes (the repeated keys may merge maps); a file that is
// no longer JSON is passed on as it is.
var respellings = map[string]func(*rapid.T, []byte) []byte{
	"reindent": func(t *rapid.T, b []byte) []byte {
		var out bytes.Buffer
		if json.Indent(&out, b, rapid.SampledFrom([]string{"", " "}).Draw(t, "prefix"), rapid.SampledFrom([]string{"  ", "\t", "    ", ""}).Draw(t, "indent")) != nil {
			return b
		}
		return out.Bytes()
	},
	"whitespace": func(t *rapid.T, b []byte) []byte {
		ws := rapid.SampledFrom([]string{" ", "\n", "\t", "\r\n", " \n\t "})
		var out []byte
		out = append(out, ws.Draw(t, "leading")...)
		forEachOutsideStrings(b, func(i int, c byte, inString bool) {
			out = append(out, c)
			if !inString && strings.IndexByte("{}[],:", c) >= 0 && rapid.IntRange(0, 3).Draw(t, "space here") == 0 {
				out = append(out, ws.Draw(t, "space")...)
			}
		})
		return out
	},
	"trailing newline": func(t *rapid.T, b []byte) []byte { return append(b, '\n') },
	"key order": func(t *rapid.T, b []byte) []byte {
		v, err := parseOrdered(json.NewDecoder(bytes.NewReader(b)))
		if err != nil {
			return b
		}
		return v.render(t)
	},
	"letter case": func(t *rapid.T, b []byte) []byte {
		return fieldKey.ReplaceAllFunc(b, func(k []byte) []byte {
			var out []byte
			for _, r := range string(k) {
				switch rapid.IntRange(0, 5).Draw(t, "case") {
				case 0:
					r = []rune(strings.ToUpper(string(r)))[0]
				case 1:
					r = []rune(strings.ToLower(string(r)))[0]
				case 2:
					// encoding/json folds the Kelvin sign to k and the long
					// s to s.
					switch r {
					case 'k':
						r = '\u212a'
					case 's':
						r = '\u017f'
					}
				}
				out = utf8.AppendRune(out, r)
			}
			return out
		})
	},
	"escapes": func(t *rapid.T, b []byte) []byte {
		var out []byte
		kept := 0 // bytes left of an escape sequence already in b
		forEachOutsideStrings(b, func(i int, c byte, inString bool) {
			switch {
			case kept > 0:
				kept--
				if c == 'u' {
					kept = 4
				}
				out = append(out, c)
			case !inString || c == '"':
				out = append(out, c)
			case c == '\\':
				kept = 1
				out = append(out, c)
			case c < utf8.RuneSelf && rapid.IntRange(0, 3).Draw(t, "escape") == 0:
				if c == '/' && rapid.Bool().Draw(t, "slash") {
					out = append(out, `\/`...)
				} else {
					out = fmt.Appendf(out, rapid.SampledFrom([]string{`\u%04x`, `\u%04X`}).Draw(t, "hex case"), c)
				}
			default:
				out = append(out, c)
			}
		})
		return escapeRunes(t, out)
	},
	"NUMA key spelling": func(t *rapid.T, b []byte) []byte {
		return numaKey.ReplaceAllFunc(b, func(k []byte) []byte {
			n, err := strconv.ParseInt(string(k[1:len(k)-2]), 10, 64)
			if err != nil {
				return k
			}
			sign := ""
			if n < 0 {
				sign, n = "-", -n
			} else if rapid.Bool().Draw(t, "plus") {
				sign = "+"
			}
			zeros := strings.Repeat("0", rapid.IntRange(0, 2).Draw(t, "zeros"))
			return fmt.Appendf(nil, `"%s%s%d":`, sign, zeros, n)
		})
	},
	"unknown field": func(t *rapid.T, b []byte) []byte {
		value := rapid.SampledFrom([]string{`1`, `1e5`, `-0.5`, `null`, `true`, `"s"`, `[1,{"a":[]}]`, `{"b":null}`}).Draw(t, "value")
		return insertMember(t, b, fmt.Sprintf(`"Extra%d":%s`, rapid.IntRange(0, 9).Draw(t, "name"), value))
	},
	"repeated key": func(t *rapid.T, b []byte) []byte {
		// Inserted first in an object, so the file's own member comes
		// later and, for a string or number, wins.
		return insertMember(t, b, rapid.SampledFrom([]string{
			`"PodUID":"shadow"`, `"Checksum":7`, `"Data":null`, `"AllocResp":"AAAA"`, `"DeviceIDs":{"5":["shadow"]}`,
			`"RegisteredDevices":{"shadow":null}`, `"PodDeviceEntries":[{"PodUID":"shadow"}]`,
		}).Draw(t, "member"))
	},
	"base64 line break": func(t *rapid.T, b []byte) []byte {
		return allocResp.ReplaceAllFunc(b, func(v []byte) []byte {
			at := rapid.IntRange(len(`"AllocResp":"`), len(v)-1).Draw(t, "break at")
			brk := rapid.SampledFrom([]string{`\n`, `\r\n`, `\r`}).Draw(t, "break")
			return append(bytes.Clone(v[:at]), append([]byte(brk), v[at:]...)...)
		})
	},
	"checksum spelling": func(t *rapid.T, b []byte) []byte {
		return checksumValue.ReplaceAllFunc(b, func(v []byte) []byte {
			i := bytes.IndexByte(v, ':') + 1
			n := string(v[i:])
			spelled := rapid.SampledFrom([]string{n + "e0", n + ".0", "0" + n, "-" + n, `"` + n + `"`, n + "0000000000000000000000"}).Draw(t, "checksum")
			return append(bytes.Clone(v[:i]), spelled...)
		})
	},
}

var (
	fieldKey      = regexp.MustCompile(`"(Data|Checksum|PodDeviceEntries|RegisteredDevices|PodUID|ContainerName|ResourceName|DeviceIDs|AllocResp)"`)
	numaKey       = regexp.MustCompile(`"-?[0-9]+":`)
	allocResp     = regexp.MustCompile(`"AllocResp":"[A-Za-z0-9+/=]+`)
	checksumValue = regexp.MustCompile(`"Checksum":[0-9]+`)
)

// forEachOutsideStrings calls f for every byte of b, saying whether it is
// part of a JSON string, its quotes included.
func forEachOutsideStrings(b []byte, f func(i int, c byte, inString bool)) {
	inString, escaped := false, false
	for i, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
			if !inString {
				f(i, c, true)
				continue
			}
		}
		f(i, c, inString)
	}
}

// escapeRunes writes some multi-byte runes inside strings as \u escapes,
// those beyond the BMP as surrogate pairs.
func escapeRunes(t *rapid.T, b []byte) []byte {
	var out []byte
	inString, escaped := false, false
	for i := 0; i < len(b); {
		c := b[i]
		if inString && !escaped && c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(b[i:])
			if r != utf8.RuneError && rapid.Bool().Draw(t, "escape rune") {
				if r > 0xffff {
					r -= 0x10000
					out = fmt.Appendf(out, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
				} else {
					out = fmt.Appendf(out, `\u%04x`, r)
				}
				i += size
				continue
			}
		}
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		}
		out = append(out, c)
		i++
	}
	return out
}

// insertMember puts member first in a random object of b.
func insertMember(t *rapid.T, b []byte, member string) []byte {
	var opens []int
	forEachOutsideStrings(b, func(i int, c byte, inString bool) {
		if !inString && c == '{' {
			opens = append(opens, i)
		}
	})
	if len(opens) == 0 {
		return b
	}
	at := opens[rapid.IntRange(0, len(opens)-1).Draw(t, "object")] + 1
	rest := bytes.TrimLeft(b[at:], " \t\r\n")
	if len(rest) > 0 && rest[0] != '}' {
		member += ","
	}
	return append(bytes.Clone(b[:at]), append([]byte(member), b[at:]...)...)
}

// ordered is a JSON value that keeps its object members in file order,
// repeated keys included, and its numbers as written.
type ordered struct {
	scalar  json.RawMessage // a string, number, boolean or null
	array   []ordered
	object  []member
	isArray bool
}

type member struct {
	key   string
	value ordered
}

func parseOrdered(dec *json.Decoder) (ordered, error) {
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return ordered{}, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		var v ordered
		v.isArray = tok == '['
		if !v.isArray {
			v.object = []member{}
		}
		for dec.More() {
			if v.isArray {
				e, err := parseOrdered(dec)
				if err != nil {
					return ordered{}, err
				}
				v.array = append(v.array, e)
				continue
			}
			k, err := dec.Token()
			if err != nil {
				return ordered{}, err
			}
			e, err := parseOrdered(dec)
			if err != nil {
				return ordered{}, err
			}
			v.object = append(v.object, member{k.(string), e})
		}
		_, err := dec.Token() // the closing delimiter
		return v, err
	case json.Number:
		return ordered{scalar: json.RawMessage(tok)}, nil
	default:
		b, err := json.Marshal(tok)
		return ordered{scalar: b}, err
	}
}

// render writes v compactly with every object's members in a drawn order.
func (v ordered) render(t *rapid.T) []byte {
	switch {
	case v.scalar != nil:
		return v.scalar
	case v.isArray:
		out := []byte{'['}
		for i, e := range v.array {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, e.render(t)...)
		}
		return append(out, ']')
	}
	out := []byte{'{'}
	for i, j := range rapid.Permutation(indexes(len(v.object))).Draw(t, "order") {
		if i > 0 {
			out = append(out, ',')
		}
		k, _ := json.Marshal(v.object[j].key)
		out = append(append(append(out, k...), ':'), v.object[j].value.render(t)...)
	}
	return append(out, '}')
}

func indexes(n int) []int {
	l := make([]int, n)
	for i := range l {
		l[i] = i
	}
	return l
}
