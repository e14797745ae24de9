//go:build tools

// Package build is the module the kubelet binary is built from (the
// realkubelet package's Binary, `make kubelet`): it requires
// k8s.io/kubernetes at the release nodeproof models, with the staging
// modules pinned to their published tags, so `go build
// k8s.io/kubernetes/cmd/kubelet` here builds that release from the module
// proxy. It is a module of its own so that the root module's dependencies
// stay small.
package build

import _ "k8s.io/kubernetes/cmd/kubelet"
