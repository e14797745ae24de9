package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/agent/kube"
)

// TestNodeFileSameRules: both commands accept and refuse the same files,
// with the same words: other kinds are skipped with the same note (admit
// refused them, naming an internal option), and the stand-in uid of a pod
// without one is the same (a pod whose uid is another's stand-in collides
// in both).
func TestNodeFileSameRules(t *testing.T) {
	node, err := os.ReadFile(filepath.Join("../../docs/examples", "seed003-node.yaml"))
	require.NoError(t, err)
	withDeployment := string(node) + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
	note := `note: skipped document 8: apps/v1 Deployment "web" (a node file holds a Node and Pods; other kinds are left out)`

	code, _, stderr := runNodeproof("", "cgroups", "-f", writeManifestNamed(t, "node.yaml", withDeployment))
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "nodeproof cgroups: "+note)
	code, _, stderr = runNodeproof(withDeployment, "admit", "-f", "-", "--json")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "nodeproof admit: "+note)

	collide := strings.SplitN(string(node), "---", 2)[0] + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n" +
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: q, uid: " + kube.StandInUID("default", "p") + "}\nspec: {containers: [{name: c}]}\n"
	want := `pod "q" (document 3): metadata.uid: "` + kube.StandInUID("default", "p") + `" is also the uid of the pod in document 2` + "\n"
	file := writeManifestNamed(t, "node.yaml", collide)
	code, _, stderr = runNodeproof("", "cgroups", "-f", file)
	assert.Equal(t, 2, code)
	assert.Equal(t, "nodeproof cgroups: "+file+": "+want, stderr)
	code, _, stderr = runNodeproof("", "admit", "-f", file)
	assert.Equal(t, 2, code)
	assert.Equal(t, "nodeproof admit: "+file+": "+want, stderr)
}

// TestHugeLimitNamedAsWritten: a quantity beyond the bound is reported at
// the field the user wrote, with the value as written and the bound in the
// field's unit, by both commands that read a node file. Before the fix both
// said "pods[0].containers[0].requests[memory]: 9223372036854775807
// exceeds the bound of 70368744177664": a request the user never wrote, an
// internal path, a clamped value and a bound in bytes.
func TestHugeLimitNamedAsWritten(t *testing.T) {
	file := writeManifestNamed(t, "node.yaml", `apiVersion: v1
kind: Node
metadata: {name: node-1}
status: {capacity: {cpu: 4, memory: 8Gi, pods: 110}}
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: app
    resources: {limits: {memory: 99999999999999999Ei}}
`)
	want := file + `: pod "web" (document 2): spec.containers[0].resources.limits.memory: 99999999999999999Ei exceeds the bound of 64Ti` + "\n"
	code, stdout, stderr := runNodeproof("", "cgroups", "-f", file)
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "nodeproof cgroups: "+want, stderr)
	code, stdout, stderr = runNodeproof("", "admit", "-f", file)
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "nodeproof admit: "+want, stderr)
}
