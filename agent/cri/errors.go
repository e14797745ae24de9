package cri

import "fmt"

// ResponseError is an answer of the runtime that breaks the CRI contract or
// this package's bounds. It names the RPC, the field (with its index in a
// list) and the rule.
type ResponseError struct {
	RPC   string // e.g. "ListImages"
	Field string // e.g. "images[3].id"
	Value string // the offending value; empty when there is none (a nil message)
	Rule  string // e.g. "must not be empty"
}

func (e *ResponseError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("cri: %s: %s: %s", e.RPC, e.Field, e.Rule)
	}
	return fmt.Sprintf("cri: %s: %s %q: %s", e.RPC, e.Field, e.Value, e.Rule)
}

// InputError is bad input from the caller, such as an empty image ID or a
// relative socket path; no RPC was made.
type InputError struct {
	Field string // e.g. "Options.Socket"
	Value string
	Rule  string
}

func (e *InputError) Error() string {
	return fmt.Sprintf("cri: %s %q: %s", e.Field, e.Value, e.Rule)
}

// RPCError is a failed call: the transport, the deadline or the runtime's
// own error status. Unwrap gives the gRPC error, so status.Code(err) tells
// codes.NotFound or codes.DeadlineExceeded.
type RPCError struct {
	RPC string
	Err error
}

func (e *RPCError) Error() string { return fmt.Sprintf("cri: %s: %v", e.RPC, e.Err) }

func (e *RPCError) Unwrap() error { return e.Err }
