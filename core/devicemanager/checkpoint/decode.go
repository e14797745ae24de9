package checkpoint

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// File is a checkpoint file as the kubelet reads it: the content
// encoding/json decodes from it, the checksum it stores, and how its bytes
// compare with what the kubelet would write for that content.
type File struct {
	Data Data
	// StoredChecksum is the file's Checksum field, ComputedChecksum the
	// checksum of Data. The kubelet loads the file only when they are equal.
	StoredChecksum, ComputedChecksum uint64
	// NonCanonicalAt is -1 when the bytes are exactly what Encode writes for
	// Data and StoredChecksum, as every file the kubelet writes is, and
	// otherwise the offset of the first byte that differs from that.
	NonCanonicalAt int
}

// Verify is the kubelet's VerifyChecksum: nil, or a *CorruptError.
func (f File) Verify() error {
	if f.StoredChecksum != f.ComputedChecksum {
		return &CorruptError{Actual: f.ComputedChecksum, Expected: f.StoredChecksum}
	}
	return nil
}

// Canonical reports whether the file is spelled exactly as the kubelet
// writes it. A file that is not (reindented, keys reordered, other escapes)
// still loads when its checksum verifies: the checksum covers the decoded
// content, not the bytes.
func (f File) Canonical() bool { return f.NonCanonicalAt < 0 }

// Decode returns the content of a checkpoint file if the kubelet would load
// it: Read, then the checksum check of the kubelet's VerifyChecksum, whose
// failure is a *CorruptError.
func Decode(b []byte) (Data, error) {
	f, err := Read(b)
	if err != nil {
		return Data{}, err
	}
	if err := f.Verify(); err != nil {
		return Data{}, err
	}
	return f.Data, nil
}

// Read parses a checkpoint file as the kubelet's UnmarshalCheckpoint does,
// with encoding/json into the kubelet's struct, so it accepts what the kubelet
// accepts: any whitespace, key order and escapes, field names in any letter
// case, unknown fields, repeated keys (decoded over each other) and invalid
// UTF-8 (read as U+FFFD). It does not judge the checksum, so that a tool can
// show the content of a file the kubelet would refuse; Decode does.
//
// A refusal is an error naming the field and the rule, among them a legacy V1
// file (DeviceIDs as a list, which the kubelet stopped reading in v1.30).
// Beyond the kubelet's rules, a file over MaxFileBytes or MaxSeparators is
// refused before it is parsed, and one over MaxItems after, so that whatever
// Read accepts Encode can write.
func Read(b []byte) (File, error) {
	if len(b) > MaxFileBytes {
		return File{}, fmt.Errorf("checkpoint: file is %d bytes, over the limit of %d", len(b), MaxFileBytes)
	}
	if n := separators(b); n > MaxSeparators {
		return File{}, fmt.Errorf("checkpoint: file has %d brackets, braces and commas outside strings, over the limit of %d", n, MaxSeparators)
	}
	var kf kubeletFile
	if err := json.Unmarshal(b, &kf); err != nil {
		return File{}, explain(err)
	}
	// One walk computes the checksum and compares the canonical rendering
	// with the input.
	e := newEncoder(false, jsonWriter{compare: true, want: b})
	e.data(kf.Data)
	if e.items > MaxItems {
		return File{}, fmt.Errorf("checkpoint: Data: %d items (entries, NUMA nodes, resources and device IDs), over the limit of %d", e.items, MaxItems)
	}
	e.json.uint(kf.Checksum)
	e.json.byte('}')
	f := File{Data: kf.Data, StoredChecksum: kf.Checksum, ComputedChecksum: uint64(e.hash.sum), NonCanonicalAt: -1}
	if at, ok := e.json.canonical(); !ok {
		f.NonCanonicalAt = at
	}
	return f, nil
}

// kubeletFile has the shape of the kubelet's struct {Data checkpointData;
// Checksum checksum.Checksum}. JSON does not spell type names and Data's
// field names are the kubelet's, so decoding into it is decoding into the
// kubelet's struct.
type kubeletFile struct {
	Data     Data
	Checksum uint64
}

// separators counts the brackets, braces and commas of b outside JSON
// strings: an upper bound on the values encoding/json would build from it.
func separators(b []byte) int {
	n := 0
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (c == '[' || c == '{' || c == ','):
			n++
		}
	}
	return n
}

// explain turns an encoding/json error, which the kubelet returns as is,
// into one that names the field and the rule in the checkpoint's terms.
func explain(err error) error {
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return fmt.Errorf("checkpoint: invalid JSON at byte %d: %v", se.Offset, se)
	}
	if ce, ok := errors.AsType[base64.CorruptInputError](err); ok {
		// encoding/json does not say where; AllocResp is the file's only
		// byte field.
		return fmt.Errorf("checkpoint: Data.PodDeviceEntries.AllocResp: not valid base64: %v", ce)
	}
	te, ok := errors.AsType[*json.UnmarshalTypeError](err)
	if !ok {
		return fmt.Errorf("checkpoint: %v", err)
	}
	field := te.Field
	if field == "" {
		field = "the file"
	}
	if te.Field == "Data.PodDeviceEntries.DeviceIDs" && te.Value == "array" {
		return fmt.Errorf("checkpoint: %s: found an array at byte %d, want an object keyed by NUMA node: this is the legacy V1 checkpoint format, which the kubelet has not read since v1.30", field, te.Offset)
	}
	if key, isKey := strings.CutPrefix(te.Value, "number "); isKey && te.Type.Kind() == reflect.Int64 {
		return fmt.Errorf("checkpoint: %s: NUMA key %q at byte %d is not a decimal int64", field, key, te.Offset)
	}
	return fmt.Errorf("checkpoint: %s: found %s at byte %d, want %s", field, jsonValue(te.Value), te.Offset, wantType(te.Type))
}

// jsonValue names the value encoding/json describes as "array", "number
// 1e0" and so on.
func jsonValue(v string) string {
	switch {
	case v == "array" || v == "object":
		return "an " + v
	case v == "bool":
		return "a boolean"
	case strings.HasPrefix(v, "number "):
		return "the number " + strings.TrimPrefix(v, "number ")
	}
	return "a " + v
}

// wantType says what a field of type t must hold.
func wantType(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[uint64]():
		return "an unsigned 64-bit integer in digits only"
	case reflect.TypeFor[string]():
		return "a string"
	case reflect.TypeFor[[]byte]():
		return "a base64 string or null"
	case reflect.TypeFor[[]string]():
		return "an array of device ID strings or null"
	case reflect.TypeFor[DevicesPerNUMA]():
		return "an object keyed by NUMA node or null"
	case reflect.TypeFor[map[string][]string]():
		return "an object keyed by resource name or null"
	case reflect.TypeFor[[]PodDevicesEntry]():
		return "an array of entries or null"
	}
	return "an object"
}
