package preemption

import (
	"errors"
	"fmt"
	"strings"

	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/properties/admissioncheck"
)

func (m *machine) newUID() string {
	m.uids++
	return fmt.Sprintf("p%d", m.uids)
}

// podArrives adds one to four pods: preemption removes pods too, and the
// interesting cases need several candidates. On a full node it does not
// apply (t.Skip before any draw makes rapid draw another action), rather
// than turning into another action: a shrunk case then keeps each step's
// meaning when rapid deletes an earlier one.
func (m *machine) podArrives(t *rapid.T) {
	if len(m.active) >= maxActive {
		t.Skip("the node runs as many pods as the brute force can search")
	}
	n := min(rapid.IntRange(1, 4).Draw(t, "arriving"), maxActive-len(m.active))
	var added []string
	for i := 0; i < n; i++ {
		p := admissioncheck.Pod(t, m.newUID(), admissioncheck.PodOptions{})
		m.active = append(m.active, p)
		added = append(added, admissioncheck.DescribePod(p))
	}
	m.steps.Begin("podArrives", "%s", strings.Join(added, " "))
}

func (m *machine) podLeaves(t *rapid.T) {
	if len(m.active) < minLeaving {
		t.Skip("too few pods for one to leave")
	}
	i := rapid.IntRange(0, len(m.active)-1).Draw(t, "leaving")
	m.steps.Begin("podLeaves", "%s", m.active[i].UID)
	m.active = append(m.active[:i], m.active[i+1:]...)
}

// preempt asks the system under test about an arriving pod; each victim's kill
// fails with probability 1/4, and the victims killed leave.
func (m *machine) preempt(t *rapid.T, action string, critical bool) {
	p := admissioncheck.Pod(t, m.newUID(), admissioncheck.PodOptions{Critical: critical})
	reasons := admissioncheck.Reasons(t)
	m.steps.Begin(action, "%s reasons=%s active=%s", admissioncheck.DescribePod(p), admissioncheck.DescribeReasons(reasons), admissioncheck.DescribeUIDs(m.active))
	c, err := m.sut(p, append([]*pod.Pod(nil), m.active...), reasons, func(i int) error {
		if rapid.IntRange(0, 3).Draw(t, "killFails") == 0 {
			return errors.New("failed to kill pod: context deadline exceeded")
		}
		return nil
	})
	if err != nil {
		m.t.Fatalf("%s: %v", admissioncheck.PRModel, err)
	}
	m.t.Logf("  victims=%s killFailed=%d err=%v", admissioncheck.DescribeUIDs(c.Victims), len(c.Victims)-len(c.Evicted), c.Err)
	for _, v := range c.Evicted {
		for i, a := range m.active {
			if a == v {
				m.active = append(m.active[:i], m.active[i+1:]...)
				break
			}
		}
	}
	c.Observe(m.tally.Observe)
	m.last = c
}
