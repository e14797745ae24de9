package conformance

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Deviations D2 and D3 in the registration comparison (docs/deviations.md):
// the inputs where each can show, and, for a mismatch, whether every
// difference is one they can make. Both come from upstream deciding in Go
// map order, so what they may change follows from the spec's Allocate
// (spec/devicemanager.md 1.6, 1.7):
//
// D2. devicesToAllocate takes a container's devices from its pod's reuse
// pool first, iterating the pool, a set, in map order: when the pool holds
// more devices than the container needs, which of them it gets is random;
// nodeproof takes the lowest IDs. That changes which device IDs each
// container of the pod holds and what follows from the IDs in the pod's
// admission step: the ID lists of the Allocate, GetPreferredAllocation and
// PreStartContainer calls, the answers' environment in the run options,
// and the pod's checkpoint entries. It cannot change how many devices each
// container holds, which containers got devices, the admission and its
// message, capacity and allocatable, the number and order of the calls,
// nor the set of devices the pod holds of each resource: the pool is made
// of the devices of the pod's earlier init containers, so the pod holds
// all of it whatever its containers took from it, and what a container
// needs beyond the pool the plugin's preference decides from the same free
// devices. Later pods therefore see the same free devices. Those are
// compared: everything but the IDs, and per resource the union of the IDs
// of the step and of the pod's checkpoint entries.
//
// D3. allocateContainerResources visits a container's resources in map
// order, each with its own GetPreferredAllocation and Allocate RPC, and
// stops at the first that fails; nodeproof asks for the preferences in
// name order up to the first resource whose checks fail, then plans both
// before any Allocate (deviation A7). The order of the RPCs across the two
// plugins is not recorded (each plugin records its own calls), and for an
// admitted pod each plugin is asked the same on both sides, so D3 can only
// show on a pod rejected at a container that needs both resources: the
// rejection may name the other resource; a kubelet may ask the plugin of
// the resource its rejection does not name for one more preference or
// allocation (the failing container's, so the last of its kind in the
// step); and upstream keeps what that Allocate gave the container in its
// pod devices until the next garbage collection, so its checkpoint may
// hold that entry where nodeproof's does not.

// walkReuse visits each container of a pod that asks for devices of a
// resource, in upstream's order (init containers, then app containers),
// with the number of devices in the pod's reuse pool of that resource when
// the container is allocated, as if every allocation succeeded; visit may
// change the request. The pool follows upstream's Allocate: a container
// takes from the pool first; a regular init container's devices join the
// pool, so it holds the larger of the two; a sidecar's and an app
// container's leave it.
func walkReuse(p *regPod, visit func(c *regContainer, r int, pool int64)) {
	var pool [2]int64
	walk := func(c *regContainer, joins bool) {
		for r := range regResources {
			if c.Devices[r] > 0 {
				visit(c, r, pool[r])
			}
			if n := c.Devices[r]; joins {
				pool[r] = max(pool[r], n)
			} else {
				pool[r] -= min(n, pool[r])
			}
		}
	}
	for _, c := range ptrs(p.Init) {
		walk(c, !c.Sidecar)
	}
	for _, c := range ptrs(p.Apps) {
		walk(c, false)
	}
}

// reuseChoicePods returns the pods of which a container takes fewer devices
// than its reuse pool holds: D2 applies to them.
func reuseChoicePods(sc regScenario) map[string]bool {
	out := map[string]bool{}
	for _, st := range sc.Steps {
		if st.Pod == nil {
			continue
		}
		walkReuse(st.Pod, func(c *regContainer, r int, pool int64) {
			if c.Devices[r] < pool {
				out[st.Pod.UID] = true
			}
		})
	}
	return out
}

// twoResourceContainers returns, per pod, its containers that need devices
// of both resources: D3 applies to them.
func twoResourceContainers(sc regScenario) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, st := range sc.Steps {
		if st.Pod == nil {
			continue
		}
		for _, c := range slices.Concat(st.Pod.Init, st.Pod.Apps) {
			if c.Devices[0] > 0 && c.Devices[1] > 0 {
				if out[st.Pod.UID] == nil {
					out[st.Pod.UID] = map[string]bool{}
				}
				out[st.Pod.UID][c.Name] = true
			}
		}
	}
	return out
}

// explainRegistration is the registration comparison's Explain: nodeproof's
// two pairings must agree exactly, and each upstream pairing may differ
// from nodeproof's pairing with the same plugin kind only as D2 and D3 allow.
func explainRegistration(sc regScenario, ours, theirs [2]regRun) ([]string, error) {
	if !slices.Equal(ours[0].Steps, ours[1].Steps) || !slices.Equal(ours[0].Checkpoint, ours[1].Checkpoint) {
		return nil, errors.New("nodeproof's two pairings differ")
	}
	e := regExplainer{reuse: reuseChoicePods(sc), both: twoResourceContainers(sc), used: map[string]bool{}}
	for j := range theirs {
		if err := e.run(sc, ours[j], theirs[j]); err != nil {
			return nil, fmt.Errorf("%s against %s: %w", theirs[j].Pairing, ours[j].Pairing, err)
		}
	}
	return slices.Sorted(maps.Keys(e.used)), nil
}

type regExplainer struct {
	reuse map[string]bool            // pods D2 applies to
	both  map[string]map[string]bool // containers D3 applies to, by pod
	used  map[string]bool            // the deviations a difference needed
}

// run compares nodeproof's run a with upstream's run b.
func (e regExplainer) run(sc regScenario, a, b regRun) error {
	if len(a.Steps) != len(b.Steps) || len(a.Calls) != len(b.Calls) || len(a.Steps) != len(a.Calls) {
		return fmt.Errorf("%d steps and %d call lists against %d and %d", len(a.Steps), len(a.Calls), len(b.Steps), len(b.Calls))
	}
	// rejected holds each pod both rejected: nodeproof's message, then upstream's.
	rejected := map[string][2]string{}
	for i := range a.Steps {
		var p *regPod
		if k := i - len(regResources); k >= 0 && k < len(sc.Steps) {
			p = sc.Steps[k].Pod
		}
		if p == nil {
			if a.Steps[i] != b.Steps[i] {
				return fmt.Errorf("step %d: %q against %q", i, a.Steps[i], b.Steps[i])
			}
			if !slices.Equal(a.Calls[i], b.Calls[i]) {
				return fmt.Errorf("step %d asked the plugins %q against %q", i, a.Calls[i], b.Calls[i])
			}
			continue
		}
		if err := e.admission(p, a.Steps[i], b.Steps[i], a.Calls[i], b.Calls[i], rejected); err != nil {
			return fmt.Errorf("step %d (admit %s): %w", i, p.UID, err)
		}
	}
	return e.checkpoint(a.Checkpoint, b.Checkpoint, rejected)
}

// admission compares the steps that admitted pod p.
func (e regExplainer) admission(p *regPod, lineA, lineB string, callsA, callsB []string, rejected map[string][2]string) error {
	d2, d3 := e.reuse[p.UID], len(e.both[p.UID]) > 0
	outA, _ := strings.CutPrefix(lineA, "admit "+p.UID+": ")
	outB, _ := strings.CutPrefix(lineB, "admit "+p.UID+": ")
	msgA, rejA := strings.CutPrefix(outA, "rejected: ")
	msgB, rejB := strings.CutPrefix(outB, "rejected: ")
	rejectedByBoth := rejA && rejB
	switch {
	case outA == outB:
	case rejectedByBoth && d3:
		ra, rb := namedResource(msgA), namedResource(msgB)
		if ra == "" || rb == "" || ra == rb {
			return fmt.Errorf("the rejections differ, and not in the resource they name: %q against %q", msgA, msgB)
		}
		e.used["D3"] = true
	case !rejA && !rejB && d2 && maskIDs(outA) == maskIDs(outB):
		e.used["D2"] = true
	default:
		return fmt.Errorf("%q against %q", outA, outB)
	}
	if rejectedByBoth {
		rejected[p.UID] = [2]string{msgA, msgB}
	}

	groupsA, groupsB := callsByPluginAndKind(callsA), callsByPluginAndKind(callsB)
	var idsA, idsB [2]map[string]bool
	for _, key := range slices.Sorted(maps.Keys(mergeKeys(groupsA, groupsB))) {
		ca, cb := groupsA[key], groupsB[key]
		resource, kind, _ := strings.Cut(key, " ")
		if rejectedByBoth && d3 && (kind == "GetPreferredAllocation" || kind == "Allocate") {
			// The failing container's call to the plugin of the resource
			// a side's rejection does not name: that side may have made it.
			switch {
			case len(ca) == len(cb)+1 && resource != namedResource(msgA):
				ca = ca[:len(cb)]
				e.used["D3"] = true
			case len(cb) == len(ca)+1 && resource != namedResource(msgB):
				cb = cb[:len(ca)]
				e.used["D3"] = true
			}
		}
		switch {
		case slices.Equal(ca, cb):
		case d2 && slices.Equal(mapSlice(ca, maskIDs), mapSlice(cb, maskIDs)):
			e.used["D2"] = true
		default:
			return fmt.Errorf("%s was asked %q against %q", resource, ca, cb)
		}
		r := slices.Index(regResources, resource)
		for _, c := range ca {
			addIDs(&idsA[r], c)
		}
		for _, c := range cb {
			addIDs(&idsB[r], c)
		}
	}
	if !d2 {
		return nil
	}
	for _, m := range envIDs.FindAllStringSubmatch(outA, -1) {
		addIDs(&idsA[strings.Index("AB", m[1])], m[2])
	}
	for _, m := range envIDs.FindAllStringSubmatch(outB, -1) {
		addIDs(&idsB[strings.Index("AB", m[1])], m[2])
	}
	for r, name := range regResources {
		if !maps.Equal(idsA[r], idsB[r]) {
			return fmt.Errorf("the step handed out other devices of %s: %v against %v (D2 changes only which container takes which)",
				name, slices.Sorted(maps.Keys(idsA[r])), slices.Sorted(maps.Keys(idsB[r])))
		}
	}
	return nil
}

// checkpoint compares the final checkpoints: the registered devices
// exactly; an entry of a pod D2 applies to up to its IDs, with the same
// devices held per pod and resource; an entry upstream alone has, for a
// container D3 applies to of a pod both rejected, when the entry's
// resource is not the one upstream's rejection names.
func (e regExplainer) checkpoint(a, b []string, rejected map[string][2]string) error {
	headA, entriesA := checkpointEntries(a)
	headB, entriesB := checkpointEntries(b)
	if !slices.Equal(headA, headB) {
		return fmt.Errorf("checkpoint: %q against %q", headA, headB)
	}
	type podResource struct{ uid, resource string }
	heldA, heldB := map[podResource]map[string]bool{}, map[podResource]map[string]bool{}
	for _, key := range slices.Sorted(maps.Keys(mergeKeys(entriesA, entriesB))) {
		ea, inA := entriesA[key]
		eb, inB := entriesB[key]
		who, resource, _ := strings.Cut(key, " ")
		uid, container, _ := strings.Cut(who, "/")
		if inA != inB {
			msgs, both := rejected[uid]
			if inB && both && e.both[uid][container] && resource != namedResource(msgs[1]) {
				e.used["D3"] = true
				continue
			}
			return fmt.Errorf("checkpoint entry %q only in one: %q against %q", key, ea, eb)
		}
		switch {
		case ea == eb:
		case e.reuse[uid] && maskIDs(ea) == maskIDs(eb):
			e.used["D2"] = true
		default:
			return fmt.Errorf("checkpoint entry %q against %q", ea, eb)
		}
		if e.reuse[uid] {
			pr := podResource{uid, resource}
			// The entry's own fields hold no ID; the rest is the devices
			// and the answer's environment.
			m, n := heldA[pr], heldB[pr]
			addIDs(&m, ea)
			addIDs(&n, eb)
			heldA[pr], heldB[pr] = m, n
		}
	}
	for pr, ids := range heldA {
		if !maps.Equal(ids, heldB[pr]) {
			return fmt.Errorf("checkpoint: pod %s holds other devices of %s: %v against %v (D2 changes only which container holds which)",
				pr.uid, pr.resource, slices.Sorted(maps.Keys(ids)), slices.Sorted(maps.Keys(heldB[pr])))
		}
	}
	return nil
}

// checkpointEntries splits a rendered checkpoint into its registered
// devices (or its error) and its entries by "pod/container resource".
func checkpointEntries(lines []string) (head []string, entries map[string]string) {
	entries = map[string]string{}
	for _, l := range lines {
		if strings.HasPrefix(l, "registered ") || strings.HasPrefix(l, "error: ") {
			head = append(head, l)
			continue
		}
		fields := strings.Fields(l)
		if len(fields) < 2 {
			head = append(head, l)
			continue
		}
		entries[fields[0]+" "+fields[1]] = l
	}
	return head, entries
}

// callsByPluginAndKind groups a step's calls by "<resource> <kind>", each
// group in the order asked.
func callsByPluginAndKind(calls []string) map[string][]string {
	out := map[string][]string{}
	for _, c := range calls {
		resource, call, _ := strings.Cut(c, " ")
		key := resource + " " + callKind(call)
		out[key] = append(out[key], call)
	}
	return out
}

func mergeKeys[V any](a, b map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func mapSlice(s []string, f func(string) string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = f(x)
	}
	return out
}

// namedResource returns the one resource a message names, or "".
func namedResource(msg string) string {
	var named []string
	for _, r := range regResources {
		if strings.Contains(msg, r) {
			named = append(named, r)
		}
	}
	if len(named) != 1 {
		return ""
	}
	return named[0]
}

var (
	// deviceIDList is a list of device IDs as the runs print them: in a
	// call ("[d0 d1]"), an environment value ("DEV_A=d0,d1") or a
	// checkpoint entry ("-1:d0,d1"). Pod and container names ("pod0",
	// "init1") end in digits but do not start a word with d.
	deviceIDList = regexp.MustCompile(`\bd[0-9]+(?:[ ,]d[0-9]+)*\b`)
	deviceID     = regexp.MustCompile(`\bd[0-9]+\b`)
	// envIDs is one resource's devices in a container's run options.
	envIDs = regexp.MustCompile(`DEV_([AB])=([a-z0-9,]*)`)
)

// maskIDs replaces each list of device IDs with its length.
func maskIDs(s string) string {
	return deviceIDList.ReplaceAllStringFunc(s, func(list string) string {
		return fmt.Sprintf("<%d IDs>", len(deviceID.FindAllString(list, -1)))
	})
}

// addIDs adds the device IDs s mentions to *set.
func addIDs(set *map[string]bool, s string) {
	if *set == nil {
		*set = map[string]bool{}
	}
	for _, id := range deviceID.FindAllString(s, -1) {
		(*set)[id] = true
	}
}
