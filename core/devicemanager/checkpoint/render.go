package checkpoint

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// encoder renders a checkpoint's two forms in one walk over the data: the
// checksum input into hash and the file into json, so each map is iterated
// once for both. Checksum and HashInput run it with json stopped, Decode with
// json comparing against the input.
type encoder struct {
	hash  hashWriter
	json  jsonWriter
	numa  []numaIDs // scratch: one entry's DeviceIDs
	items int       // entries, NUMA nodes, resources and device IDs seen
	err   error     // the first string that is not valid UTF-8
}

type numaIDs struct {
	node int64
	ids  []string
}

// data renders d up to the checksum's value, which the caller appends: the
// checksum over d when encoding, the stored one when checking canonical form.
func (e *encoder) data(d Data) {
	e.hash.str("(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)")
	write(&e.json, `{"Data":{"PodDeviceEntries":`)
	if d.PodDeviceEntries == nil {
		e.null()
	} else {
		e.hash.byte('[')
		e.json.byte('[')
		for i, en := range d.PodDeviceEntries {
			if i > 0 {
				e.hash.byte(' ')
				e.json.byte(',')
			}
			e.entry(i, en)
		}
		e.hash.byte(']')
		e.json.byte(']')
	}
	e.items += len(d.PodDeviceEntries) + len(d.RegisteredDevices)

	e.hash.str(" RegisteredDevices:(map[string][]string)")
	write(&e.json, `,"RegisteredDevices":`)
	if d.RegisteredDevices == nil {
		e.null()
	} else {
		// Both go-spew's SortKeys and encoding/json order string keys by
		// their bytes.
		e.hash.str("map[")
		e.json.byte('{')
		for i, name := range slices.Sorted(maps.Keys(d.RegisteredDevices)) {
			if i > 0 {
				e.hash.byte(' ')
				e.json.byte(',')
			}
			e.hash.str(name)
			e.hash.byte(':')
			if !e.json.quote(name) {
				e.invalid("Data.RegisteredDevices[%q]", name)
			}
			e.json.byte(':')
			ids := d.RegisteredDevices[name]
			if j := e.list(ids); j >= 0 {
				e.invalid("Data.RegisteredDevices[%q][%d]", name, j)
			}
		}
		e.hash.byte(']')
		e.json.byte('}')
	}
	e.hash.byte('}')
	write(&e.json, `},"Checksum":`)
}

func (e *encoder) entry(i int, en PodDevicesEntry) {
	for _, f := range [...]struct{ spew, json, name, s string }{
		{"{PodUID:(string)", `{"PodUID":`, "PodUID", en.PodUID},
		{" ContainerName:(string)", `,"ContainerName":`, "ContainerName", en.ContainerName},
		{" ResourceName:(string)", `,"ResourceName":`, "ResourceName", en.ResourceName},
	} {
		e.hash.str(f.spew)
		e.hash.str(f.s)
		write(&e.json, f.json)
		if !e.json.quote(f.s) {
			e.invalid("Data.PodDeviceEntries[%d].%s", i, f.name)
		}
	}

	e.hash.str(" DeviceIDs:(checkpoint.DevicesPerNUMA)")
	write(&e.json, `,"DeviceIDs":`)
	if en.DeviceIDs == nil {
		e.null()
	} else {
		e.numa = e.numa[:0]
		for node, ids := range en.DeviceIDs {
			e.numa = append(e.numa, numaIDs{node, ids})
		}
		e.items += len(e.numa)
		// go-spew sorts integer keys by value.
		slices.SortFunc(e.numa, func(a, b numaIDs) int { return cmp.Compare(a.node, b.node) })
		e.hash.str("map[")
		for k, n := range e.numa {
			if k > 0 {
				e.hash.byte(' ')
			}
			e.hash.int(n.node)
			e.hash.byte(':')
			e.hash.list(n.ids)
		}
		e.hash.byte(']')
		// encoding/json turns integer keys into decimal strings and sorts
		// those, so "-1" < "0" < "10" < "2".
		slices.SortFunc(e.numa, func(a, b numaIDs) int { return compareDecimal(a.node, b.node) })
		e.json.byte('{')
		for k, n := range e.numa {
			if k > 0 {
				e.json.byte(',')
			}
			e.json.int(n.node)
			e.json.byte(':')
			if j := e.json.list(n.ids); j >= 0 {
				e.invalid("Data.PodDeviceEntries[%d].DeviceIDs[\"%d\"][%d]", i, n.node, j)
			}
			e.items += len(n.ids)
		}
		e.json.byte('}')
	}

	e.hash.str(" AllocResp:([]uint8)")
	write(&e.json, `,"AllocResp":`)
	if en.AllocResp == nil {
		e.null()
	} else {
		e.hash.bytes(en.AllocResp)
		e.json.base64(en.AllocResp)
	}
	e.hash.byte('}')
	e.json.byte('}')
}

// list renders a list of device IDs in both forms and returns the index of
// the first one that is not valid UTF-8, or -1.
func (e *encoder) list(ids []string) int {
	e.items += len(ids)
	e.hash.list(ids)
	return e.json.list(ids)
}

// null renders a nil slice or map: <nil> for spew, null for JSON.
func (e *encoder) null() {
	e.hash.str("<nil>")
	write(&e.json, "null")
}

// invalid records that the string at the path is not valid UTF-8; only the
// first such string is reported.
func (e *encoder) invalid(path string, args ...any) {
	if e.err == nil {
		e.err = fmt.Errorf("checkpoint: "+path+": string is not valid UTF-8", args...)
	}
}
