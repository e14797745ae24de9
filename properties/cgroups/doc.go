// Package cgroups is the rapid suite of core/cgroups, the kubelet's pod and
// QoS cgroup configuration: a node (a kubelet config) and the pods admitted
// to it change one step at a time, and after every step the suite builds the
// cgroup hierarchy on cgroup v1 and v2 and holds it against the reference
// model in models/cgroups, the seed's worked example and the invariants. The
// translation into the model and the admission rule it shares with the fuzz
// target live in properties/cgroupscheck. The suite registers itself with
// properties as "cgroups".
package cgroups
