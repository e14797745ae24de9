package checkpoint

import (
	"bytes"
	"encoding/base64"
	"slices"
	"strconv"
	"unicode/utf8"
)

// jsonWriter renders the file as encoding/json marshals the kubelet's
// struct {Data checkpointData; Checksum uint64}. It either appends to buf
// (Encode) or, with compare set, checks the rendering against want without
// building it (Decode's canonical-form check). It stops at the first
// difference from want, or when buf would pass MaxFileBytes, so neither a
// non-canonical input nor an oversized checkpoint costs more than the limit.
type jsonWriter struct {
	buf []byte

	compare bool
	want    []byte
	pos     int // bytes of want matched so far

	stop bool // rendering differs from want at pos, or buf is full

	numa []int64 // scratch for sorting NUMA keys
	b64  []byte  // scratch for base64
}

// write appends s, or compares it with the next bytes of want.
func write[T string | []byte](w *jsonWriter, s T) {
	if w.stop {
		return
	}
	if !w.compare {
		if len(w.buf)+len(s) > MaxFileBytes {
			w.stop = true
			return
		}
		w.buf = append(w.buf, s...)
		return
	}
	rest := w.want[w.pos:]
	if len(s) <= len(rest) && string(rest[:len(s)]) == string(s) {
		w.pos += len(s)
		return
	}
	i := 0
	for i < len(s) && i < len(rest) && rest[i] == s[i] {
		i++
	}
	w.pos += i
	w.stop = true
}

func (w *jsonWriter) byte(c byte) {
	switch {
	case w.stop:
	case !w.compare && len(w.buf) < MaxFileBytes:
		w.buf = append(w.buf, c)
	case w.compare && w.pos < len(w.want) && w.want[w.pos] == c:
		w.pos++
	default:
		w.stop = true
	}
}

// canonical reports whether the rendering equals want, and otherwise the
// first byte offset where they differ.
func (w *jsonWriter) canonical() (int, bool) {
	if w.stop || w.pos != len(w.want) {
		return w.pos, false
	}
	return 0, true
}

// data renders the file for d with checksum sum; names are the sorted keys
// of d.RegisteredDevices.
func (w *jsonWriter) data(d Data, names []string, sum uint64) {
	write(w, `{"Data":{"PodDeviceEntries":`)
	if d.PodDeviceEntries == nil {
		write(w, "null")
	} else {
		w.byte('[')
		for i, e := range d.PodDeviceEntries {
			if i > 0 {
				w.byte(',')
			}
			w.entry(e)
		}
		w.byte(']')
	}
	write(w, `,"RegisteredDevices":`)
	if d.RegisteredDevices == nil {
		write(w, "null")
	} else {
		w.byte('{')
		for i, name := range names {
			if i > 0 {
				w.byte(',')
			}
			w.quote(name)
			w.byte(':')
			w.list(d.RegisteredDevices[name])
		}
		w.byte('}')
	}
	write(w, `},"Checksum":`)
	var num [20]byte
	write(w, strconv.AppendUint(num[:0], sum, 10))
	w.byte('}')
}

func (w *jsonWriter) entry(e PodDevicesEntry) {
	write(w, `{"PodUID":`)
	w.quote(e.PodUID)
	write(w, `,"ContainerName":`)
	w.quote(e.ContainerName)
	write(w, `,"ResourceName":`)
	w.quote(e.ResourceName)
	write(w, `,"DeviceIDs":`)
	if e.DeviceIDs == nil {
		write(w, "null")
	} else {
		// encoding/json turns integer keys into decimal strings and sorts
		// those strings, so "-1" < "0" < "10" < "2".
		w.numa = w.numa[:0]
		for k := range e.DeviceIDs {
			w.numa = append(w.numa, k)
		}
		slices.SortFunc(w.numa, compareDecimal)
		w.byte('{')
		var num [20]byte
		for i, k := range w.numa {
			if i > 0 {
				w.byte(',')
			}
			w.byte('"')
			write(w, strconv.AppendInt(num[:0], k, 10))
			write(w, `":`)
			w.list(e.DeviceIDs[k])
		}
		w.byte('}')
	}
	write(w, `,"AllocResp":`)
	if e.AllocResp == nil {
		write(w, "null")
	} else {
		w.byte('"')
		w.b64 = base64.StdEncoding.AppendEncode(w.b64[:0], e.AllocResp)
		write(w, w.b64)
		w.byte('"')
	}
	w.byte('}')
}

func (w *jsonWriter) list(ids []string) {
	if ids == nil {
		write(w, "null")
		return
	}
	w.byte('[')
	for i, id := range ids {
		if i > 0 {
			w.byte(',')
		}
		w.quote(id)
	}
	w.byte(']')
}

// quote writes s as a JSON string escaped as encoding/json escapes it by
// default: \" \\ \b \f \n \r \t, other control characters and the HTML
// characters < > & as \u00XX, and U+2028, U+2029 as \u2028, \u2029. s is
// valid UTF-8: Encode and Decode refuse anything else.
func (w *jsonWriter) quote(s string) {
	w.byte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			if w.stop {
				return
			}
			write(w, s[start:i])
			switch c {
			case '"', '\\':
				w.byte('\\')
				w.byte(c)
			case '\b':
				write(w, `\b`)
			case '\f':
				write(w, `\f`)
			case '\n':
				write(w, `\n`)
			case '\r':
				write(w, `\r`)
			case '\t':
				write(w, `\t`)
			default:
				write(w, `\u00`)
				w.byte(hexDigits[c>>4])
				w.byte(hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == '\u2028' || r == '\u2029' {
			write(w, s[start:i])
			write(w, `\u202`)
			w.byte(hexDigits[r&0xf])
			start = i + size
		}
		i += size
	}
	write(w, s[start:])
	w.byte('"')
}

const hexDigits = "0123456789abcdef"

// safe marks the ASCII bytes encoding/json writes unescaped.
var safe = func() (t [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

// compareDecimal orders integers as their decimal spellings order as byte
// strings.
func compareDecimal(a, b int64) int {
	var x, y [20]byte
	return bytes.Compare(strconv.AppendInt(x[:0], a, 10), strconv.AppendInt(y[:0], b, 10))
}
