package allocresp

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Bounds on what Unmarshal accepts. A device plugin's response is a handful
// of environment variables, mounts and device nodes; these limits are far
// above any real plugin and keep a corrupt checkpoint from costing unbounded
// memory.
const (
	// MaxMessageBytes is the largest encoded response Unmarshal reads.
	MaxMessageBytes = 1 << 20
	// MaxEntries bounds the elements of all repeated and map fields together,
	// counting every occurrence on the wire (a repeated map key counts twice).
	MaxEntries = 10000
)

// Mount is the API's Mount message: a host path mounted into the container.
type Mount struct {
	ContainerPath string // field 1
	HostPath      string // field 2
	ReadOnly      bool   // field 3
}

// DeviceSpec is the API's DeviceSpec message: a host device node exposed in
// the container.
type DeviceSpec struct {
	ContainerPath string // field 1
	HostPath      string // field 2
	Permissions   string // field 3
}

// CDIDevice is the API's CDIDevice message: a fully qualified CDI device name.
type CDIDevice struct {
	Name string // field 1
}

// ContainerAllocateResponse is the API's ContainerAllocateResponse message:
// what the kubelet injects into one container for the devices a plugin
// allocated to it.
type ContainerAllocateResponse struct {
	Envs        map[string]string // field 1
	Mounts      []Mount           // field 2
	Devices     []DeviceSpec      // field 3
	Annotations map[string]string // field 4
	CDIDevices  []CDIDevice       // field 5
}

// Protobuf wire types.
const (
	wireVarint     = 0
	wireFixed64    = 1
	wireBytes      = 2
	wireStartGroup = 3
	wireEndGroup   = 4
	wireFixed32    = 5
)

const (
	// maxFieldNumber is the largest field number protobuf allows in a
	// message; proto.Unmarshal rejects larger ones.
	maxFieldNumber = 1<<29 - 1
	// maxGroupFieldNumber is the largest field number proto.Unmarshal accepts
	// on a tag nested inside an unknown group, where it only checks that the
	// number fits an int32.
	maxGroupFieldNumber = 1<<31 - 1
	// maxGroupNesting is how deep unknown groups may nest before
	// proto.Unmarshal gives up (its recursion limit of 10000, counted from 0).
	maxGroupNesting = 10001
)

// Marshal encodes r in the protobuf wire format, byte for byte as
// proto.MarshalOptions{Deterministic: true} does for the generated message:
// fields in number order, map entries sorted by key with both key and value
// always written, and empty strings, false and empty collections omitted. An
// empty response encodes to zero bytes.
//
// Strings are written as they are. proto3 strings must be valid UTF-8, so a
// response holding invalid UTF-8 (which no plugin can send over gRPC) marshals
// to bytes that Unmarshal, like proto.Unmarshal, rejects.
func Marshal(r ContainerAllocateResponse) []byte {
	b := make([]byte, 0, size(r))
	b = appendStringMap(b, 1, r.Envs)
	for _, m := range r.Mounts {
		b = appendTag(b, 2, wireBytes)
		b = appendVarint(b, uint64(mountSize(m)))
		b = appendString(b, 1, m.ContainerPath)
		b = appendString(b, 2, m.HostPath)
		if m.ReadOnly {
			b = appendTag(b, 3, wireVarint)
			b = append(b, 1)
		}
	}
	for _, d := range r.Devices {
		b = appendTag(b, 3, wireBytes)
		b = appendVarint(b, uint64(deviceSize(d)))
		b = appendString(b, 1, d.ContainerPath)
		b = appendString(b, 2, d.HostPath)
		b = appendString(b, 3, d.Permissions)
	}
	b = appendStringMap(b, 4, r.Annotations)
	for _, c := range r.CDIDevices {
		b = appendTag(b, 5, wireBytes)
		b = appendVarint(b, uint64(stringSize(c.Name)))
		b = appendString(b, 1, c.Name)
	}
	return b
}

// size is the exact length of Marshal(r), so Marshal allocates once.
func size(r ContainerAllocateResponse) int {
	n := 0
	for k, v := range r.Envs {
		n += 1 + bytesSize(entrySize(k, v))
	}
	for _, m := range r.Mounts {
		n += 1 + bytesSize(mountSize(m))
	}
	for _, d := range r.Devices {
		n += 1 + bytesSize(deviceSize(d))
	}
	for k, v := range r.Annotations {
		n += 1 + bytesSize(entrySize(k, v))
	}
	for _, c := range r.CDIDevices {
		n += 1 + bytesSize(stringSize(c.Name))
	}
	return n
}

// Every field number here is below 16, so each tag is one byte.

func mountSize(m Mount) int {
	n := stringSize(m.ContainerPath) + stringSize(m.HostPath)
	if m.ReadOnly {
		n += 2
	}
	return n
}

func deviceSize(d DeviceSpec) int {
	return stringSize(d.ContainerPath) + stringSize(d.HostPath) + stringSize(d.Permissions)
}

// entrySize is the size of a map entry; unlike message fields, protobuf
// writes an entry's key and value even when they are empty.
func entrySize(k, v string) int {
	return 1 + bytesSize(len(k)) + 1 + bytesSize(len(v))
}

// stringSize is the size of an optional string field: nothing when empty.
func stringSize(s string) int {
	if s == "" {
		return 0
	}
	return 1 + bytesSize(len(s))
}

func bytesSize(n int) int {
	return varintSize(uint64(n)) + n
}

func varintSize(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func appendStringMap(b []byte, num uint64, m map[string]string) []byte {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		b = appendTag(b, num, wireBytes)
		b = appendVarint(b, uint64(entrySize(k, v)))
		b = appendTag(b, 1, wireBytes)
		b = appendVarint(b, uint64(len(k)))
		b = append(b, k...)
		b = appendTag(b, 2, wireBytes)
		b = appendVarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	return b
}

func appendString(b []byte, num uint64, s string) []byte {
	if s == "" {
		return b
	}
	b = appendTag(b, num, wireBytes)
	b = appendVarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendTag(b []byte, num uint64, typ uint64) []byte {
	return appendVarint(b, num<<3|typ)
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// Unmarshal decodes a ContainerAllocateResponse from the protobuf wire
// format. It accepts what proto.Unmarshal accepts for the generated message:
// unknown fields, and known fields sent with an unexpected wire type, are
// skipped; a repeated scalar field keeps its last value; map entries may omit
// key or value. It rejects truncated or overlong data, field number 0 or above
// 2^29-1, reserved wire types, unbalanced groups and invalid UTF-8 in string
// fields, plus anything over MaxMessageBytes or MaxEntries. Empty collections
// decode as nil.
func Unmarshal(b []byte) (ContainerAllocateResponse, error) {
	var r ContainerAllocateResponse
	if len(b) > MaxMessageBytes {
		return r, fmt.Errorf("allocresp: message is %d bytes, over the limit of %d", len(b), MaxMessageBytes)
	}
	d := decoder{}
	// nEnvs and nAnnotations number map entries as they appear on the wire,
	// for error messages: a map has no index of its own.
	nEnvs, nAnnotations := 0, 0
	err := d.fields(b, place{name: "ContainerAllocateResponse", index: -1}, func(f field) error {
		if f.typ != wireBytes || f.num > 5 {
			return nil
		}
		if err := d.count(); err != nil {
			return err
		}
		switch f.num {
		case 1:
			k, v, err := d.entry(f.data, place{name: "Envs[entry ", index: nEnvs})
			nEnvs++
			if err != nil {
				return err
			}
			if r.Envs == nil {
				r.Envs = map[string]string{}
			}
			r.Envs[k] = v
		case 2:
			m, err := d.mount(f.data, place{name: "Mounts[", index: len(r.Mounts)})
			if err != nil {
				return err
			}
			r.Mounts = append(r.Mounts, m)
		case 3:
			dev, err := d.device(f.data, place{name: "Devices[", index: len(r.Devices)})
			if err != nil {
				return err
			}
			r.Devices = append(r.Devices, dev)
		case 4:
			k, v, err := d.entry(f.data, place{name: "Annotations[entry ", index: nAnnotations})
			nAnnotations++
			if err != nil {
				return err
			}
			if r.Annotations == nil {
				r.Annotations = map[string]string{}
			}
			r.Annotations[k] = v
		case 5:
			c, err := d.cdi(f.data, place{name: "CDIDevices[", index: len(r.CDIDevices)})
			if err != nil {
				return err
			}
			r.CDIDevices = append(r.CDIDevices, c)
		}
		return nil
	})
	if err != nil {
		return ContainerAllocateResponse{}, err
	}
	return r, nil
}

// decoder carries the entry budget across one Unmarshal call.
type decoder struct {
	entries int
}

func (d *decoder) count() error {
	d.entries++
	if d.entries > MaxEntries {
		return fmt.Errorf("allocresp: more than %d repeated and map entries", MaxEntries)
	}
	return nil
}

// field is one decoded field: v holds a varint's value, data a
// length-delimited payload.
type field struct {
	num  uint64
	typ  uint64
	v    uint64
	data []byte
}

// place names a message, or a string field of one, in errors: a name and
// an index ("Mounts[" and 2 for "Mounts[2]"; index -1 for a name alone) and
// the field. It is a value rendered only when an error needs it: formatting
// the name of every field decoded with fmt.Sprint cost a tenth of the fuzz
// target's executions (docs/benchmarks/fuzzing.md).
type place struct {
	name  string
	index int
	field string
}

func (p place) String() string {
	if p.index < 0 {
		return p.name + p.field
	}
	return p.name + strconv.Itoa(p.index) + "]" + p.field
}

// in names a string field of the message p names.
func (p place) in(field string) place {
	p.field = field
	return p
}

// fields walks the fields of one message, calling fn for each in wire order.
// It consumes every value itself, so fn only interprets the fields it knows;
// where names the message in errors.
func (d *decoder) fields(b []byte, where place, fn func(field) error) error {
	for off := 0; off < len(b); {
		tag, n := consumeVarint(b[off:])
		if n < 0 {
			return fmt.Errorf("allocresp: %s: tag at byte %d: %s", where, off, varintErrors[-n])
		}
		off += n
		f := field{num: tag >> 3, typ: tag & 7}
		if f.num < 1 || f.num > maxFieldNumber {
			return fmt.Errorf("allocresp: %s: field number %d is outside 1..%d", where, f.num, maxFieldNumber)
		}
		if f.typ == wireEndGroup {
			return fmt.Errorf("allocresp: %s: field %d: end-group tag without a matching start-group", where, f.num)
		}
		n, err := consumeValue(f.num, f.typ, b[off:], &f)
		if err != nil {
			return fmt.Errorf("allocresp: %s: field %d: %s", where, f.num, err)
		}
		off += n
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) entry(b []byte, where place) (k, v string, err error) {
	err = d.fields(b, where, func(f field) error {
		if f.typ != wireBytes {
			return nil
		}
		switch f.num {
		case 1:
			return str(&k, f.data, where.in(".key"))
		case 2:
			return str(&v, f.data, where.in(".value"))
		}
		return nil
	})
	return k, v, err
}

func (d *decoder) mount(b []byte, where place) (m Mount, err error) {
	err = d.fields(b, where, func(f field) error {
		switch {
		case f.num == 1 && f.typ == wireBytes:
			return str(&m.ContainerPath, f.data, where.in(".ContainerPath"))
		case f.num == 2 && f.typ == wireBytes:
			return str(&m.HostPath, f.data, where.in(".HostPath"))
		case f.num == 3 && f.typ == wireVarint:
			m.ReadOnly = f.v != 0
		}
		return nil
	})
	return m, err
}

func (d *decoder) device(b []byte, where place) (s DeviceSpec, err error) {
	err = d.fields(b, where, func(f field) error {
		if f.typ != wireBytes {
			return nil
		}
		switch f.num {
		case 1:
			return str(&s.ContainerPath, f.data, where.in(".ContainerPath"))
		case 2:
			return str(&s.HostPath, f.data, where.in(".HostPath"))
		case 3:
			return str(&s.Permissions, f.data, where.in(".Permissions"))
		}
		return nil
	})
	return s, err
}

func (d *decoder) cdi(b []byte, where place) (c CDIDevice, err error) {
	err = d.fields(b, where, func(f field) error {
		if f.num == 1 && f.typ == wireBytes {
			return str(&c.Name, f.data, where.in(".Name"))
		}
		return nil
	})
	return c, err
}

// str stores a proto3 string field, which protobuf requires to be UTF-8.
func str(dst *string, data []byte, where place) error {
	if !utf8.Valid(data) {
		return fmt.Errorf("allocresp: %s: string is not valid UTF-8", where)
	}
	*dst = string(data)
	return nil
}

// consumeValue reads the value of a field of wire type typ at the start of b
// into f and returns its length. Groups are skipped whole, as protobuf does
// for every group here: no field of this API is a group.
func consumeValue(num, typ uint64, b []byte, f *field) (int, error) {
	switch typ {
	case wireVarint:
		v, n := consumeVarint(b)
		if n < 0 {
			return 0, fmt.Errorf("varint value: %s", varintErrors[-n])
		}
		f.v = v
		return n, nil
	case wireFixed64:
		if len(b) < 8 {
			return 0, fmt.Errorf("fixed64 value needs 8 bytes, %d remain", len(b))
		}
		return 8, nil
	case wireFixed32:
		if len(b) < 4 {
			return 0, fmt.Errorf("fixed32 value needs 4 bytes, %d remain", len(b))
		}
		return 4, nil
	case wireBytes:
		l, n := consumeVarint(b)
		if n < 0 {
			return 0, fmt.Errorf("length: %s", varintErrors[-n])
		}
		if l > uint64(len(b)-n) {
			return 0, fmt.Errorf("length %d exceeds the %d remaining bytes", l, len(b)-n)
		}
		f.data = b[n : n+int(l)]
		return n + int(l), nil
	case wireStartGroup:
		return skipGroup(num, b)
	}
	return 0, fmt.Errorf("wire type %d is reserved", typ)
}

// skipGroup skips the body of a group opened with field number num, up to
// and including its end-group tag, and returns the bytes consumed. It keeps
// the open groups on a stack rather than recursing, with the nesting limit
// proto.Unmarshal applies.
func skipGroup(num uint64, b []byte) (int, error) {
	open := []uint64{num}
	var f field
	for off := 0; ; {
		tag, n := consumeVarint(b[off:])
		if n < 0 {
			return 0, fmt.Errorf("tag inside group %d: %s", open[len(open)-1], varintErrors[-n])
		}
		off += n
		inner, typ := tag>>3, tag&7
		if inner < 1 || inner > maxGroupFieldNumber {
			return 0, fmt.Errorf("field number %d inside group %d is outside 1..%d", inner, open[len(open)-1], maxGroupFieldNumber)
		}
		switch typ {
		case wireEndGroup:
			if inner != open[len(open)-1] {
				return 0, fmt.Errorf("end-group tag %d does not close group %d", inner, open[len(open)-1])
			}
			open = open[:len(open)-1]
			if len(open) == 0 {
				return off, nil
			}
		case wireStartGroup:
			if len(open) == maxGroupNesting {
				return 0, fmt.Errorf("groups nest deeper than %d", maxGroupNesting)
			}
			open = append(open, inner)
		default:
			n, err := consumeValue(inner, typ, b[off:], &f)
			if err != nil {
				return 0, fmt.Errorf("field %d inside group %d: %s", inner, open[len(open)-1], err)
			}
			off += n
		}
	}
}

// consumeVarint decodes a base-128 varint, returning its value and length, or
// a negative length indexing varintErrors. Like protobuf it allows at most 10
// bytes and rejects a 10th byte that would overflow 64 bits.
func consumeVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 10; i++ {
		if i >= len(b) {
			return 0, -1
		}
		c := b[i]
		if i == 9 && c > 1 {
			return 0, -2
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, -2
}

var varintErrors = [...]string{1: "truncated varint", 2: "varint overflows 64 bits"}
