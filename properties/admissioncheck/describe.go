package admissioncheck

import (
	"fmt"
	"strings"

	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
)

// The step lines of the preemption and admission suites show their pods
// and reasons the same way, so a reader compares the two suites' cases at a
// glance.

// DescribePod is a pod as a step line shows it.
func DescribePod(p *pod.Pod) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s{%s", p.UID, p.QOS())
	if p.Priority != nil {
		fmt.Fprintf(&b, " prio=%d", *p.Priority)
	}
	if p.IsStatic() {
		b.WriteString(" static")
	}
	if p.IsMirror() {
		b.WriteString(" mirror")
	}
	if p.IsCritical() {
		b.WriteString(" critical")
	}
	fmt.Fprintf(&b, " requests=%v", p.EffectiveRequests(pod.Options{}))
	if len(p.InitContainers) > 0 {
		fmt.Fprintf(&b, " init=%d", len(p.InitContainers))
	}
	if p.Resources != nil {
		b.WriteString(" podLevel")
	}
	b.WriteString("}")
	return b.String()
}

// DescribeUIDs is a list of pods as a step line shows it: their UIDs.
func DescribeUIDs(pods []*pod.Pod) string {
	var s []string
	for _, p := range pods {
		s = append(s, p.UID)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// DescribeReasons is a list of admission failure reasons as a step line
// shows it: each resource shortfall with its amount, other reasons by text.
func DescribeReasons(reasons []preemption.Reason) string {
	var s []string
	for _, r := range reasons {
		if ir, ok := r.(*preemption.InsufficientResource); ok {
			s = append(s, fmt.Sprintf("%s short %d", ir.ResourceName, ir.InsufficientAmount()))
		} else {
			s = append(s, r.GetReason())
		}
	}
	return "[" + strings.Join(s, ", ") + "]"
}
