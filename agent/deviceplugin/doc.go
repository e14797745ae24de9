// Package deviceplugin is the kubelet side of the device plugin API
// (k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1) over real Unix sockets: the
// imperative shell around core/devicemanager.
//
// An Agent serves the Registration service on <dir>/kubelet.sock, dials each
// registering plugin's socket, feeds its ListAndWatch snapshots to the core,
// makes the GetPreferredAllocation, Allocate and PreStartContainer RPCs the
// core plans, and writes the kubelet_internal_checkpoint file whenever the
// core says upstream would have.
//
// The core is deterministic and not safe for concurrent use, so every call
// into it happens under one mutex; the mutex is never held across an RPC, so a
// slow or hung plugin delays only the admission that talks to it. File I/O for
// the checkpoint does happen under the mutex, so that a later state is never
// overwritten by an earlier one; upstream writes outside its lock and can be
// (docs/deviations.md D15).
//
// Where the agent differs from the upstream kubelet (endpoint path rules, an
// Allocate deadline, Allocate answers with extra container responses, a
// corrupt checkpoint kept aside) docs/deviations.md says so.
package deviceplugin
