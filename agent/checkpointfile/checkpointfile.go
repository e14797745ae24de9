package checkpointfile

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
)

// Report is everything there is to say about one file. The text and the
// JSON form are both rendered from it, so they cannot disagree.
type Report struct {
	// name is what the file is called in every message: its path, or
	// "stdin".
	name string
	// decoded is set when the file parses as the kubelet parses it; file
	// and inspection are then filled in, even when the checksum fails.
	decoded bool
	file    checkpoint.File
	// problem says why the kubelet would refuse the file, or why it could
	// not be read; empty when the kubelet loads it.
	problem string
	inspection
}

// Unreadable is the report on a file that could not be read; err says why
// and names the file.
func Unreadable(name string, err error) Report {
	return Report{name: name, problem: err.Error()}
}

// Problem says why the kubelet would refuse the file, or why it could not
// be read; "" when the kubelet loads it.
func (r Report) Problem() string { return r.problem }

// Broken reports whether the kubelet would refuse the file or its content
// breaks an invariant; a note (non-canonical bytes, say) is not.
func (r Report) Broken() bool { return r.problem != "" || len(r.violations) > 0 }

// Examine reads b as the kubelet does and inspects the content it
// holds, whether or not its checksum verifies.
func Examine(name string, b []byte) Report {
	f, err := checkpoint.Read(b)
	if err != nil {
		return Report{name: name, problem: fmt.Sprintf("%s: %v", name, err)}
	}
	r := Report{name: name, decoded: true, file: f, inspection: inspect(f.Data)}
	if f.Verify() != nil {
		r.problem = fmt.Sprintf("%s: checkpoint is corrupted: the file stores checksum %d, its content has checksum %d; the kubelet would refuse it and start with no allocations",
			name, f.StoredChecksum, f.ComputedChecksum)
	}
	if !f.Canonical() {
		note := fmt.Sprintf("the bytes are not canonical: from byte %d on they differ from what the kubelet writes for this content (reindented, reordered or respelled); the kubelet's checksum covers the decoded content, not the bytes", f.NonCanonicalAt)
		if f.Verify() == nil {
			note += ", so it loads the file all the same, and its next write makes the file canonical"
		}
		r.notes = append([]string{note + "."}, r.notes...)
	}
	return r
}

// inspection is what a report says about a checkpoint that decodes.
type inspection struct {
	data       checkpoint.Data
	responses  []decodedResponse // one per entry of data.PodDeviceEntries
	violations []string
	notes      []string
}

type decodedResponse struct {
	resp allocresp.ContainerAllocateResponse
	err  error
}

// holderKey names a device of a resource, for finding who holds it.
type holderKey struct{ resource, id string }

// entryKey is the key under which the kubelet restores an entry; a later
// entry with the same key replaces an earlier one.
type entryKey struct{ pod, container, resource string }

// inspect checks d against what the kubelet's allocation state may hold.
// Findings come in a fixed order (registered devices, then each entry in file
// order, then duplicate entries, then devices held twice), so the output of a
// file never changes.
func inspect(d checkpoint.Data) inspection {
	in := inspection{data: d}
	for _, r := range slices.Sorted(maps.Keys(d.RegisteredDevices)) {
		for _, id := range repeated(d.RegisteredDevices[r]) {
			in.violations = append(in.violations, fmt.Sprintf("RegisteredDevices[%q] lists device %q more than once.", r, id))
		}
	}

	holders := map[holderKey][]int{}
	byKey := map[entryKey][]int{}
	var keys []entryKey // in order of first appearance
	for i, e := range d.PodDeviceEntries {
		resp, err := allocresp.Unmarshal(e.AllocResp)
		in.responses = append(in.responses, decodedResponse{resp, err})
		total := 0
		for _, numa := range slices.Sorted(maps.Keys(e.DeviceIDs)) {
			ids := e.DeviceIDs[numa]
			total += len(ids)
			for _, id := range repeated(ids) {
				in.violations = append(in.violations, fmt.Sprintf("%s lists device %q more than once on %s.", entryLabel(i, e), id, numaLabel(numa)))
			}
			for _, id := range ids {
				k := holderKey{e.ResourceName, id}
				if h := holders[k]; len(h) == 0 || h[len(h)-1] != i {
					holders[k] = append(h, i)
				}
			}
		}
		if total == 0 {
			in.violations = append(in.violations, fmt.Sprintf("%s has no device IDs.", entryLabel(i, e)))
		}
		if err != nil {
			in.violations = append(in.violations, fmt.Sprintf("%s has an AllocResp that does not decode (%v): the kubelet skips the entry on restore, so the container silently loses its devices.", entryLabel(i, e), err))
		}
		k := entryKey{e.PodUID, e.ContainerName, e.ResourceName}
		if _, seen := byKey[k]; !seen {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], i)
	}

	for _, k := range keys {
		if idx := byKey[k]; len(idx) > 1 {
			in.violations = append(in.violations, fmt.Sprintf("%s all record pod %q, container %q, resource %q: the kubelet keeps only the last, PodDeviceEntries[%d].",
				indexList(idx), k.pod, k.container, k.resource, idx[len(idx)-1]))
		}
	}

	for _, k := range slices.SortedFunc(maps.Keys(holders), func(a, b holderKey) int {
		return strings.Compare(a.resource+"\x00"+a.id, b.resource+"\x00"+b.id)
	}) {
		idx := holders[k]
		pods := map[string]bool{}
		containers := map[entryKey]bool{}
		var names []string
		for _, i := range idx {
			e := d.PodDeviceEntries[i]
			pods[e.PodUID] = true
			containers[entryKey{pod: e.PodUID, container: e.ContainerName}] = true
			names = append(names, fmt.Sprintf("PodDeviceEntries[%d] (pod %q, container %q)", i, e.PodUID, e.ContainerName))
		}
		switch {
		case len(pods) > 1:
			in.violations = append(in.violations, fmt.Sprintf("device %q of resource %q is held by containers of different pods: %s.", k.id, k.resource, joinAnd(names)))
		case len(containers) > 1:
			// Entries that repeat one container are reported above as
			// duplicates; several containers of one pod are upstream's
			// reuse of init container devices by app containers.
			in.notes = append(in.notes, fmt.Sprintf("device %q of resource %q is shared by %s of one pod: the kubelet reuses init container devices for app containers, so this is not a violation.",
				k.id, k.resource, joinAnd(names)))
		}
	}
	return in
}

// repeated returns, in order of first appearance, the IDs that occur more
// than once in ids.
func repeated(ids []string) []string {
	count := map[string]int{}
	var dup []string
	for _, id := range ids {
		count[id]++
		if count[id] == 2 {
			dup = append(dup, id)
		}
	}
	return dup
}

func entryLabel(i int, e checkpoint.PodDevicesEntry) string {
	return fmt.Sprintf("PodDeviceEntries[%d] (pod %q, container %q, resource %q)", i, e.PodUID, e.ContainerName, e.ResourceName)
}

func numaLabel(numa int64) string {
	if numa == -1 {
		return "no NUMA"
	}
	return fmt.Sprintf("NUMA node %d", numa)
}

func indexList(idx []int) string {
	names := make([]string, len(idx))
	for j, i := range idx {
		names[j] = fmt.Sprintf("PodDeviceEntries[%d]", i)
	}
	return joinAnd(names)
}

// joinAnd joins at least two items as "a, b and c".
func joinAnd(items []string) string {
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// WriteText writes the report for a reader: the checksum, the devices and
// entries, the notes and the violations. A file that does not decode has
// only its Problem, which the caller reports (on stderr), so nothing is
// written.
func (r Report) WriteText(w io.Writer) error {
	if !r.decoded {
		return nil
	}
	in := r.inspection
	var b strings.Builder
	fmt.Fprintf(&b, "checkpoint %s\n", r.name)
	if r.file.Verify() == nil {
		fmt.Fprintf(&b, "checksum: %d (valid)\n", r.file.StoredChecksum)
	} else {
		fmt.Fprintf(&b, "checksum: %d stored, %d computed over the content (corrupted)\n", r.file.StoredChecksum, r.file.ComputedChecksum)
		b.WriteString("the kubelet would refuse this file: the content below is what the file holds, not what the kubelet would load\n")
	}

	b.WriteString("registered devices:\n")
	if len(in.data.RegisteredDevices) == 0 {
		b.WriteString("  none\n")
	}
	for _, r := range slices.Sorted(maps.Keys(in.data.RegisteredDevices)) {
		fmt.Fprintf(&b, "  %s: %s\n", r, idList(in.data.RegisteredDevices[r]))
	}

	b.WriteString("pod device entries:\n")
	if len(in.data.PodDeviceEntries) == 0 {
		b.WriteString("  none\n")
	}
	for i, e := range in.data.PodDeviceEntries {
		fmt.Fprintf(&b, "  [%d] pod %s, container %s, resource %s\n", i, e.PodUID, e.ContainerName, e.ResourceName)
		if len(e.DeviceIDs) == 0 {
			b.WriteString("      devices: none\n")
		}
		for _, numa := range slices.Sorted(maps.Keys(e.DeviceIDs)) {
			fmt.Fprintf(&b, "      %s: %s\n", numaLabel(numa), idList(e.DeviceIDs[numa]))
		}
		printResponse(&b, in.responses[i])
	}

	for _, n := range in.notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	b.WriteString("violations:")
	if len(in.violations) == 0 {
		b.WriteString(" none")
	}
	b.WriteString("\n")
	for _, v := range in.violations {
		fmt.Fprintf(&b, "  - %s\n", v)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// printResponse summarises the allocate response the kubelet would apply to
// the container: counts for the maps, whose values can be long, and the paths
// and names a reader checks against the node.
func printResponse(b *strings.Builder, r decodedResponse) {
	if r.err != nil {
		fmt.Fprintf(b, "      allocate response: does not decode: %v\n", r.err)
		return
	}
	resp := r.resp
	fmt.Fprintf(b, "      allocate response: envs %d, mounts %d, devices %d, annotations %d, CDI devices %d\n",
		len(resp.Envs), len(resp.Mounts), len(resp.Devices), len(resp.Annotations), len(resp.CDIDevices))
	for _, m := range resp.Mounts {
		mode := "rw"
		if m.ReadOnly {
			mode = "ro"
		}
		fmt.Fprintf(b, "        mount %s -> %s (%s)\n", m.HostPath, m.ContainerPath, mode)
	}
	for _, d := range resp.Devices {
		fmt.Fprintf(b, "        device %s -> %s (%s)\n", d.HostPath, d.ContainerPath, d.Permissions)
	}
	for _, c := range resp.CDIDevices {
		fmt.Fprintf(b, "        CDI device %s\n", c.Name)
	}
}

func idList(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, " ")
}

// Document is the JSON form of a Report, the output of `nodeproof
// checkpoint --json`.
type Document struct {
	File string `json:"file"`
	// Loads says whether the kubelet would load the file; Error says why
	// not, or why the file could not be read.
	Loads         bool   `json:"loads"`
	ChecksumValid bool   `json:"checksumValid"`
	Error         string `json:"error,omitempty"`
	// The checksums and Canonical are absent when the file does not parse.
	StoredChecksum    *uint64             `json:"storedChecksum,omitempty"`
	ComputedChecksum  *uint64             `json:"computedChecksum,omitempty"`
	Canonical         *bool               `json:"canonical,omitempty"`
	RegisteredDevices map[string][]string `json:"registeredDevices"`
	PodDeviceEntries  []entryJSON         `json:"podDeviceEntries"`
	Notes             []string            `json:"notes"`
	Violations        []string            `json:"violations"`
}

type entryJSON struct {
	PodUID        string                    `json:"podUID"`
	ContainerName string                    `json:"containerName"`
	ResourceName  string                    `json:"resourceName"`
	DeviceIDs     checkpoint.DevicesPerNUMA `json:"deviceIDs"`
}

// Document is the report's JSON form.
func (r Report) Document() Document {
	out := Document{
		File:  r.name,
		Loads: r.decoded && r.problem == "",
		Error: r.problem,
		// Lists keep null or [] as in the file; the maps and lists of the
		// document itself are never null, so consumers need no nil checks.
		RegisteredDevices: r.data.RegisteredDevices,
		PodDeviceEntries:  []entryJSON{},
		Notes:             append([]string{}, r.notes...),
		Violations:        append([]string{}, r.violations...),
	}
	if r.decoded {
		stored, computed, canonical := r.file.StoredChecksum, r.file.ComputedChecksum, r.file.Canonical()
		out.ChecksumValid = stored == computed
		out.StoredChecksum, out.ComputedChecksum, out.Canonical = &stored, &computed, &canonical
	}
	if out.RegisteredDevices == nil {
		out.RegisteredDevices = map[string][]string{}
	}
	for _, e := range r.data.PodDeviceEntries {
		out.PodDeviceEntries = append(out.PodDeviceEntries, entryJSON{e.PodUID, e.ContainerName, e.ResourceName, e.DeviceIDs})
	}
	return out
}
