package deviceagent

import (
	"fmt"
	"strings"
)

// Describe renders an operation for porcupine's visualization.
func Describe(in Input, out Output) string {
	var b strings.Builder
	b.WriteString(string(in.Op))
	switch in.Op {
	case Update:
		fmt.Fprintf(&b, " %s %v", in.Resources[0], in.Devices)
	case Admit, Reserve:
		fmt.Fprintf(&b, " %s %v", in.Pod, in.Wants)
	case Release, Remove:
		fmt.Fprintf(&b, " %s", in.Pod)
	case Register:
		fmt.Fprintf(&b, " %s at %q", in.Resources[0], in.Endpoint)
	default:
		fmt.Fprintf(&b, " %s", strings.Join(in.Resources, ","))
	}
	switch {
	case out.Unknown:
		b.WriteString(" -> unknown")
	case out.Err != "":
		b.WriteString(" -> " + out.Err)
	case in.Op == Capacity:
		for _, c := range out.Counts {
			fmt.Fprintf(&b, " -> %s %d/%d", c.Resource, c.Allocatable, c.Capacity)
		}
	default:
		b.WriteString(" -> ok")
		for _, g := range out.Granted {
			fmt.Fprintf(&b, " %s %v", g.Resource, g.DeviceIDs)
		}
	}
	return b.String()
}

// String renders the state: per resource its devices (healthy ones marked
// +), its pending update if any, and who holds which.
func (s State) String() string {
	var b strings.Builder
	for _, r := range s.resources {
		fmt.Fprintf(&b, "%s [", r.name)
		for _, d := range r.devices {
			mark := "-"
			if d.Healthy {
				mark = "+"
			}
			fmt.Fprintf(&b, " %s%s", d.ID, mark)
		}
		b.WriteString(" ]")
		if r.hasPending {
			fmt.Fprintf(&b, " pending %v;", r.pending)
		}
		for _, h := range r.held {
			kind := "holds"
			if h.reserved {
				kind = "reserves"
			}
			fmt.Fprintf(&b, " %s %s %v;", h.pod, kind, h.devices)
		}
		b.WriteString("\n")
	}
	return b.String()
}
