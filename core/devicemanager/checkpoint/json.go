package checkpoint

import (
	"bytes"
	"encoding/base64"
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

	b64 []byte // scratch for base64
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

// int writes a NUMA node as an object key: "-1".
func (w *jsonWriter) int(k int64) {
	var num [22]byte
	b := append(strconv.AppendInt(append(num[:0], '"'), k, 10), '"')
	write(w, b)
}

// uint writes the checksum.
func (w *jsonWriter) uint(v uint64) {
	var num [20]byte
	write(w, strconv.AppendUint(num[:0], v, 10))
}

// base64 writes AllocResp as encoding/json writes a []byte.
func (w *jsonWriter) base64(b []byte) {
	if w.stop {
		return
	}
	w.b64 = base64.StdEncoding.AppendEncode(append(w.b64[:0], '"'), b)
	w.b64 = append(w.b64, '"')
	write(w, w.b64)
}

// list writes device IDs and returns the index of the first that is not
// valid UTF-8, or -1.
func (w *jsonWriter) list(ids []string) int {
	if ids == nil {
		write(w, "null")
		return -1
	}
	bad := -1
	w.byte('[')
	for i, id := range ids {
		if i > 0 {
			w.byte(',')
		}
		if !w.quote(id) && bad < 0 {
			bad = i
		}
	}
	w.byte(']')
	return bad
}

// quote writes s as a JSON string escaped as encoding/json escapes it by
// default: \" \\ \b \f \n \r \t, other control characters and the HTML
// characters < > & as \u00XX, and U+2028, U+2029 as \u2028, \u2029. It
// reports false for a string that is not valid UTF-8, which encoding/json
// would alter (Encode refuses it); a stopped writer checks nothing.
func (w *jsonWriter) quote(s string) bool {
	if w.stop {
		return true
	}
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
				return true
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
		switch {
		case r == utf8.RuneError && size == 1:
			return false
		case r == '\u2028' || r == '\u2029':
			write(w, s[start:i])
			write(w, `\u202`)
			w.byte(hexDigits[r&0xf])
			start = i + size
		}
		i += size
	}
	write(w, s[start:])
	w.byte('"')
	return true
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
