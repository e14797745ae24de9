// Package integration runs nodeproof's agents against real components: the
// device plugin agent and the test plugin talk gRPC over Unix sockets in a
// fresh temporary directory, with an injected clock wherever time matters.
//
// The package holds tests only. Every wait in it is bounded and waits for an
// event or a condition, never for a fixed time, and every test checks that
// it leaves no goroutine behind.
package integration
