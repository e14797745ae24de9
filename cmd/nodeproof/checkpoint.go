package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
)

// checkpointOptions are the validated arguments of `nodeproof checkpoint`.
type checkpointOptions struct {
	file   string
	asJSON bool
}

func newCheckpointCommand() *cobra.Command {
	var opts checkpointOptions
	cmd := &cobra.Command{
		Use:   "checkpoint FILE [--json]",
		Short: "decode a device manager checkpoint file (kubelet_internal_checkpoint) and check its invariants",
		Long: `Decodes a device manager checkpoint, prints its devices and entries, and exits 1
when it does not decode or breaks an invariant of the kubelet's allocation state.`,
		DisableFlagsInUseLine: true,
		Args: func(_ *cobra.Command, args []string) error {
			switch len(args) {
			case 0:
				return usageError(errors.New("FILE is required"))
			case 1:
				return nil
			}
			return usageError(fmt.Errorf("unexpected argument %q", args[1]))
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.file = args[0]
			return exitWith(runCheckpoint(opts, cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print the result as JSON")
	return cmd
}

func runCheckpoint(opts checkpointOptions, stdout, stderr io.Writer) int {
	d, err := readCheckpoint(opts.file)
	if err != nil {
		fmt.Fprintf(stderr, "nodeproof checkpoint: %v\n", err)
		if opts.asJSON {
			// A script reading --json gets a document for every file, one
			// that does not decode included.
			if err := writeCheckpointJSON(stdout, checkpointJSON{
				Error:             err.Error(),
				RegisteredDevices: map[string][]string{},
				PodDeviceEntries:  []entryJSON{},
				Violations:        []string{},
			}); err != nil {
				fmt.Fprintf(stderr, "nodeproof checkpoint: writing JSON: %v\n", err)
			}
		}
		// A file that cannot be opened is bad input (2), as in the other
		// commands; one that does not decode fails the check (1).
		if _, unopened := errors.AsType[*fs.PathError](err); unopened {
			return exitUsage
		}
		return exitFailed
	}
	in := inspect(d)
	if opts.asJSON {
		if err := writeCheckpointJSON(stdout, in.json()); err != nil {
			fmt.Fprintf(stderr, "nodeproof checkpoint: writing JSON: %v\n", err)
			return 1
		}
	} else {
		in.print(stdout, opts.file)
	}
	if len(in.violations) > 0 {
		return 1
	}
	return 0
}

// readCheckpoint reads and strictly decodes the file at path, explaining a
// refusal in the kubelet's terms: whether the kubelet would have loaded the
// file, and the two checksums when they differ.
func readCheckpoint(path string) (checkpoint.Data, error) {
	f, err := os.Open(path)
	if err != nil {
		return checkpoint.Data{}, err
	}
	defer f.Close()
	// One byte over the limit is enough for Decode to refuse the file, and
	// stops a path such as /dev/zero from being read without end.
	b, err := io.ReadAll(io.LimitReader(f, checkpoint.MaxFileBytes+1))
	if err != nil {
		return checkpoint.Data{}, fmt.Errorf("%s: %v", path, err)
	}
	d, err := checkpoint.Decode(b)
	if err == nil {
		return d, nil
	}
	if ce, ok := errors.AsType[*checkpoint.CorruptError](err); ok {
		return checkpoint.Data{}, corruptError(path, ce.Expected, ce.Actual)
	}
	if len(b) > checkpoint.MaxFileBytes {
		return checkpoint.Data{}, fmt.Errorf("%s: %v", path, err)
	}
	// Decode refuses what the kubelet's encoding/json would accept
	// (whitespace, key order, escapes, unknown fields), so read the file the
	// kubelet's way to tell a reformatted file from a broken one.
	var kf struct {
		Data     checkpoint.Data
		Checksum uint64
	}
	if json.Unmarshal(b, &kf) != nil {
		return checkpoint.Data{}, fmt.Errorf("%s: %v", path, err)
	}
	if sum := checkpoint.Checksum(kf.Data); sum != kf.Checksum {
		return checkpoint.Data{}, corruptError(path, kf.Checksum, sum)
	}
	return checkpoint.Data{}, fmt.Errorf("%s: not in the canonical form the kubelet writes: %v (its checksum verifies, so the kubelet itself would load it)", path, err)
}

func corruptError(path string, stored, computed uint64) error {
	return fmt.Errorf("%s: checkpoint is corrupted: the file stores checksum %d, its content has checksum %d", path, stored, computed)
}

// inspection is what the command reports about a checkpoint that decodes.
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

func (in inspection) print(w io.Writer, path string) {
	var b strings.Builder
	fmt.Fprintf(&b, "checkpoint %s\n", path)
	fmt.Fprintf(&b, "checksum: %d (valid)\n", checkpoint.Checksum(in.data))

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
	io.WriteString(w, b.String())
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

// checkpointJSON is the --json output.
type checkpointJSON struct {
	ChecksumValid     bool                `json:"checksumValid"`
	Error             string              `json:"error,omitempty"`
	RegisteredDevices map[string][]string `json:"registeredDevices"`
	PodDeviceEntries  []entryJSON         `json:"podDeviceEntries"`
	Violations        []string            `json:"violations"`
}

type entryJSON struct {
	PodUID        string                    `json:"podUID"`
	ContainerName string                    `json:"containerName"`
	ResourceName  string                    `json:"resourceName"`
	DeviceIDs     checkpoint.DevicesPerNUMA `json:"deviceIDs"`
}

func (in inspection) json() checkpointJSON {
	out := checkpointJSON{
		ChecksumValid: true,
		// Lists keep null or [] as in the file; the maps and lists of the
		// document itself are never null, so consumers need no nil checks.
		RegisteredDevices: in.data.RegisteredDevices,
		PodDeviceEntries:  []entryJSON{},
		Violations:        append([]string{}, in.violations...),
	}
	if out.RegisteredDevices == nil {
		out.RegisteredDevices = map[string][]string{}
	}
	for _, e := range in.data.PodDeviceEntries {
		out.PodDeviceEntries = append(out.PodDeviceEntries, entryJSON{e.PodUID, e.ContainerName, e.ResourceName, e.DeviceIDs})
	}
	return out
}

// writeCheckpointJSON fails only when w does: the document holds nothing that
// cannot encode.
func writeCheckpointJSON(w io.Writer, v checkpointJSON) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Device IDs and resource names are read more often than embedded in HTML.
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
