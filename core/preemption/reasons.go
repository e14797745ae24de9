package preemption

import (
	"fmt"

	"github.com/nodeproof/nodeproof/core/pod"
)

// Reason is one reason the node's admission predicates turned a pod down
// (upstream lifecycle.PredicateFailureReason). It is either an
// *InsufficientResource, the only kind preemption can cure, or a
// *PredicateFailure.
type Reason interface {
	// GetReason is upstream's short text ("Insufficient cpu").
	GetReason() string
	Error() string
	// sealed keeps the two kinds above the only ones, so every caller
	// handles both.
	sealed()
}

// InsufficientResource says the pod does not fit one resource (upstream
// lifecycle.InsufficientResourceError). Quantities are in core/pod's units.
type InsufficientResource struct {
	ResourceName pod.ResourceName
	Requested    int64
	Used         int64
	Capacity     int64
}

func (*InsufficientResource) sealed() {}

// Error is upstream's message, which also becomes the rejected pod's
// status message.
func (e *InsufficientResource) Error() string {
	return fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
		e.ResourceName, e.Requested, e.Used, e.Capacity)
}

// GetReason is upstream's "Insufficient <resource>".
func (e *InsufficientResource) GetReason() string {
	return fmt.Sprintf("Insufficient %v", e.ResourceName)
}

// InsufficientAmount is how much must be freed: Requested - (Capacity - Used).
func (e *InsufficientResource) InsufficientAmount() int64 {
	return e.Requested - (e.Capacity - e.Used)
}

// PredicateFailure is any other failed predicate (upstream
// lifecycle.PredicateFailureError): node affinity, node name, host ports,
// an untolerated taint. Preemption cannot cure it.
type PredicateFailure struct {
	PredicateName string
	PredicateDesc string
}

func (*PredicateFailure) sealed() {}

// Error is upstream's "Predicate <name> failed: <desc>".
func (e *PredicateFailure) Error() string {
	return fmt.Sprintf("Predicate %s failed: %s", e.PredicateName, e.PredicateDesc)
}

// GetReason is the predicate's description.
func (e *PredicateFailure) GetReason() string { return e.PredicateDesc }
