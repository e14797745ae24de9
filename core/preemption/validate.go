package preemption

import (
	"fmt"

	"github.com/nodeproof/nodeproof/core/pod"
)

// Bounds on the input. Upstream has none; these keep every sum the core
// and its callers compute far from int64 overflow (a node of MaxActivePods
// pods of MaxContainers containers of MaxQuantity each stays below 2^62) and
// make bad input an error instead of a wrong answer.
const (
	// MaxQuantity bounds every quantity: 2^46 is 64 TiB of memory or about
	// 70 billion cores in millicores.
	MaxQuantity int64 = 1 << 46
	// MaxContainers bounds a pod's init plus app containers.
	MaxContainers = 32
	// MaxActivePods bounds the pods a preemption chooses among.
	MaxActivePods = 1024
	// MaxReasons bounds the failure reasons of one admission.
	MaxReasons = 64
)

// ValidatePod checks the parts of a pod the node's admission reads: a UID,
// at most MaxContainers containers, every quantity in [0, MaxQuantity] and a
// known QoS class status. field names the pod in the error ("preemptor",
// "activePods[3]").
func ValidatePod(p *pod.Pod, field string) error {
	return validatePod(p, func() string { return field })
}

// validatePod takes the field name as a function: admission validates every
// active pod on every decision, and formatting names that no error uses
// would dominate its cost.
func validatePod(p *pod.Pod, field func() string) error {
	if p == nil {
		return fmt.Errorf("%s: must not be nil", field())
	}
	if p.UID == "" {
		return fmt.Errorf("%s.uid: must not be empty", field())
	}
	if n := len(p.InitContainers) + len(p.Containers); n > MaxContainers {
		return fmt.Errorf("%s: %d containers exceed the bound of %d", field(), n, MaxContainers)
	}
	switch p.QOSClass {
	case "", pod.Guaranteed, pod.Burstable, pod.BestEffort:
	default:
		return fmt.Errorf("%s.qosClass: %q is not Guaranteed, Burstable or BestEffort", field(), p.QOSClass)
	}
	check := func(l pod.ResourceList, where func() string) error {
		bad := false
		for _, q := range l {
			if q < 0 || q > MaxQuantity {
				bad = true
				break
			}
		}
		if !bad {
			return nil
		}
		// Name the first bad entry in name order, the same one every time.
		for _, name := range l.Names() {
			if err := validQuantity(fmt.Sprintf("%s.%s[%s]", field(), where(), name), l[name]); err != nil {
				return err
			}
		}
		return nil
	}
	for _, group := range []struct {
		kind string
		list []pod.Container
	}{{"initContainers", p.InitContainers}, {"containers", p.Containers}} {
		for i, c := range group.list {
			if err := check(c.Requests, func() string { return fmt.Sprintf("%s[%d].requests", group.kind, i) }); err != nil {
				return err
			}
			if err := check(c.Limits, func() string { return fmt.Sprintf("%s[%d].limits", group.kind, i) }); err != nil {
				return err
			}
		}
	}
	if err := check(p.Overhead, func() string { return "overhead" }); err != nil {
		return err
	}
	if p.Resources != nil {
		if err := check(p.Resources.Requests, func() string { return "resources.requests" }); err != nil {
			return err
		}
		if err := check(p.Resources.Limits, func() string { return "resources.limits" }); err != nil {
			return err
		}
	}
	return nil
}

func validQuantity(field string, q int64) error {
	if q < 0 {
		return fmt.Errorf("%s: %d must not be negative", field, q)
	}
	if q > MaxQuantity {
		return fmt.Errorf("%s: %d exceeds the bound of %d", field, q, MaxQuantity)
	}
	return nil
}

func validateReasons(reasons []Reason) error {
	if len(reasons) > MaxReasons {
		return fmt.Errorf("reasons: %d reasons exceed the bound of %d", len(reasons), MaxReasons)
	}
	for i, r := range reasons {
		field := fmt.Sprintf("reasons[%d]", i)
		switch r := r.(type) {
		case *InsufficientResource:
			if r == nil {
				return fmt.Errorf("%s: must not be nil", field)
			}
			if r.ResourceName == "" {
				return fmt.Errorf("%s.resourceName: must not be empty", field)
			}
			for _, q := range []struct {
				name string
				v    int64
			}{{"requested", r.Requested}, {"used", r.Used}, {"capacity", r.Capacity}} {
				if err := validQuantity(field+"."+q.name, q.v); err != nil {
					return err
				}
			}
		case *PredicateFailure:
			if r == nil {
				return fmt.Errorf("%s: must not be nil", field)
			}
		default:
			// A nil interface; the sealed method rules out other types.
			return fmt.Errorf("%s: must not be nil", field)
		}
	}
	return nil
}
