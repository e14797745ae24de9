package devicemanager

import (
	"errors"
	"fmt"
)

// Kind classifies every error the core returns, so callers and properties can
// check that an error is one of the documented kinds.
type Kind int

// Error kinds. The message texts are upstream's, except where
// docs/deviations.md says otherwise.
const (
	// KindUnsupportedVersion: the registration's API version is not v1beta1.
	KindUnsupportedVersion Kind = iota + 1
	// KindInvalidResourceName: the registration's resource name is not an extended resource name.
	KindInvalidResourceName
	// KindInvalidDeviceList: a plugin's ListAndWatch snapshot is malformed (empty or duplicate ID, bad NUMA node).
	KindInvalidDeviceList
	// KindRequestChanged: a container asks for a different number of devices than it already holds.
	KindRequestChanged
	// KindUnregistered: no plugin ever registered the resource.
	KindUnregistered
	// KindNoHealthy: the resource has no healthy device.
	KindNoHealthy
	// KindPreviouslyAllocatedUnhealthy: a device the container already holds is no longer healthy.
	KindPreviouslyAllocatedUnhealthy
	// KindUnavailable: fewer free healthy devices than requested.
	KindUnavailable
	// KindPreferredAllocationFailed: the plugin's GetPreferredAllocation RPC failed.
	KindPreferredAllocationFailed
	// KindUnknownPlugin: device state exists for a resource without an endpoint.
	KindUnknownPlugin
	// KindEndpointStopped: the resource's plugin has disconnected (or not reconnected after a restart).
	KindEndpointStopped
	// KindNoContainerResponses: the plugin's Allocate answer holds no container response.
	KindNoContainerResponses
	// KindAllocateFailed: the plugin's Allocate RPC failed; the plugin's error is wrapped.
	KindAllocateFailed
	// KindEndpointNotFound: a plugin RPC (GetPreferredAllocation, PreStartContainer) for a resource whose endpoint is gone.
	KindEndpointNotFound
	// KindPreStartNoDevices: PreStartContainer for a container with no devices recorded.
	KindPreStartNoDevices
	// KindPreStartFailed: the plugin's PreStartContainer RPC failed; the plugin's error is wrapped.
	KindPreStartFailed
	// KindBoundExceeded: a collection would grow past its configured bound.
	KindBoundExceeded
	// KindInvalidInput: a caller passed something malformed (unknown container, stale plan, bad checkpoint entry).
	KindInvalidInput
)

var kindNames = map[Kind]string{
	KindUnsupportedVersion:           "UnsupportedVersion",
	KindInvalidResourceName:          "InvalidResourceName",
	KindInvalidDeviceList:            "InvalidDeviceList",
	KindRequestChanged:               "RequestChanged",
	KindUnregistered:                 "Unregistered",
	KindNoHealthy:                    "NoHealthy",
	KindPreviouslyAllocatedUnhealthy: "PreviouslyAllocatedUnhealthy",
	KindUnavailable:                  "Unavailable",
	KindPreferredAllocationFailed:    "PreferredAllocationFailed",
	KindUnknownPlugin:                "UnknownPlugin",
	KindEndpointStopped:              "EndpointStopped",
	KindNoContainerResponses:         "NoContainerResponses",
	KindAllocateFailed:               "AllocateFailed",
	KindEndpointNotFound:             "EndpointNotFound",
	KindPreStartNoDevices:            "PreStartNoDevices",
	KindPreStartFailed:               "PreStartFailed",
	KindBoundExceeded:                "BoundExceeded",
	KindInvalidInput:                 "InvalidInput",
}

func (k Kind) String() string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Kinds lists every documented kind, in declaration order.
func Kinds() []Kind {
	kinds := make([]Kind, 0, len(kindNames))
	for k := KindUnsupportedVersion; k <= KindInvalidInput; k++ {
		kinds = append(kinds, k)
	}
	return kinds
}

// Error is the only error type the core returns.
type Error struct {
	Kind Kind
	msg  string
	// cause is the plugin's own error for KindAllocateFailed and
	// KindPreferredAllocationFailed.
	cause error
}

func (e *Error) Error() string { return e.msg }

// Unwrap returns the plugin's error, if any.
func (e *Error) Unwrap() error { return e.cause }

func newError(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, msg: fmt.Sprintf(format, args...)}
}

// KindOf returns the kind of a core error, and false for any other error.
func KindOf(err error) (Kind, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind, true
	}
	return 0, false
}

// AdmissionFailureReason is the pod status reason upstream's topology admit
// handler sets when device allocation fails.
const AdmissionFailureReason = "UnexpectedAdmissionError"

// AdmissionFailureMessage is the pod status message for a failed allocation.
func AdmissionFailureMessage(err error) string {
	return fmt.Sprintf("Allocate failed due to %v, which is unexpected", err)
}

// PreStartFailed wraps the plugin's PreStartContainer error in upstream's words.
func PreStartFailed(cause error) error {
	return &Error{Kind: KindPreStartFailed, msg: fmt.Sprintf("device plugin PreStartContainer rpc failed with err: %v", cause), cause: cause}
}
