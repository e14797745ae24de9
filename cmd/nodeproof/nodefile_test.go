package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/agent/kube"
)

var podComment = regexp.MustCompile(`  # pod (\S+), `)

// TestNodeFileOneReading: `cgroups` and `admit` read a node file the same
// way. On admit-node.yaml, whose header works the admissions out by hand,
// the cgroups are those of the pods the node runs once admit's decisions
// are made: the Running pods but the two preempted, plus the three admitted
// arrivals; kubepods is sized from the Node's allocatable (cpu 3800m:
// capacity 4 less 200m reserved; memory 8Gi less the 924Mi that allocatable
// leaves out beyond the 100Mi hard eviction threshold). Before the fix,
// cgroups counted every arrival as running and exited 2 ("the pods request
// 9300m cpu in all, more than the node's allocatable 4").
func TestNodeFileOneReading(t *testing.T) {
	example := filepath.Join(examplesDir, "admit-node.yaml")
	code, stdout, stderr := runCgroupsCmd("-f", example)
	require.Equal(t, 0, code, "stderr:\n%s", stderr)
	var pods []string
	for _, m := range podComment.FindAllStringSubmatch(stdout, -1) {
		pods = append(pods, m[1])
	}
	sort.Strings(pods)
	assert.Equal(t, []string{
		"default/batch-1", "default/db", "default/debug", "default/late", "default/scratch-1", "default/small", "default/web-1",
		"kube-system/kube-vip-worker-1", "kube-system/node-agent",
	}, pods)
	_, files := parseTree(t, stdout)
	assert.Equal(t, "3891", files["kubepods"]["cpu.shares"], "MilliCPUToShares(3800)")
	assert.Equal(t, "7621050368", files["kubepods"]["memory.limit_in_bytes"], "8Gi - 924Mi")
	for _, note := range []string{
		"note: default/analytics arrives and is rejected, so it has no cgroup: OutOfcpu",
		"note: kube-system/storage-csi arrives and is rejected, so it has no cgroup: UnexpectedAdmissionError",
		"note: default/scratch-2 is preempted",
		"note: default/web-2 is preempted",
	} {
		assert.Contains(t, stderr, note)
	}
}

// TestNodeFileSameRules: both commands accept and refuse the same files,
// with the same words: other kinds are skipped with the same note (admit
// refused them, naming an internal option), and the stand-in uid of a pod
// without one is the same (a pod whose uid is another's stand-in collides
// in both).
func TestNodeFileSameRules(t *testing.T) {
	node, err := os.ReadFile(filepath.Join(examplesDir, "seed003-node.yaml"))
	require.NoError(t, err)
	withDeployment := string(node) + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
	note := `note: skipped document 8: apps/v1 Deployment "web" (a node file holds a Node and Pods; other kinds are left out)`

	code, _, stderr := runCgroupsCmd("-f", writeManifest(t, withDeployment))
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "nodeproof cgroups: "+note)
	code, _, stderr = runAdmitCmd(withDeployment, "-f", "-", "--json")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "nodeproof admit: "+note)

	collide := strings.SplitN(string(node), "---", 2)[0] + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n" +
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: q, uid: " + kube.StandInUID("default", "p") + "}\nspec: {containers: [{name: c}]}\n"
	want := `pod "q" (document 3): metadata.uid: "` + kube.StandInUID("default", "p") + `" is also the uid of the pod in document 2` + "\n"
	file := writeManifest(t, collide)
	code, _, stderr = runCgroupsCmd("-f", file)
	assert.Equal(t, 2, code)
	assert.Equal(t, "nodeproof cgroups: "+file+": "+want, stderr)
	code, _, stderr = runAdmitCmd("", "-f", file)
	assert.Equal(t, 2, code)
	assert.Equal(t, "nodeproof admit: "+file+": "+want, stderr)
}
