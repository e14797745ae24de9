package admit

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/agent/kube"
	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/core/admission"
)

const (
	examplesDir = "../../docs/examples"
	admitDir    = "testdata"
)

// update rewrites the golden files under testdata from what the code
// produces now, as -update does in every package of the module that keeps
// golden files. Look at the diff before committing it.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from the current output")

// runAdmitCmd runs `nodeproof admit ARGS` as main does, reading stdin, and
// returns the exit status and what was printed.
func runAdmitCmd(stdin string, args ...string) (code int, stdout, stderr string) {
	return runRoot(stdin, append([]string{"admit"}, args...)...)
}

// runRoot runs a command line against a root holding this command.
func runRoot(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = cli.Execute(cli.NewRoot(NewCommand()), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// decision is what a test expects of one arrival; it mirrors the --json
// element, so the JSON is decoded into it strictly.
type decision struct {
	Pod       string   `json:"pod"`
	Admitted  bool     `json:"admitted"`
	Reason    string   `json:"reason"`
	Message   string   `json:"message"`
	Preempted []string `json:"preempted"`
}

// The decisions the examples' header comments promise, worked out by hand
// from spec/preemption.md §4.2, not from the code's output.
var exampleDecisions = map[string][]decision{
	"seed003-node.yaml": {
		{Pod: "kube-system/critical", Admitted: true, Preempted: []string{"default/be2", "default/be1", "default/bu1"}},
	},
	"admit-node.yaml": {
		{Pod: "default/analytics", Reason: admission.OutOfCPU,
			Message: "Node didn't have enough resource: cpu, requested: 2000, used: 2850, capacity: 3800", Preempted: []string{}},
		{Pod: "default/small", Admitted: true, Preempted: []string{}},
		{Pod: "kube-system/node-agent", Admitted: true, Preempted: []string{"default/scratch-2", "default/web-2"}},
		{Pod: "kube-system/storage-csi", Reason: admission.UnexpectedAdmissionError,
			Message: "Unexpected error while attempting to recover from admission failure: preemption: error finding a set of pods to preempt: " +
				"no set of running pods found to reclaim resources: [(res: cpu, q: 550), ]", Preempted: []string{}},
		{Pod: "default/late", Admitted: true, Preempted: []string{}},
	},
}

// decodeAdmitJSON decodes --json output strictly: only the five keys, each
// of its type, and preempted never null.
func decodeAdmitJSON(t *testing.T, stdout string) []decision {
	t.Helper()
	var raw []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(stdout), &raw), "stdout is not a JSON array of objects:\n%s", stdout)
	require.NotNil(t, raw, "stdout is null, want an array")
	want := []string{"admitted", "message", "pod", "preempted", "reason"}
	out := make([]decision, len(raw))
	for i, obj := range raw {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		assert.Equal(t, want, keys, "element %d: exactly these keys", i)
		preempted := strings.TrimSpace(string(obj["preempted"]))
		assert.True(t, strings.HasPrefix(preempted, "["), "element %d: preempted is %s, want an array", i, preempted)
		b, _ := json.Marshal(obj)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		assert.NoError(t, dec.Decode(&out[i]), "element %d", i)
	}
	return out
}

// TestAdmitExamples runs the command on each example file and checks the
// decisions against the expected ones and the exact output against the
// golden files in testdata (run with -update to rewrite them
// after a deliberate change of format).
func TestAdmitExamples(t *testing.T) {
	for name, want := range exampleDecisions {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(examplesDir, name)
			code, text, stderr := runAdmitCmd("", "-f", path)
			require.Equal(t, 0, code, "exit status; stderr %q", stderr)
			require.Empty(t, stderr)
			code, js, jsonStderr := runAdmitCmd("", "-f", path, "--json")
			require.Equal(t, 0, code, "--json: exit status; stderr %q", jsonStderr)
			assert.Equal(t, want, decodeAdmitJSON(t, js), "decisions")
			// The text shows the same victims, in the same order.
			for _, d := range want {
				var lines []string
				for i, v := range d.Preempted {
					lines = append(lines, fmt.Sprintf("     %d. %s (", i+1, v))
				}
				if len(lines) == 0 {
					continue
				}
				block := "   preempted, in eviction order:\n" + strings.Join(lines, "")
				assert.Contains(t, collapseVictims(text), block, "the text shows the victims of %s in order", d.Pod)
			}
			golden(t, strings.TrimSuffix(name, ".yaml")+".txt", text)
			golden(t, strings.TrimSuffix(name, ".yaml")+".json", js)
		})
	}
}

// collapseVictims drops the QoS class after each victim's name, so a test
// can look for the victims' order alone.
func collapseVictims(text string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if i := strings.Index(line, " ("); i > 0 && strings.HasPrefix(line, "     ") {
			line = line[:i+2]
		}
		b.WriteString(line)
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(admitDir, name)
	if *update {
		require.NoError(t, os.MkdirAll(admitDir, 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./cli/admit -run TestAdmitExamples -update")
	assert.Equal(t, string(want), got, "output differs from %s (run with -update after a deliberate change)", path)
}

// TestAdmitExampleSkipsTerminalPods: the Succeeded pod of admit-node.yaml
// is neither admitted nor counted, and --json says so on stderr only.
func TestAdmitExampleSkipsTerminalPods(t *testing.T) {
	path := filepath.Join(examplesDir, "admit-node.yaml")
	_, text, _ := runAdmitCmd("", "-f", path)
	note := "skipped default/migrate-1 (phase Succeeded)"
	assert.Contains(t, text, note, "text")
	_, js, stderr := runAdmitCmd("", "-f", path, "--json")
	assert.Contains(t, stderr, "nodeproof admit: note: "+note, "--json: stderr")
	assert.NotContains(t, js, "migrate-1", "--json: stdout")
}

// TestAdmitStdin: "-f -" reads the manifests from stdin, with the same
// result as the file.
func TestAdmitStdin(t *testing.T) {
	path := filepath.Join(examplesDir, "seed003-node.yaml")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	_, fromFile, _ := runAdmitCmd("", "-f", path, "--json")
	code, fromStdin, stderr := runAdmitCmd(string(data), "-f", "-", "--json")
	assert.Equal(t, 0, code, "exit status; stderr %q", stderr)
	assert.Equal(t, fromFile, fromStdin, "stdout from stdin against stdout from the file")
}

// TestAdmitThroughDispatch runs the command by name, as main does, and
// checks the command list shows it.
func TestAdmitThroughDispatch(t *testing.T) {
	code, stdout, stderr := runAdmitCmd("", "-f", filepath.Join(examplesDir, "seed003-node.yaml"))
	assert.Equal(t, 0, code, "exit status; stderr %q", stderr)
	assert.Contains(t, stdout, "1. kube-system/critical (Burstable, critical: static): admitted after preempting 3 pods")
	_, stdout, _ = runRoot("", "help")
	assert.Contains(t, stdout, "\n  admit ", "the usage lists admit")
}

// testNode is a Node as a user would write it: a node with two devices of
// an extended resource and no device plugins.
const testNode = `apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  allocatable: {cpu: "1", memory: 1Gi, pods: "10", example.com/gpu: "2"}
`

// podDoc is a pod document with one container. meta is extra metadata
// lines (annotations, uid); phase "" leaves the status out. An extended
// resource needs its limit equal to its request, so gpus sets both.
func podDoc(name, meta, phase, cpu string, gpus int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n%sspec:\n  containers:\n  - name: c\n    resources:\n", name, meta)
	var req []string
	if cpu != "" {
		req = append(req, "cpu: "+cpu)
	}
	if gpus > 0 {
		req = append(req, fmt.Sprintf("example.com/gpu: %d", gpus))
		fmt.Fprintf(&b, "      limits: {example.com/gpu: %d}\n", gpus)
	}
	fmt.Fprintf(&b, "      requests: {%s}\n", strings.Join(req, ", "))
	if phase != "" {
		fmt.Fprintf(&b, "status: {phase: %s}\n", phase)
	}
	return b.String()
}

func admitDecisions(t *testing.T, manifest string) []decision {
	t.Helper()
	code, stdout, stderr := runAdmitCmd(manifest, "-f", "-", "--json")
	require.Equal(t, 0, code, "exit status; stderr %q", stderr)
	return decodeAdmitJSON(t, stdout)
}

// TestAdmitCriticalByAnnotation: the same arriving pod preempts when the
// config.source or config.mirror annotation makes it critical, and is
// rejected without preempting anything when it has neither (or its source
// is "api", which is not static).
func TestAdmitCriticalByAnnotation(t *testing.T) {
	node := testNode + podDoc("holder", "", "Running", "", 2)
	gpuShort := "Node didn't have enough resource: example.com/gpu, requested: 1, used: 2, capacity: 2"
	for _, c := range []struct {
		name        string
		annotations string
		want        decision
	}{
		{"static", "  annotations: {kubernetes.io/config.source: file}\n",
			decision{Pod: "default/arrival", Admitted: true, Preempted: []string{"default/holder"}}},
		{"mirror", "  annotations: {kubernetes.io/config.mirror: abc}\n",
			decision{Pod: "default/arrival", Admitted: true, Preempted: []string{"default/holder"}}},
		{"api source", "  annotations: {kubernetes.io/config.source: api}\n",
			decision{Pod: "default/arrival", Reason: "OutOfexample.com/gpu", Message: gpuShort, Preempted: []string{}}},
		{"plain", "",
			decision{Pod: "default/arrival", Reason: "OutOfexample.com/gpu", Message: gpuShort, Preempted: []string{}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, []decision{c.want}, admitDecisions(t, node+podDoc("arrival", c.annotations, "", "", 1)))
		})
	}
}

// TestAdmitState: each arrival sees the node as the earlier decisions left
// it. A preempted pod's room goes to the critical pod; an admitted pod
// holds its room against later arrivals; a rejected pod holds none.
func TestAdmitState(t *testing.T) {
	critical := "  annotations: {kubernetes.io/config.source: file}\n"
	manifest := testNode +
		podDoc("a", "", "Running", "900m", 1) +
		podDoc("b", "", "", "", 1) + // fits: the node has 2 gpus
		podDoc("c", "", "", "", 1) + // b took the last one
		podDoc("d", critical, "", "", 2) + // preempts a and b
		podDoc("e", "", "", "900m", 0) // a was preempted, c rejected: room
	want := []decision{
		{Pod: "default/b", Admitted: true, Preempted: []string{}},
		{Pod: "default/c", Reason: "OutOfexample.com/gpu",
			Message: "Node didn't have enough resource: example.com/gpu, requested: 1, used: 2, capacity: 2", Preempted: []string{}},
		{Pod: "default/d", Admitted: true, Preempted: []string{"default/b", "default/a"}},
		{Pod: "default/e", Admitted: true, Preempted: []string{}},
	}
	assert.Equal(t, want, admitDecisions(t, manifest))
}

// TestAdmitCapacityFallback: a Node without allocatable admits against its
// capacity and says so; with both, allocatable wins.
func TestAdmitCapacityFallback(t *testing.T) {
	pods := podDoc("p", "", "", "1500m", 0)
	capOnly := "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nstatus:\n  capacity: {cpu: \"2\", pods: \"10\"}\n"
	code, stdout, stderr := runAdmitCmd(capOnly+pods, "-f", "-")
	assert.Equal(t, 0, code, "capacity only: exit status; stderr %q", stderr)
	assert.Contains(t, stdout, "node node-1, capacity (the Node has no allocatable): cpu 2, pods 10\n", "capacity only")
	assert.Contains(t, stdout, "1. default/p (Burstable): admitted\n", "capacity only")
	both := strings.Replace(capOnly, "  capacity:", "  allocatable: {cpu: 1, pods: \"10\"}\n  capacity:", 1)
	code, stdout, stderr = runAdmitCmd(both+pods, "-f", "-")
	assert.Equal(t, 0, code, "both: exit status; stderr %q", stderr)
	assert.Contains(t, stdout, "node node-1, allocatable: cpu 1, pods 10\n", "both")
	assert.Contains(t, stdout, "reason:  OutOfcpu", "both")
}

// TestAdmitNoArrivals: a kubectl dump of a node whose pods all run has
// nothing to decide; --json prints an empty array, not null.
func TestAdmitNoArrivals(t *testing.T) {
	code, stdout, stderr := runAdmitCmd("", "-f", "../../agent/kube/testdata/kubectl-get-pods-nodes.yaml", "--json")
	assert.Equal(t, 0, code, "exit status; stderr %q", stderr)
	assert.Equal(t, "[]\n", stdout)
}

// TestAdmitBadInput: every bad flag or input exits 2 with an error that
// names the document and field where there is one, and prints nothing on
// stdout.
func TestAdmitBadInput(t *testing.T) {
	tooMany := &strings.Builder{}
	tooMany.WriteString(strings.Replace(testNode, `pods: "10"`, `pods: "2000"`, 1))
	for i := 0; i <= admission.MaxPods; i++ {
		fmt.Fprintf(tooMany, "---\n{apiVersion: v1, kind: Pod, metadata: {name: p%d}, spec: {containers: [{name: c}]}, status: {phase: Running}}\n", i)
	}
	badCPU := podDoc("bad", "", "", "abc", 0)
	for _, c := range []struct {
		name   string
		args   []string
		stdin  string
		stderr []string
	}{
		{"no flags", nil, "", []string{"-f FILE is required"}},
		{"--json alone", []string{"--json"}, "", []string{"-f FILE is required"}},
		{"unknown flag", []string{"-f", "-", "--yaml"}, testNode, []string{"unknown flag: --yaml"}},
		{"extra argument", []string{"-f", "-", "other.yaml"}, testNode, []string{`unexpected argument "other.yaml"`}},
		{"missing file", []string{"-f", "/nonexistent/node.yaml"}, "", []string{"/nonexistent/node.yaml", "no such file"}},
		{"bad quantity", []string{"-f", "-"}, testNode + podDoc("ok", "", "", "100m", 0) + badCPU,
			[]string{`nodeproof admit: stdin: pod "bad" (document 3): spec.containers[0].resources.requests.cpu: "abc": quantities must match`}},
		{"bad YAML", []string{"-f", "-"}, testNode + "---\nkind: Pod\n  metadata: [\n", []string{"document 2: "}},
		{"no node", []string{"-f", "-"}, podDoc("p", "", "", "100m", 0), []string{"no Node"}},
		{"empty file", []string{"-f", "-"}, "", []string{"no Node"}},
		{"two nodes", []string{"-f", "-"}, testNode + podDoc("p", "", "", "100m", 0) + "---\n" + strings.Replace(testNode, "name: node-1", "name: node-2", 1),
			[]string{`node "node-2" (document 3): a second Node (the first, "node-1", is document 1): a node file holds one node`}},
		{"node without pods", []string{"-f", "-"}, strings.Replace(testNode, `, pods: "10"`, "", 1),
			[]string{`node "node-1" (document 1): status.allocatable.pods: must be set`}},
		{"capacity without pods", []string{"-f", "-"}, "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nstatus: {capacity: {cpu: 1}}\n",
			[]string{`node "node-1" (document 1): status.capacity.pods: must be set`}},
		{"node beyond the core's bound", []string{"-f", "-"}, strings.Replace(testNode, "memory: 1Gi", "memory: 100Pi", 1),
			[]string{`node "node-1" (document 1): status.allocatable.memory: 100Pi exceeds the bound of 64Ti`}},
		{"duplicate name", []string{"-f", "-"}, testNode + podDoc("p", "", "", "100m", 0) + podDoc("p", "", "", "100m", 0),
			[]string{`pod "p" (document 3): metadata.name: pod "default/p" is also document 2`}},
		{"duplicate uid", []string{"-f", "-"}, testNode + podDoc("p", "  uid: u1\n", "", "100m", 0) + podDoc("q", "  uid: u1\n", "", "100m", 0),
			[]string{`pod "q" (document 3): metadata.uid: "u1" is also the uid of the pod in document 2`}},
		{"uid equal to another pod's stand-in", []string{"-f", "-"}, testNode + podDoc("p", "", "", "100m", 0) + podDoc("q", "  uid: "+kube.StandInUID("default", "p")+"\n", "", "100m", 0),
			[]string{`pod "q" (document 3): metadata.uid: "` + kube.StandInUID("default", "p") + `" is also the uid of the pod in document 2`}},
		{"uid that cannot name a cgroup", []string{"-f", "-"}, testNode + podDoc("q", "  uid: default/p\n", "", "100m", 0),
			[]string{`pod "q" (document 2): metadata.uid: "default/p" must be letters, digits, '-', '_' and '.'`}},
		{"running pods beyond the allocatable", []string{"-f", "-"}, testNode + podDoc("a", "", "Running", "600m", 0) + podDoc("b", "", "Running", "600m", 0),
			[]string{`pod "b" (document 3): status.phase: Running, but the node could not have admitted it after the running pods before it in the file: Node didn't have enough resource: cpu`}},
		{"allocatable above capacity", []string{"-f", "-"}, strings.Replace(testNode, "allocatable:", "capacity: {cpu: 500m}\n  allocatable:", 1),
			[]string{`node "node-1" (document 1): status.allocatable.cpu: 1 exceeds status.capacity of 500m`}},
		{"running pod beyond the core's bound", []string{"-f", "-"},
			testNode + podDoc("big", "", "Running", "100000000000000", 0),
			[]string{`pod "big" (document 2): spec.containers[0].resources.requests.cpu: 100000000000000 exceeds the bound of 4294967296m`}},
		{"arriving pod beyond the core's bound", []string{"-f", "-"}, testNode + podDoc("big", "", "", "100000000000000", 0),
			[]string{`pod "big" (document 2): spec.containers[0].resources.requests.cpu: 100000000000000 exceeds the bound of 4294967296m`}},
		{"more running pods than the core holds", []string{"-f", "-"}, tooMany.String(),
			[]string{fmt.Sprintf("pod \"p%d\" (document %d): status.phase: Running: more than %d running pods, the bound", admission.MaxPods, admission.MaxPods+2, admission.MaxPods)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runAdmitCmd(c.stdin, c.args...)
			assert.Equal(t, 2, code, "exit status; stderr:\n%s", stderr)
			for _, want := range c.stderr {
				assert.Contains(t, stderr, want)
			}
			assert.Empty(t, stdout, "stdout")
		})
	}
}

// TestAdmitHelp: -h prints the usage, with the exit status and the
// capacity fallback documented, and exits 0.
func TestAdmitHelp(t *testing.T) {
	code, stdout, stderr := runAdmitCmd("", "-h")
	assert.Equal(t, 0, code, "exit status")
	assert.Empty(t, stderr)
	for _, want := range []string{"Usage:\n  nodeproof admit -f FILE [--json]", "-f, --filename FILE", "status.capacity instead", "Exit status: 0 when every\narrival was decided, rejections included; 2 for bad flags or input", "every kill of a preempted pod succeeds"} {
		assert.Contains(t, stdout, want, "usage")
	}
}

// failingWriter fails every write, as a full disk does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestAdmitWriteFailure: output that cannot be written exits 1, in both
// formats.
func TestAdmitWriteFailure(t *testing.T) {
	path := filepath.Join(examplesDir, "seed003-node.yaml")
	for _, args := range [][]string{{"-f", path}, {"-f", path, "--json"}} {
		var errOut bytes.Buffer
		code := cli.Execute(cli.NewRoot(NewCommand()), append([]string{"admit"}, args...), strings.NewReader(""), failingWriter{}, &errOut)
		assert.Equal(t, 1, code, "%q: exit status; stderr %q", args, errOut.String())
		assert.Contains(t, errOut.String(), "disk full", "%q: the write error", args)
	}
}
