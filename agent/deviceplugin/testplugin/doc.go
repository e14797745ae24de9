// Package testplugin is a real device plugin, the plugin side of the
// v1beta1 device plugin API, for tests and for anyone who wants to try a
// kubelet (or nodeproof's agent) against a plugin whose behaviour they
// control.
//
// A Plugin serves the DevicePlugin service on its own Unix socket, registers
// with kubelet.sock, and registers again whenever kubelet.sock is created
// anew (a kubelet restart), re-creating its own socket first if the kubelet
// removed it. Its devices, health and options are configurable, Update pushes
// a new snapshot through every open ListAndWatch stream, and SetFault makes
// any RPC fail, stall, hang, crash the server or answer malformed. Config's
// other knobs break the registration: a wrong Version, a RegisteredEndpoint
// other than the socket served, RegisteredOptions other than the ones
// GetDevicePluginOptions answers, NoReregister. Other knobs turn on
// behaviours that are legal but easy to mistake for faults:
// DeviceFailure turns a device Unhealthy in the middle of a run,
// ReregisterEndpoint moves the plugin to a new socket name when a kubelet
// restart removed its socket, IDsPerHostDevice lists one host device under
// several IDs, whose Allocate answers repeat its device spec and mount.
// Every call
// it receives is recorded, so a test can assert on what the kubelet asked.
//
// Nothing in the package sleeps to synchronise: faults wait on the RPC's own
// context, and the directory is watched with inotify (on other systems, a
// ticker inside the watcher's goroutine).
package testplugin
