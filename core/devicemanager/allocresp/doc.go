// Package allocresp is the device plugin API's ContainerAllocateResponse as a
// plain Go value, with a protobuf wire-format codec written against the
// standard library only.
//
// The kubelet stores each container's allocate response in its device manager
// checkpoint as protobuf bytes, and the checkpoint's checksum covers those
// bytes. The deterministic core must therefore produce and read the exact
// bytes without importing the generated protobuf code (core/ is standard
// library only). Marshal writes what google.golang.org/protobuf writes with
// MarshalOptions{Deterministic: true}; Unmarshal accepts and rejects what
// proto.Unmarshal accepts and rejects, within explicit size bounds. The
// fuzz package cross-checks both against the real generated type.
package allocresp
