package cgroups

import (
	"bytes"
	"crypto/md5"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/core/cgroups"
)

// seedExample is the manifest of seed 004's three pods, shared with the
// README and the integration test.
var seedExample = filepath.Join("..", "..", "docs", "examples", "seed004-pods.yaml")

// seedArgs is the command the example's comment gives.
var seedArgs = []string{"-f", seedExample, "--node-cpu", "3", "--node-memory", "8Gi", "--qos-reserved", "memory=100%"}

func runCgroupsCmd(args ...string) (code int, stdout, stderr string) {
	return runCgroupsStdin("", args...)
}

// update rewrites the golden file under testdata from what the code
// produces now, as -update does in every package of the module that keeps
// golden files. Look at the diff before committing it.
var update = flag.Bool("update", false, "rewrite the golden file under testdata/ from the current output")

// runCgroupsStdin runs `nodeproof cgroups ARGS` as main does, reading
// stdin, and returns the exit status and what was printed.
func runCgroupsStdin(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = cli.Execute(cli.NewRoot(NewCommand()), append([]string{"cgroups"}, args...), strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// parseTree reads the text output back into path → file → value, with the
// paths the indentation implies, so tests can look numbers up; see
// parseTreeInOrder for the files in the order they are written.
func parseTree(t *testing.T, out string) (paths []string, files map[string]map[string]string) {
	t.Helper()
	paths, ordered := parseTreeInOrder(t, out)
	files = map[string]map[string]string{}
	for path, writes := range ordered {
		files[path] = map[string]string{}
		for _, w := range writes {
			files[path][w.File] = w.Value
		}
	}
	return paths, files
}

// fileWrite is one element of a cgroup's "files" in --json.
type fileWrite struct {
	File  string `json:"file"`
	Value string `json:"value"`
}

// parseTreeInOrder reads the text output back into path → writes in the
// order the tree lists them, with the paths the indentation implies, so
// tests can compare the tree with --json. It fails on a line that is
// neither a cgroup nor a file, or a file outside a cgroup.
func parseTreeInOrder(t *testing.T, out string) (paths []string, files map[string][]fileWrite) {
	t.Helper()
	files = map[string][]fileWrite{}
	var stack []string // the path components down to the current cgroup
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		body := strings.TrimLeft(line, " ")
		indent := len(line) - len(body)
		if indent%2 != 0 {
			t.Fatalf("line %d %q: odd indentation", i+1, line)
		}
		depth := indent / 2
		if name, value, ok := strings.Cut(body, " = "); ok {
			if depth != len(stack) || len(stack) == 0 {
				t.Fatalf("line %d %q: a file at depth %d, not right under a cgroup (depth %d)", i+1, line, depth, len(stack)-1)
			}
			path := strings.Join(stack, "/")
			files[path] = append(files[path], fileWrite{File: name, Value: value})
			continue
		}
		name, _, _ := strings.Cut(body, "  # ")
		name, ok := strings.CutSuffix(name, "/")
		if !ok || depth > len(stack) {
			t.Fatalf("line %d %q: neither a file nor a cgroup under the one before", i+1, line)
		}
		stack = append(stack[:depth], name)
		path := strings.Join(stack, "/")
		paths = append(paths, path)
		files[path] = []fileWrite{}
	}
	return paths, files
}

// TestCgroupsSeedExample runs the command the example's comment gives and
// finds every number seed 004 states, then compares the whole output with
// the golden file (go test -run TestCgroupsSeedExample -update
// rewrites it).
func TestCgroupsSeedExample(t *testing.T) {
	code, stdout, stderr := runCgroupsCmd(seedArgs...)
	require.Equal(t, 0, code, "exit status; stderr %q", stderr)
	require.Empty(t, stderr)
	_, files := parseTree(t, stdout)
	const (
		burstablePod  = "kubepods/burstable/pod5f0c1d2e-0000-4000-8000-000000000001"
		guaranteedPod = "kubepods/pod5f0c1d2e-0000-4000-8000-000000000002"
		bestEffortPod = "kubepods/besteffort/pod5f0c1d2e-0000-4000-8000-000000000003"
	)
	for _, c := range []struct{ path, file, want string }{
		{"kubepods", "cpu.shares", "3072"},
		{"kubepods/burstable", "cpu.shares", "2048"},
		{"kubepods/besteffort", "cpu.shares", "2"},
		{"kubepods/burstable", "memory.limit_in_bytes", "7516192768"},  // 7Gi: 8Gi less the Guaranteed 1Gi
		{"kubepods/besteffort", "memory.limit_in_bytes", "5368709120"}, // 5Gi: 7Gi less the Burstable 2Gi
		{guaranteedPod, "cpu.shares", "1024"},
		{guaranteedPod + "/container3", "cpu.shares", "1024"},
		{burstablePod, "cpu.shares", "2048"},
		{burstablePod + "/container1", "cpu.shares", "1024"},
		{burstablePod + "/container2", "cpu.shares", "1024"},
		{bestEffortPod, "cpu.shares", "2"},
	} {
		if assert.Contains(t, files[c.path], c.file, "the files of %s", c.path) {
			assert.Equal(t, c.want, files[c.path][c.file], "%s %s, which the seed states", c.path, c.file)
		}
	}
	assert.Contains(t, stdout, guaranteedPod[len("kubepods/"):]+"/  # pod default/pod-guaranteed-1, Guaranteed\n", "the Guaranteed pod's line names the pod")

	golden := filepath.Join("testdata", "seed004.txt")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
		require.NoError(t, os.WriteFile(golden, []byte(stdout), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test -run TestCgroupsSeedExample -update")
	assert.Equal(t, string(want), stdout, "output differs from %s (run with -update after checking it)", golden)
}

// TestCgroupsJSON checks --json's shape, [{"path", "files": [{"file",
// "value"}]}] with paths relative to the cgroup root, parents first, and
// each cgroup's files in the order they are written (the order matters: a
// cgroup v1 cfs_period_us goes before its quota), and that it holds exactly
// what the tree shows, for both drivers and versions. On v2 the kubelet's
// cgroups get the linear weight and containers the runtime's.
func TestCgroupsJSON(t *testing.T) {
	for _, variant := range [][]string{
		{"--cgroup-version", "1", "--driver", "cgroupfs"},
		{"--cgroup-version", "2", "--driver", "systemd"},
	} {
		args := append(append([]string{}, seedArgs...), variant...)
		code, stdout, stderr := runCgroupsCmd(append(args, "--json")...)
		require.Equal(t, 0, code, "%v: stderr %q", variant, stderr)
		require.Empty(t, stderr, "%v", variant)
		var doc []cgroupJSONForTest
		dec := json.NewDecoder(strings.NewReader(stdout))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&doc), "%v: not [{path, files: [{file, value}]}]:\n%s", variant, stdout)

		seen := map[string]bool{}
		for _, cg := range doc {
			p := cg.Path
			assert.False(t, p == "" || strings.HasPrefix(p, "/"), "%v: path %q is not relative to the cgroup root", variant, p)
			if parent, _, nested := cutLast(p); nested {
				assert.True(t, seen[parent], "%v: %s comes before its parent %s", variant, p, parent)
			}
			seen[p] = true
		}

		_, treeOut, _ := runCgroupsCmd(args...)
		paths, tree := parseTreeInOrder(t, treeOut)
		var jsonPaths []string
		for _, cg := range doc {
			jsonPaths = append(jsonPaths, cg.Path)
			if strings.Contains(cg.Path, "container") {
				// The seed's pods have no status: named after the container.
				require.NotNil(t, cg.Container, "%v: %s has no container", variant, cg.Path)
				assert.Equal(t, "", cg.Container.ID, "%v: %s", variant, cg.Path)
				assert.Contains(t, cg.Path, cg.Container.Name, "%v", variant)
			} else {
				assert.Nil(t, cg.Container, "%v: %s is not a container's", variant, cg.Path)
			}
			assert.Equal(t, tree[cg.Path], cg.Files, "%v: the files of %s, in order", variant, cg.Path)
		}
		assert.Equal(t, paths, jsonPaths, "%v: cgroups, in order", variant)

		byPath := map[string][]fileWrite{}
		for _, cg := range doc {
			byPath[cg.Path] = cg.Files
		}
		if variant[1] == "1" {
			// The quota after its period, as core's Values writes them.
			assert.Equal(t, []fileWrite{
				{"cpu.shares", "1024"}, {"cpu.cfs_period_us", "100000"}, {"cpu.cfs_quota_us", "200000"}, {"memory.limit_in_bytes", "2147483648"},
			}, byPath["kubepods/burstable/pod5f0c1d2e-0000-4000-8000-000000000001/container2"])
			continue
		}
		value := func(path, file string) string {
			for _, w := range byPath[path] {
				if w.File == file {
					return w.Value
				}
			}
			return ""
		}
		for path, want := range map[string]uint64{
			"kubepods.slice": cgroups.CPUWeightLinear(3072),
			"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod5f0c1d2e_0000_4000_8000_000000000001.slice":                                 cgroups.CPUWeightLinear(2048),
			"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod5f0c1d2e_0000_4000_8000_000000000001.slice/cri-containerd-container1.scope": cgroups.CPUWeightQuadratic(1024),
		} {
			assert.Equal(t, strconv.FormatUint(want, 10), value(path, "cpu.weight"), "v2 %s cpu.weight", path)
		}
		assert.Equal(t, "7516192768", value("kubepods.slice/kubepods-burstable.slice", "memory.max"), "v2 burstable memory.max")
	}
}

// cgroupJSONForTest is one element of --json as a reader decodes it.
type cgroupJSONForTest struct {
	Path      string `json:"path"`
	Container *struct {
		Name string `json:"name"`
		ID   string `json:"id"`
	} `json:"container"`
	Files []fileWrite `json:"files"`
}

// cutLast splits "a/b/c" into "a/b" and "c".
func cutLast(p string) (parent, name string, nested bool) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p, false
	}
	return p[:i], p[i+1:], true
}

// writeManifest writes a manifest to a file of the test's own.
func writeManifest(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pods.yaml")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

const goodPod = `apiVersion: v1
kind: Pod
metadata: {name: web, uid: 0b1c2d3e-0000-4000-8000-000000000001}
spec:
  containers:
  - name: app
    resources: {requests: {cpu: 500m, memory: 1Gi}}
`

// TestCgroupsBadManifest: a manifest the API server would refuse gets an
// error naming the file, the document and the field, exit 2 and no output;
// so do pods no kubelet would hold together.
func TestCgroupsBadManifest(t *testing.T) {
	node := []string{"--node-cpu", "2", "--node-memory", "4Gi"}
	for _, c := range []struct {
		name, manifest, stderr string
	}{
		{"quantity", goodPod + "---\n" + strings.Replace(goodPod, "cpu: 500m", "cpu: lots", 1),
			`pod "web" (document 2): spec.containers[0].resources.requests.cpu: "lots"`},
		{"request above limit", strings.Replace(goodPod, "requests: {cpu: 500m, memory: 1Gi}", "requests: {cpu: 500m}, limits: {cpu: 100m}", 1),
			`pod "web" (document 1): spec.containers[0].resources.requests.cpu: must be less than or equal to cpu limit`},
		{"no containers", "apiVersion: v1\nkind: Pod\nmetadata: {name: empty}\nspec: {containers: []}\n",
			`pod "empty" (document 1): spec.containers: must have at least one container`},
		{"yaml", goodPod + "---\nkind: Pod\n  bad: [indent\n", "document 2"},
		{"duplicate uid", goodPod + "---\n" + strings.Replace(goodPod, "name: web", "name: api", 1),
			`pod "api" (document 2): metadata.uid: "0b1c2d3e-0000-4000-8000-000000000001" is also the uid of the pod in document 1`},
		{"running pods overcommit the node", goodPod + "status: {phase: Running}\n---\n" + strings.NewReplacer("name: web", "name: big", "-000000000001", "-000000000002", "memory: 1Gi", "memory: 3Gi").Replace(goodPod) + "status: {phase: Running}\n",
			`pod "big" (document 2): status.phase: Running, but the node could not have admitted it after the running pods before it in the file: Node didn't have enough resource: memory`},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := writeManifest(t, c.manifest)
			code, stdout, stderr := runCgroupsCmd(append([]string{"-f", file}, node...)...)
			assert.Equal(t, 2, code, "exit status; stderr %q", stderr)
			assert.Contains(t, stderr, c.stderr)
			assert.Contains(t, stderr, file+": ", "the file name")
			assert.Empty(t, stdout, "stdout")
		})
	}
}

// TestCgroupsBadFlags: every bad flag is named with its rule, exit 2,
// nothing on stdout; -h prints the usage and exits 0.
func TestCgroupsBadFlags(t *testing.T) {
	f := []string{"-f", seedExample}
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{nil, 2, "-f FILE is required"},
		{[]string{"--node-cpu", "3"}, 2, "-f FILE is required"},
		{append(f, "--node-cpu", "abc"), 2, `--node-cpu "abc": must be a quantity of CPUs`},
		{append(f, "--node-cpu", "0"), 2, `--node-cpu "0": must be more than 0`},
		{append(f, "--node-cpu", "5000000"), 2, `--node-cpu "5000000": must be more than 0 and at most`},
		{append(f, "--node-memory", "-1Gi"), 2, `--node-memory "-1Gi": must be more than 0`},
		{append(f, "--node-memory", "8GB"), 2, `--node-memory "8GB": must be a quantity of bytes such as 8Gi`},
		{append(f, "--qos-reserved", "cpu=50%"), 2, `--qos-reserved "cpu=50%": cannot reserve "cpu" resource`},
		{append(f, "--qos-reserved", "memory=101%"), 2, `--qos-reserved "memory=101%": failed to parse percentage "101%" for "memory" resource: percentage must be between 0 and 100`},
		{append(f, "--qos-reserved", "memory=50"), 2, `percentage expected, got '50'`},
		{append(f, "--qos-reserved", "memory"), 2, `--qos-reserved "memory": "memory" must be resource=percentage`},
		{append(f, "--cgroup-version", "v2"), 2, `--cgroup-version "v2": must be 1 or 2`},
		{append(f, "--driver", "docker"), 2, `--driver "docker": must be cgroupfs or systemd`},
		{append(f, "other.yaml"), 2, `unexpected argument "other.yaml"`},
		{append(f, "--yaml"), 2, "unknown flag: --yaml (see 'nodeproof cgroups --help')"},
		{append(f, "-node-cpu", "3"), 2, "unknown shorthand flag: 'n' in -node-cpu"},
		{[]string{"-f", filepath.Join(t.TempDir(), "missing.yaml")}, 2, "missing.yaml: no such file"},
	} {
		code, stdout, stderr := runCgroupsCmd(c.args...)
		assert.Equal(t, c.code, code, "%q: exit status; stderr %q", c.args, stderr)
		assert.Contains(t, stderr, c.stderr, "%q", c.args)
		assert.Empty(t, stdout, "%q: stdout", c.args)
	}
	code, stdout, stderr := runCgroupsCmd("-h")
	assert.Equal(t, 0, code, "-h: exit status")
	assert.Empty(t, stderr, "-h")
	assert.Contains(t, stdout, "Usage:\n  nodeproof cgroups -f FILE", "-h")
}

// TestCgroupsNodeCapacity: a flag wins, then a Node manifest's
// status.capacity (with its hugepages and pods), then this host, which the
// output and stderr say.
func TestCgroupsNodeCapacity(t *testing.T) {
	const node = `apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  capacity: {cpu: "4", memory: 16Gi, pods: "1", hugepages-2Mi: 1Gi}
---
`
	file := writeManifest(t, node+goodPod)
	code, stdout, stderr := runCgroupsCmd("-f", file)
	require.Equal(t, 0, code, "from the Node: exit status; stderr %q", stderr)
	require.Empty(t, stderr, "from the Node")
	_, files := parseTree(t, stdout)
	assert.Equal(t, map[string]string{"cpu.shares": "4096", "memory.limit_in_bytes": "17179869184", "hugetlb.2MB.limit_in_bytes": "4611686018427387904"},
		filesNamed(files["kubepods"], "cpu.shares", "memory.limit_in_bytes", "hugetlb.2MB.limit_in_bytes"),
		"kubepods from Node node-1: 4 CPUs, 16Gi and an unbounded 2MB hugetlb limit")
	header, _, _ := strings.Cut(stdout, "\n")
	assert.Equal(t, "# cgroup v1, driver cgroupfs; node cpu 4 (Node node-1), memory 16Gi (Node node-1)", header, "the header names the Node")

	_, stdout, _ = runCgroupsCmd("-f", file, "--node-cpu", "1500m")
	_, files = parseTree(t, stdout)
	assert.Equal(t, map[string]string{"cpu.shares": "1536", "memory.limit_in_bytes": "17179869184"},
		filesNamed(files["kubepods"], "cpu.shares", "memory.limit_in_bytes"),
		"--node-cpu with a Node: kubepods gets the flag's cpu and the Node's memory")

	// The Node's pods capacity is the kubelet's maxPods.
	two := writeManifest(t, node+goodPod+"---\n"+strings.NewReplacer("name: web", "name: api", "-000000000001", "-000000000002").Replace(goodPod))
	code, stdout, stderr = runCgroupsCmd("-f", two)
	assert.Equal(t, 0, code)
	assert.Contains(t, stderr, "note: default/api arrives and is rejected, so it has no cgroup: OutOfpods")
	assert.NotContains(t, stdout, "default/api")

	nodes := writeManifest(t, node+strings.Replace(node, "node-1", "node-2", 1)+goodPod)
	code, _, stderr = runCgroupsCmd("-f", nodes, "--node-cpu", "2")
	assert.Equal(t, 2, code, "two Nodes: exit status; stderr %q", stderr)
	assert.Contains(t, stderr, `node "node-2" (document 2): a second Node (the first, "node-1", is document 1): a node file holds one node`, "two Nodes")

	code, stdout, stderr = runCgroupsCmd("-f", writeManifest(t, goodPod))
	const meminfo = "/proc/meminfo"
	if _, err := os.Stat(meminfo); err != nil {
		assert.Equal(t, 2, code, "without %s: exit status; stderr %q", meminfo, stderr)
		assert.Contains(t, stderr, "give --node-memory", "without %s", meminfo)
		return
	}
	require.Equal(t, 0, code, "from this host: exit status; stderr %q", stderr)
	require.Contains(t, stderr, "node capacity of this host: cpu ", "from this host")
	_, files = parseTree(t, stdout)
	want := strconv.FormatUint(cgroups.MilliCPUToShares(int64(runtime.NumCPU())*1000), 10)
	assert.Equal(t, want, files["kubepods"]["cpu.shares"], "from this host: kubepods cpu.shares for %d CPUs", runtime.NumCPU())
	assert.Contains(t, stdout, "(this host: /proc/meminfo MemTotal)", "from this host: the header")
}

// TestCgroupsStdinAndNotes reads the manifests from stdin; a finished pod
// is left out, a pod without a uid gets a stand-in, and other kinds (an
// application's Deployment, a misspelt Pod) are skipped, each with a note on
// stderr.
func TestCgroupsStdinAndNotes(t *testing.T) {
	manifest := goodPod + `---
apiVersion: v1
kind: Pod
metadata: {name: done, uid: 0b1c2d3e-0000-4000-8000-00000000000f}
spec: {containers: [{name: c}]}
status: {phase: Succeeded}
---
apiVersion: v1
kind: Pod
metadata: {name: handmade, namespace: team}
spec: {containers: [{name: c}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
---
apiVersion: v1
kind: Pood
`
	code, stdout, stderr := runCgroupsStdin(manifest, "-f", "-", "--node-cpu", "2", "--node-memory", "4Gi")
	require.Equal(t, 0, code, "exit status; stderr %q", stderr)
	for _, note := range []string{
		"note: skipped default/done (phase Succeeded): the kubelet neither admits nor counts a pod in a terminal phase",
		"note: pod team/handmade has no metadata.uid; its cgroup is named after a hash of its namespace and name, pod" + standInUIDOf("team/handmade"),
		`note: skipped document 4: apps/v1 Deployment "web" (a node file holds a Node and Pods; other kinds are left out)`,
		"note: skipped document 5: v1 Pood (a node file holds a Node and Pods; other kinds are left out)",
	} {
		assert.Contains(t, stderr, note)
	}
	paths, _ := parseTree(t, stdout)
	want := []string{
		"kubepods", "kubepods/besteffort",
		"kubepods/besteffort/pod" + standInUIDOf("team/handmade"), "kubepods/besteffort/pod" + standInUIDOf("team/handmade") + "/c",
		"kubepods/burstable",
		"kubepods/burstable/pod0b1c2d3e-0000-4000-8000-000000000001", "kubepods/burstable/pod0b1c2d3e-0000-4000-8000-000000000001/app",
	}
	assert.Equal(t, want, paths, "cgroups, in order")
}

// filesNamed returns the files among names that a cgroup has, to compare a
// few of its values at once.
func filesNamed(files map[string]string, names ...string) map[string]string {
	out := map[string]string{}
	for _, name := range names {
		if v, ok := files[name]; ok {
			out[name] = v
		}
	}
	return out
}

// standInUIDOf is the md5 of namespace/name in hex, computed apart from
// standInUID's use of the pod type.
func standInUIDOf(key string) string {
	return fmt.Sprintf("%x", md5.Sum([]byte(key)))
}

// TestCgroupsNodeMemoryTooSmallBlamesTheFlag: a --node-memory that leaves
// nothing allocatable is the flag's fault, not the pods' in the file.
func TestCgroupsNodeMemoryTooSmallBlamesTheFlag(t *testing.T) {
	status, stdout, stderr := runCgroupsCmd("--node-memory", "1", "--node-cpu", "4", "-f", "../../docs/examples/seed003-node.yaml")
	assert.Equal(t, cli.StatusUsage, status)
	assert.Empty(t, stdout)
	assert.Equal(t, "nodeproof cgroups: --node-memory 1 leaves no allocatable memory: the kubelet keeps the memory.available hard eviction threshold (100Mi) off the capacity; give more than that\n", stderr)
}

// podComment finds the pod a pod cgroup's line of the tree names.
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
	example := filepath.Join("../../docs/examples", "admit-node.yaml")
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
