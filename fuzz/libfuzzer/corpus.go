package libfuzzer

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// goCorpusHeader is the first line of every Go corpus file.
const goCorpusHeader = "go test fuzz v1"

// maxLength is the largest length go-fuzz-headers reads: a uint32.
const maxLength = math.MaxUint32

// Value is one argument of a Go corpus file: its type, spelt as reflect
// names it (uint8 for byte, int32 for rune, []uint8 for []byte), and its
// value as one of []byte, string, bool, int64, uint64 or float64.
type Value struct {
	Type string
	V    any
}

// ParseGoCorpusFile reads a Go corpus file: the header line, then one Go
// literal per argument, as `go test` writes them (string("a"), []byte("b"),
// bool(true), byte('c'), int(-1), float64(0.5),
// math.Float64frombits(0x7ff8000000000001), ...).
func ParseGoCorpusFile(data []byte) ([]Value, error) {
	lines := strings.Split(string(data), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != goCorpusHeader {
		return nil, fmt.Errorf("line 1: want %q", goCorpusHeader)
	}
	var values []Value
	for i, line := range lines[1:] {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		v, err := parseValue(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+2, err)
		}
		values = append(values, v)
	}
	return values, nil
}

// parseValue reads one literal: a conversion T(x) of a literal x.
func parseValue(line string) (Value, error) {
	expr, err := parser.ParseExpr(line)
	if err != nil {
		return Value{}, err
	}
	call, ok := expr.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return Value{}, fmt.Errorf("%q is not a conversion T(x)", line)
	}
	if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
		pkg, _ := sel.X.(*ast.Ident)
		if pkg == nil || pkg.Name != "math" || (sel.Sel.Name != "Float64frombits" && sel.Sel.Name != "Float32frombits") {
			return Value{}, fmt.Errorf("%q: only math.Float64frombits and math.Float32frombits are known", line)
		}
		bits, err := parseInteger(call.Args[0], false, 64)
		if err != nil {
			return Value{}, err
		}
		if sel.Sel.Name == "Float32frombits" {
			if bits > math.MaxUint32 {
				return Value{}, fmt.Errorf("%q: bits overflow a uint32", line)
			}
			return Value{Type: "float32", V: float64(math.Float32frombits(uint32(bits)))}, nil
		}
		return Value{Type: "float64", V: math.Float64frombits(bits)}, nil
	}
	typ := typeName(call.Fun)
	arg := call.Args[0]
	switch typ {
	case "[]uint8", "string":
		lit, ok := arg.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return Value{}, fmt.Errorf("%q: %s of something other than a string literal", line, typ)
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return Value{}, fmt.Errorf("%q: %w", line, err)
		}
		if typ == "string" {
			return Value{Type: typ, V: s}, nil
		}
		return Value{Type: typ, V: []byte(s)}, nil
	case "bool":
		id, ok := arg.(*ast.Ident)
		if !ok || (id.Name != "true" && id.Name != "false") {
			return Value{}, fmt.Errorf("%q: bool of something other than true or false", line)
		}
		return Value{Type: typ, V: id.Name == "true"}, nil
	case "int", "int8", "int16", "int32", "int64":
		bits := intBits(typ)
		n, err := parseInteger(arg, true, bits)
		if err != nil {
			return Value{}, fmt.Errorf("%q: %w", line, err)
		}
		return Value{Type: typ, V: int64(n)}, nil
	case "uint", "uint8", "uint16", "uint32", "uint64":
		n, err := parseInteger(arg, false, intBits(typ))
		if err != nil {
			return Value{}, fmt.Errorf("%q: %w", line, err)
		}
		return Value{Type: typ, V: n}, nil
	case "float32", "float64":
		f, err := parseFloat(arg, intBits(typ))
		if err != nil {
			return Value{}, fmt.Errorf("%q: %w", line, err)
		}
		return Value{Type: typ, V: f}, nil
	}
	return Value{}, fmt.Errorf("%q: unknown type", line)
}

// intBits is the size of a numeric type; int and uint are 64 bits, as on
// every platform OSS-Fuzz builds for.
func intBits(typ string) int {
	for _, n := range []int{8, 16, 32, 64} {
		if strings.HasSuffix(typ, strconv.Itoa(n)) {
			return n
		}
	}
	return 64
}

// parseInteger reads an integer or character literal, negated if signed
// allows it, and returns its two's-complement bits.
func parseInteger(expr ast.Expr, signed bool, bits int) (uint64, error) {
	negative := false
	if u, ok := expr.(*ast.UnaryExpr); ok && u.Op == token.SUB && signed {
		negative, expr = true, u.X
	}
	lit, ok := expr.(*ast.BasicLit)
	if !ok {
		return 0, errors.New("not an integer or character literal")
	}
	var magnitude uint64
	switch lit.Kind {
	case token.INT:
		n, err := strconv.ParseUint(lit.Value, 0, 64)
		if err != nil {
			return 0, err
		}
		magnitude = n
	case token.CHAR:
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return 0, err
		}
		r := []rune(s)
		if len(r) != 1 {
			return 0, fmt.Errorf("%s is not one character", lit.Value)
		}
		magnitude = uint64(r[0])
		if len(s) == 1 {
			magnitude = uint64(s[0]) // a byte, which may not be valid UTF-8
		}
	default:
		return 0, errors.New("not an integer or character literal")
	}
	if signed {
		limit := uint64(1) << (bits - 1)
		if negative && magnitude > limit || !negative && magnitude >= limit {
			return 0, fmt.Errorf("%d overflows int%d", magnitude, bits)
		}
		if negative {
			return -magnitude, nil
		}
		return magnitude, nil
	}
	if bits < 64 && magnitude >= uint64(1)<<bits {
		return 0, fmt.Errorf("%d overflows uint%d", magnitude, bits)
	}
	return magnitude, nil
}

// parseFloat reads a (possibly negated) number literal.
func parseFloat(expr ast.Expr, bits int) (float64, error) {
	sign := 1.0
	if u, ok := expr.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		sign, expr = -1, u.X
	}
	lit, ok := expr.(*ast.BasicLit)
	if !ok || (lit.Kind != token.FLOAT && lit.Kind != token.INT) {
		return 0, errors.New("not a number literal")
	}
	f, err := strconv.ParseFloat(lit.Value, bits)
	if err != nil {
		return 0, err
	}
	return sign * f, nil
}

// EncodeInput returns the libFuzzer input from which a go-118-fuzz-build
// harness taking params decodes exactly values, in go-fuzz-headers' format:
// []byte and string as a big-endian uint32 length and the bytes, bool as
// one byte (even is true), 8-bit numbers as one byte, 16- and 64-bit
// numbers and floats as big-endian bytes then an odd byte (odd picks big
// endian), 32-bit integers as four big-endian bytes. One zero byte ends the
// input: go-fuzz-headers refuses an empty string or []byte at the very end.
func EncodeInput(values []Value, params []string) ([]byte, error) {
	if len(values) != len(params) {
		return nil, fmt.Errorf("%d values for a harness of %d arguments", len(values), len(params))
	}
	for i, v := range values {
		if v.Type != params[i] {
			return nil, fmt.Errorf("argument %d: a %s for a harness argument of type %s", i+1, v.Type, params[i])
		}
	}
	// A []byte's length is taken modulo the bytes that follow it, so the
	// input is built from the end.
	tail := []byte{0}
	for i := len(values) - 1; i >= 0; i-- {
		head, err := encodeValue(values[i], len(tail))
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
		tail = append(head, tail...)
	}
	return tail, nil
}

// encodeValue encodes one value that tailLen bytes (at least one) follow.
func encodeValue(v Value, tailLen int) ([]byte, error) {
	var out []byte
	bigEndian := byte(1) // odd: go-fuzz-headers' GetBool says false, big endian
	switch v.Type {
	case "[]uint8":
		b := v.V.([]byte)
		left := uint64(len(b)) + uint64(tailLen)
		// go-fuzz-headers takes length % left unless length == left, and
		// makes a zero length 30, so an empty slice is two times left.
		length := uint64(len(b))
		if length == 0 {
			length = 2 * left
		}
		if length > maxLength {
			return nil, fmt.Errorf("%d bytes, more than a uint32 length allows", len(b))
		}
		out = binary.BigEndian.AppendUint32(out, uint32(length))
		return append(out, b...), nil
	case "string":
		s := v.V.(string)
		if uint64(len(s)) > maxLength {
			return nil, fmt.Errorf("a string of %d bytes, more than a uint32 length allows", len(s))
		}
		out = binary.BigEndian.AppendUint32(out, uint32(len(s)))
		return append(out, s...), nil
	case "bool":
		if v.V.(bool) {
			return []byte{0}, nil
		}
		return []byte{1}, nil
	case "int8", "uint8":
		return []byte{byte(bitsOf(v))}, nil
	case "int16", "uint16":
		return append(binary.BigEndian.AppendUint16(out, uint16(bitsOf(v))), bigEndian), nil
	case "int32", "uint32":
		return binary.BigEndian.AppendUint32(out, uint32(bitsOf(v))), nil
	case "int", "int64", "uint", "uint64":
		return append(binary.BigEndian.AppendUint64(out, bitsOf(v)), bigEndian), nil
	case "float32":
		return append(binary.BigEndian.AppendUint32(out, math.Float32bits(float32(v.V.(float64)))), bigEndian), nil
	case "float64":
		return append(binary.BigEndian.AppendUint64(out, math.Float64bits(v.V.(float64))), bigEndian), nil
	}
	return nil, fmt.Errorf("type %s has no libFuzzer encoding", v.Type)
}

// bitsOf is an integer value's two's-complement bits.
func bitsOf(v Value) uint64 {
	if n, ok := v.V.(int64); ok {
		return uint64(n)
	}
	return v.V.(uint64)
}

// WriteSeedZip converts every file of the Go corpus directory seedDir into
// a libFuzzer input for a harness taking params and writes them, under the
// same names, to the zip file out. It returns how many it wrote; with no
// corpus files (a missing or empty directory) it writes no zip. A file that does not parse, or does not fit
// the harness, is an error naming it: `go test` would refuse it too.
func WriteSeedZip(seedDir string, params []string, out string) (int, error) {
	entries, err := os.ReadDir(seedDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return 0, nil
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range names {
		path := filepath.Join(seedDir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			return 0, err
		}
		values, err := ParseGoCorpusFile(data)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		input, err := EncodeInput(values, params)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		w, err := zw.Create(name)
		if err != nil {
			return 0, err
		}
		if _, err := w.Write(input); err != nil {
			return 0, err
		}
	}
	if err := zw.Close(); err != nil {
		return 0, err
	}
	return len(names), os.WriteFile(out, buf.Bytes(), 0o644)
}
