// Package kube converts real Kubernetes manifests into core/pod values: the
// Pods (k8s.io/api core/v1) a `nodeproof admit` run feeds the node
// subsystems, and a Node's capacity and allocatable.
//
// Decode reads a multi-document YAML or JSON stream (documents split on
// "---" lines), including the v1 List that `kubectl get pods -o yaml`
// prints, strictly, through agent/manifest, the reader of every manifest
// nodeproof takes: as with kubectl --validate=strict, a field k8s.io/api
// does not know (a misspelt `livenesProbe`), a key repeated within a
// mapping and a value of the wrong type are errors, never dropped. Each Pod
// is converted with the parts the node reads: uid, name,
// namespace ("default" when unset), phase ("Pending" when unset, as the API
// server's create strategy sets it), priority and priorityClassName, the
// kubernetes.io/config.source and kubernetes.io/config.mirror annotations,
// the deletion mark, status.qosClass, init containers (restartPolicy Always
// makes a sidecar), app containers, overhead and pod-level resources
// (spec.resources). Then the API server's defaulting runs (core/pod
// ApplyDefaults), after checks that follow its validation: no negative
// quantity, a request at most its limit, requests equal to limits for
// resources that cannot be overcommitted (hugepages, extended resources).
//
// Quantities become core units: cpu in millicores (rounded up, as the
// kubelet's MilliValue), memory, ephemeral storage and hugepages in bytes
// (rounded up), every other resource in whole units, where a fraction is an
// error. Decode bounds every quantity as written (QuantityBound: the
// tightest bound of the node subsystems' cores), before defaulting copies a
// limit into a request, so the error names the field the user wrote.
//
// Bad input gets an *Error naming the object, the document (1-based,
// counting the documents that hold something) and the field path as written
// in the manifest, list indexes included: `pod "web" (document 2):
// spec.containers[0].resources.limits.memory: 99999999999999999Ei exceeds
// the bound of 64Ti`, `pod "web" (document 2):
// spec.containers[0].livenesProbe: unknown field`. A kind other than Pod, Node or a List of them is an
// error by default, so that a misspelt kind is never dropped silently;
// Options.SkipUnknownKinds skips them instead (a Deployment in the same
// file) and lists them in Manifests.Skipped.
package kube
