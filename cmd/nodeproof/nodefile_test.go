package main

import (
	"encoding/json"
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

// TestContainerCgroupsNamedByRuntimeID: a container's cgroup is named
// after the runtime's ID from status.containerStatuses (sidecars: from
// status.initContainerStatuses), without its containerd:// scheme, as
// containerd names it (the ID under cgroupfs, cri-containerd-<id>.scope
// under systemd); a container whose status has no ID keeps its name, and
// the output says so. Before the fix every container cgroup was named after
// the container.
func TestContainerCgroupsNamedByRuntimeID(t *testing.T) {
	const appID = "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa99887766554433221100"
	const sideID = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	file := writeManifest(t, `apiVersion: v1
kind: Pod
metadata: {name: web, uid: 0b1c2d3e-0000-4000-8000-000000000001}
spec:
  initContainers: [{name: proxy, restartPolicy: Always}]
  containers: [{name: app}, {name: log}]
status:
  phase: Running
  initContainerStatuses: [{name: proxy, containerID: "containerd://`+sideID+`"}]
  containerStatuses:
  - {name: app, containerID: "containerd://`+appID+`"}
  - {name: log}
`)
	const pod = "kubepods/besteffort/pod0b1c2d3e-0000-4000-8000-000000000001"
	node := []string{"--node-cpu", "2", "--node-memory", "4Gi"}
	code, stdout, stderr := runCgroupsCmd(append([]string{"-f", file}, node...)...)
	require.Equal(t, 0, code, stderr)
	paths, _ := parseTree(t, stdout)
	assert.Equal(t, []string{"kubepods", "kubepods/besteffort", pod, pod + "/" + sideID, pod + "/" + appID, pod + "/log", "kubepods/burstable"}, paths)
	assert.Contains(t, stdout, "    "+appID+"/  # container app\n")
	assert.Contains(t, stdout, "    log/  # no containerID in status; named after the container\n")

	code, stdout, stderr = runCgroupsCmd(append([]string{"-f", file, "--json", "--driver", "systemd"}, node...)...)
	require.Equal(t, 0, code, stderr)
	var doc []struct {
		Path      string
		Container *struct{ Name, ID string }
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	var containers []string
	for _, cg := range doc {
		if cg.Container != nil {
			_, leaf, _ := cutLast(cg.Path)
			containers = append(containers, cg.Container.Name+" "+cg.Container.ID+" "+leaf)
		}
	}
	assert.Equal(t, []string{
		"proxy " + sideID + " cri-containerd-" + sideID + ".scope",
		"app " + appID + " cri-containerd-" + appID + ".scope",
		"log  cri-containerd-log.scope",
	}, containers)

	bad := strings.Replace(mustRead(t, file), "containerd://"+appID, appID, 1)
	code, _, stderr = runCgroupsCmd(append([]string{"-f", writeManifest(t, bad)}, node...)...)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `pod "web" (document 1): status.containerStatuses[0].containerID: "`+appID+`" must be <runtime>://<id>`)
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
