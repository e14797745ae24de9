package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// strictNodeFile is a node file every command that reads manifests
// accepts: a Node (document 1) and a pod with a probe (document 2).
const strictNodeFile = `apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  capacity: {cpu: "2", memory: 2Gi, pods: "10"}
  allocatable: {cpu: "2", memory: 2Gi, pods: "10"}
---
apiVersion: v1
kind: Pod
metadata: {name: web, uid: u-web}
spec:
  containers:
  - name: app
    image: nginx
    resources: {requests: {cpu: 100m}}
    livenessProbe:
      tcpSocket: {port: 8080}
      periodSeconds: 10
`

// TestManifestsReadStrictly: admit, probe and cgroups refuse a manifest
// with a misspelt field, a repeated key or a value of the wrong type, with
// exit 2 and one line naming the file, the document and its pod, the field
// path (list indexes included) and the rule. Before the fix all three
// accepted the misspelt field (dropping it) and the repeated key (the last
// one won), and named the wrong type's field without its list index.
func TestManifestsReadStrictly(t *testing.T) {
	run := func(verb, file string) (int, string, string) { return runNodeproof("", verb, "-f", file) }
	verbs := []string{"admit", "probe", "cgroups"}
	for _, verb := range verbs {
		t.Run(verb+"/the good file", func(t *testing.T) {
			code, _, stderr := run(verb, writeManifestNamed(t, "node.yaml", strictNodeFile))
			assert.Equal(t, 0, code, "stderr:\n%s", stderr)
		})
	}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"misspelt field in a list item", "    livenessProbe:", "    livenesProbe:",
			`pod "web" (document 2): spec.containers[0].livenesProbe: unknown field`},
		{"misspelt top-level field", "kind: Pod\n", "kind: Pod\nstauts: {phase: Pending}\n",
			`pod "web" (document 2): stauts: unknown field`},
		{"misspelt field in a mapping", "spec:\n  containers:", "spec:\n  nodeNme: node-1\n  containers:",
			`pod "web" (document 2): spec.nodeNme: unknown field`},
		{"duplicate key in a list item", "    image: nginx\n", "    image: nginx\n    image: busybox\n",
			`pod "web" (document 2): spec.containers[0].image: duplicate key`},
		{"duplicate top-level key", "kind: Pod\n", "kind: Pod\nkind: Pod\n",
			`pod "web" (document 2): kind: duplicate key`},
		{"wrong type in a list item", "periodSeconds: 10", `periodSeconds: "ten"`,
			`pod "web" (document 2): spec.containers[0].livenessProbe.periodSeconds: must be an integer (int32), not a string`},
	} {
		bad := strings.Replace(strictNodeFile, tc.old, tc.new, 1)
		require.NotEqual(t, strictNodeFile, bad, "%s: the defect is not in the file", tc.name)
		for _, verb := range verbs {
			t.Run(verb+"/"+tc.name, func(t *testing.T) {
				file := writeManifestNamed(t, "pods.yaml", bad)
				code, stdout, stderr := run(verb, file)
				assert.Equal(t, cli.StatusUsage, code, "exit status")
				assert.Empty(t, stdout, "stdout")
				assert.Equal(t, fmt.Sprintf("nodeproof %s: %s: %s\n", verb, file, tc.want), stderr)
			})
		}
	}
}

// writeManifestNamed writes content to a file of that name in a directory
// of the test's own.
func writeManifestNamed(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}
