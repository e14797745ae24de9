package checkpoint

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Decode reads a checkpoint file. It accepts only a file that verifies and is
// exactly what Encode writes for its data; whitespace, escapes, key order or
// number spellings that encoding/json would tolerate are refused, so that a
// file has one meaning only.
//
// A file that parses but whose checksum does not match yields a
// *CorruptError, as in the kubelet. Any other refusal is an error that names
// the field and the rule, among them a legacy V1 file (DeviceIDs as a list,
// which the kubelet stopped reading in v1.30) and a file over MaxFileBytes or
// MaxItems, refused before or while parsing, never after.
func Decode(b []byte) (Data, error) {
	if len(b) > MaxFileBytes {
		return Data{}, fmt.Errorf("checkpoint: file is %d bytes, over the limit of %d", len(b), MaxFileBytes)
	}
	p := parser{in: string(b)}
	d, stored, err := p.file()
	if err != nil {
		return Data{}, err
	}
	e := newEncoder(false, jsonWriter{compare: true, want: b})
	e.data(d)
	if uint64(e.hash.sum) != stored {
		return Data{}, &CorruptError{Actual: uint64(e.hash.sum), Expected: stored}
	}
	e.json.uint(stored)
	e.json.byte('}')
	if at, ok := e.json.canonical(); !ok {
		return Data{}, fmt.Errorf("checkpoint: not in canonical form (re-encoding differs at byte %d)", at)
	}
	return d, nil
}

// parser reads the JSON of a checkpoint file into Data. It knows the file's
// shape, so it refuses unknown fields and wrong types where they occur, with
// the path of the offending value; whatever it lets through that is not
// canonical, Decode's re-encoding catches.
//
// It reads a string copy of the file so that every string without escapes
// (nearly all of them) is a substring of that one copy rather than an
// allocation of its own.
type parser struct {
	in    string
	pos   int
	items int
	path  [6]frame // Data.PodDeviceEntries[i].DeviceIDs["n"][j] is the deepest
	depth int
	str   []byte // scratch for strings with escapes
}

// frame is one step of the path to the value being parsed.
type frame struct {
	name  string // field name, or map key when key is set
	key   bool
	index int // list index when name is "" and key is not set
}

func (p *parser) push(f frame) {
	p.path[p.depth] = f
	p.depth++
}

func (p *parser) pop() { p.depth-- }

func (p *parser) setIndex(i int) { p.path[p.depth-1].index = i }

// fail returns an error for the current path.
func (p *parser) fail(format string, args ...any) error {
	var b strings.Builder
	b.WriteString("checkpoint: ")
	for i, f := range p.path[:p.depth] {
		switch {
		case f.key:
			fmt.Fprintf(&b, "[%q]", f.name)
		case f.name == "":
			fmt.Fprintf(&b, "[%d]", f.index)
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.name)
		}
	}
	if p.depth > 0 {
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, format, args...)
	return errors.New(b.String())
}

// syntax reports malformed JSON at the current offset.
func (p *parser) syntax(want string) error {
	if p.pos >= len(p.in) {
		return p.fail("invalid JSON: input ends at byte %d, want %s", p.pos, want)
	}
	return p.fail("invalid JSON at byte %d: found %q, want %s", p.pos, p.in[p.pos], want)
}

func (p *parser) count() error {
	p.items++
	if p.items > MaxItems {
		return p.fail("more than %d items (entries, NUMA nodes, resources and device IDs)", MaxItems)
	}
	return nil
}

func (p *parser) space() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte, or 0 at the end.
func (p *parser) peek() byte {
	p.space()
	if p.pos < len(p.in) {
		return p.in[p.pos]
	}
	return 0
}

func (p *parser) expect(c byte) error {
	if p.peek() != c {
		return p.syntax(fmt.Sprintf("%q", c))
	}
	p.pos++
	return nil
}

// null consumes a null literal if one is next.
func (p *parser) null() bool {
	if p.peek() == 'n' && strings.HasPrefix(p.in[p.pos:], "null") {
		p.pos += 4
		return true
	}
	return false
}

// kind names the JSON value starting at the next byte, for type errors.
func (p *parser) kind() string {
	switch c := p.peek(); {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	case p.pos >= len(p.in):
		return "the end of the input"
	}
	return fmt.Sprintf("%q", p.in[p.pos])
}

// object starts an object: it consumes '{' and reports whether a member
// follows. next continues one after a member's value.
func (p *parser) object() (bool, error) {
	if err := p.expect('{'); err != nil {
		return false, err
	}
	if p.peek() == '}' {
		p.pos++
		return false, nil
	}
	return true, nil
}

func (p *parser) next(end byte) (bool, error) {
	switch p.peek() {
	case ',':
		p.pos++
		return true, nil
	case end:
		p.pos++
		return false, nil
	}
	return false, p.syntax(fmt.Sprintf("',' or %q", end))
}

// member reads a member's key and the colon after it.
func (p *parser) member() (string, error) {
	k, err := p.string()
	if err != nil {
		return "", err
	}
	return k, p.expect(':')
}

// string reads a JSON string, which must be valid UTF-8. It finds the
// closing quote and any backslash with strings.IndexByte, which is much
// faster than a byte loop; raw control characters, which JSON forbids, are
// left to the re-encoding, which escapes them and so refuses the file.
func (p *parser) string() (string, error) {
	if p.peek() != '"' {
		return "", p.syntax("a string")
	}
	start := p.pos + 1
	end := strings.IndexByte(p.in[start:], '"')
	if end < 0 {
		return "", p.fail("invalid JSON: string at byte %d is not terminated", p.pos)
	}
	s := p.in[start : start+end]
	if bs := strings.IndexByte(s, '\\'); bs >= 0 {
		p.pos = start + bs
		return p.escaped(start)
	}
	if !utf8.ValidString(s) {
		return "", p.fail("string at byte %d is not valid UTF-8", p.pos)
	}
	p.pos = start + end + 1
	return s, nil
}

// escaped finishes, from the first backslash, a string that starts at
// start and contains escapes, decoding it in p.str.
func (p *parser) escaped(start int) (string, error) {
	s := append(p.str[:0], p.in[start:p.pos]...)
	for p.pos < len(p.in) {
		switch c := p.in[p.pos]; c {
		case '"':
			p.pos++
			p.str = s
			if !utf8.Valid(s) {
				return "", p.fail("string at byte %d is not valid UTF-8", start-1)
			}
			return string(s), nil
		case '\\':
		default:
			s = append(s, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.in) {
			break
		}
		switch e := p.in[p.pos+1]; e {
		case '"', '\\', '/':
			s = append(s, e)
		case 'b':
			s = append(s, '\b')
		case 'f':
			s = append(s, '\f')
		case 'n':
			s = append(s, '\n')
		case 'r':
			s = append(s, '\r')
		case 't':
			s = append(s, '\t')
		case 'u':
			if p.pos+6 > len(p.in) {
				return "", p.fail("invalid JSON at byte %d: truncated \\u escape", p.pos)
			}
			r, err := strconv.ParseUint(p.in[p.pos+2:p.pos+6], 16, 16)
			if err != nil {
				return "", p.fail("invalid JSON at byte %d: bad \\u escape %q", p.pos, p.in[p.pos:p.pos+6])
			}
			// A surrogate becomes U+FFFD; surrogate escapes are never
			// canonical, so the re-encoding refuses the file anyway.
			s = utf8.AppendRune(s, rune(r))
			p.pos += 4
		default:
			return "", p.fail("invalid JSON at byte %d: bad escape %q", p.pos, p.in[p.pos:p.pos+2])
		}
		p.pos += 2
	}
	return "", p.fail("invalid JSON: string at byte %d is not terminated", start-1)
}

// file parses the whole file: {"Data":{...},"Checksum":N}.
func (p *parser) file() (Data, uint64, error) {
	var d Data
	var sum uint64
	more, err := p.object()
	for ; err == nil && more; more, err = p.next('}') {
		var k string
		if k, err = p.member(); err != nil {
			break
		}
		switch k {
		case "Data":
			p.push(frame{name: "Data"})
			d, err = p.data()
			p.pop()
		case "Checksum":
			p.push(frame{name: "Checksum"})
			sum, err = p.uint()
			p.pop()
		default:
			err = p.fail("unknown field %q at the top level, want Data or Checksum", k)
		}
		if err != nil {
			break
		}
	}
	if err != nil {
		return Data{}, 0, err
	}
	if p.peek() != 0 || p.pos != len(p.in) {
		return Data{}, 0, p.fail("invalid JSON at byte %d: data after the checkpoint object", p.pos)
	}
	return d, sum, nil
}

func (p *parser) uint() (uint64, error) {
	p.space()
	start := p.pos
	for p.pos < len(p.in) && p.in[p.pos] >= '0' && p.in[p.pos] <= '9' {
		p.pos++
	}
	if p.pos == start {
		return 0, p.fail("found %s, want an unsigned integer", p.kind())
	}
	v, err := strconv.ParseUint(p.in[start:p.pos], 10, 64)
	if err != nil {
		return 0, p.fail("%s is out of the uint64 range", p.in[start:p.pos])
	}
	return v, nil
}

func (p *parser) data() (Data, error) {
	var d Data
	more, err := p.object()
	for ; err == nil && more; more, err = p.next('}') {
		var k string
		if k, err = p.member(); err != nil {
			break
		}
		switch k {
		case "PodDeviceEntries":
			p.push(frame{name: "PodDeviceEntries"})
			d.PodDeviceEntries, err = p.entries()
			p.pop()
		case "RegisteredDevices":
			p.push(frame{name: "RegisteredDevices"})
			d.RegisteredDevices, err = p.registered()
			p.pop()
		default:
			err = p.fail("unknown field %q, want PodDeviceEntries or RegisteredDevices", k)
		}
		if err != nil {
			break
		}
	}
	return d, err
}

func (p *parser) entries() ([]PodDevicesEntry, error) {
	if p.null() {
		return nil, nil
	}
	if p.peek() != '[' {
		return nil, p.fail("found %s, want an array of entries or null", p.kind())
	}
	p.pos++
	entries := []PodDevicesEntry{}
	if p.peek() == ']' {
		p.pos++
		return entries, nil
	}
	p.push(frame{})
	defer p.pop()
	for more := true; more; {
		p.setIndex(len(entries))
		if err := p.count(); err != nil {
			return nil, err
		}
		e, err := p.entry()
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
		if more, err = p.next(']'); err != nil {
			return nil, err
		}
	}
	return entries, nil
}

func (p *parser) entry() (PodDevicesEntry, error) {
	var e PodDevicesEntry
	if p.peek() != '{' {
		return e, p.fail("found %s, want an object", p.kind())
	}
	more, err := p.object()
	for ; err == nil && more; more, err = p.next('}') {
		var k string
		if k, err = p.member(); err != nil {
			break
		}
		var dst *string
		switch k {
		case "PodUID":
			dst = &e.PodUID
		case "ContainerName":
			dst = &e.ContainerName
		case "ResourceName":
			dst = &e.ResourceName
		case "DeviceIDs":
			p.push(frame{name: "DeviceIDs"})
			e.DeviceIDs, err = p.devicesPerNUMA()
			p.pop()
		case "AllocResp":
			p.push(frame{name: "AllocResp"})
			e.AllocResp, err = p.allocResp()
			p.pop()
		default:
			err = p.fail("unknown field %q in an entry", k)
		}
		if dst != nil {
			p.push(frame{name: k})
			if p.peek() != '"' {
				err = p.fail("found %s, want a string", p.kind())
			} else {
				*dst, err = p.string()
			}
			p.pop()
		}
		if err != nil {
			break
		}
	}
	return e, err
}

func (p *parser) devicesPerNUMA() (DevicesPerNUMA, error) {
	if p.null() {
		return nil, nil
	}
	switch p.peek() {
	case '{':
	case '[':
		return nil, p.fail("found an array, want an object keyed by NUMA node: this is the legacy V1 checkpoint format, which the kubelet has not read since v1.30")
	default:
		return nil, p.fail("found %s, want an object keyed by NUMA node or null", p.kind())
	}
	m := DevicesPerNUMA{}
	more, err := p.object()
	for ; err == nil && more; more, err = p.next('}') {
		var k string
		if k, err = p.member(); err != nil {
			break
		}
		if err = p.count(); err != nil {
			break
		}
		numa, perr := strconv.ParseInt(k, 10, 64)
		if perr != nil {
			if errors.Is(perr, strconv.ErrRange) {
				return nil, p.fail("NUMA key %q is out of the int64 range", k)
			}
			return nil, p.fail("NUMA key %q is not an integer", k)
		}
		p.push(frame{name: k, key: true})
		m[numa], err = p.ids()
		p.pop()
		if err != nil {
			break
		}
	}
	return m, err
}

func (p *parser) registered() (map[string][]string, error) {
	if p.null() {
		return nil, nil
	}
	if p.peek() != '{' {
		return nil, p.fail("found %s, want an object keyed by resource name or null", p.kind())
	}
	m := map[string][]string{}
	more, err := p.object()
	for ; err == nil && more; more, err = p.next('}') {
		var name string
		if name, err = p.string(); err != nil {
			break
		}
		if err = p.expect(':'); err != nil {
			break
		}
		if err = p.count(); err != nil {
			break
		}
		p.push(frame{name: name, key: true})
		m[name], err = p.ids()
		p.pop()
		if err != nil {
			break
		}
	}
	return m, err
}

// ids reads a list of device IDs: an array of strings or null.
func (p *parser) ids() ([]string, error) {
	if p.null() {
		return nil, nil
	}
	if p.peek() != '[' {
		return nil, p.fail("found %s, want an array of device IDs or null", p.kind())
	}
	p.pos++
	ids := []string{}
	if p.peek() == ']' {
		p.pos++
		return ids, nil
	}
	p.push(frame{})
	defer p.pop()
	for more := true; more; {
		p.setIndex(len(ids))
		if err := p.count(); err != nil {
			return nil, err
		}
		if p.peek() != '"' {
			return nil, p.fail("found %s, want a device ID string", p.kind())
		}
		id, err := p.string()
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
		if more, err = p.next(']'); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// allocResp reads the base64 of a protobuf ContainerAllocateResponse; the
// bytes stay opaque here, as they are in the kubelet's checkpoint code.
func (p *parser) allocResp() ([]byte, error) {
	if p.null() {
		return nil, nil
	}
	if p.peek() != '"' {
		return nil, p.fail("found %s, want a base64 string or null", p.kind())
	}
	s, err := p.string()
	if err != nil {
		return nil, err
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, p.fail("not valid base64: %v", err)
	}
	return b, nil
}
