// Package manifest is the one strict reader of nodeproof's YAML and JSON
// input: Kubernetes manifests (agent/kube reads Pods, Nodes and Lists
// through it) and the campaign plan. It reads as the API server's strict
// field validation does (kubectl --validate=strict), so that a misspelt
// field or a repeated key is an error, never a value silently dropped:
//
//   - Split cuts a stream into its documents at "---" lines and says where
//     each starts, so that an error can name the document.
//   - Document.JSON converts one document to JSON with sigs.k8s.io/yaml and
//     finds a key repeated within a mapping, which the conversion would
//     otherwise drop (the last value wins).
//   - Decode decodes JSON into a Go type with sigs.k8s.io/json, the API
//     server's decoder: field names match case-sensitively, and a field
//     the type does not know is an error.
//   - DecodeOne does all three for a file that holds one document.
//
// Every error about a field is a *FieldError whose path is written as the
// API server writes it, list indexes included:
//
//	spec.containers[0].livenesProbe: unknown field
//	spec.containers[1].image: duplicate key
//	spec.containers[0].livenessProbe.periodSeconds: must be an integer (int32), not a string
//
// The libraries name a repeated key by its line only and a value of the
// wrong type by its path without list indexes; the package computes those
// paths itself, from the converted document.
package manifest
