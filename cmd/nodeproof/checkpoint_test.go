package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
)

var updateCheckpoint = flag.Bool("update-checkpoint", false, "rewrite testdata/checkpoint from the data in checkpoint_test.go")

const checkpointDir = "testdata/checkpoint"

// specCheckpoint is the worked example of spec 1.10. Its AllocResp, bytes
// 10 1 255, is a map entry whose content is a truncated varint, so it does
// not decode: the file shows the violation of a lost allocate response.
var specCheckpoint = checkpoint.Data{
	PodDeviceEntries: []checkpoint.PodDevicesEntry{{
		PodUID: "pod1", ContainerName: "con1", ResourceName: "domain1.com/resource1",
		DeviceIDs: checkpoint.DevicesPerNUMA{-1: {"dev3"}, 0: {"dev1", "dev2"}, 2: {"dev9"}, 10: {"dev10"}},
		AllocResp: []byte{10, 1, 255},
	}},
	RegisteredDevices: map[string][]string{"a.com/b": nil, "domain1.com/resource1": {"dev1", "dev2", "dev3"}},
}

func gpuResponse(ids ...string) []byte {
	return allocresp.Marshal(allocresp.ContainerAllocateResponse{
		Envs:    map[string]string{"VISIBLE_GPUS": strings.Join(ids, ",")},
		Devices: []allocresp.DeviceSpec{{ContainerPath: "/dev/gpu0", HostPath: "/dev/gpu0", Permissions: "rw"}},
	})
}

// cleanCheckpoint breaks no invariant: pod-a's app container reuses the
// device of its init container, as the kubelet does.
var cleanCheckpoint = checkpoint.Data{
	PodDeviceEntries: []checkpoint.PodDevicesEntry{
		{PodUID: "pod-a", ContainerName: "setup", ResourceName: "example.com/gpu",
			DeviceIDs: checkpoint.DevicesPerNUMA{0: {"gpu0"}}, AllocResp: gpuResponse("gpu0")},
		{PodUID: "pod-a", ContainerName: "train", ResourceName: "example.com/gpu",
			DeviceIDs: checkpoint.DevicesPerNUMA{0: {"gpu0"}, 1: {"gpu1"}}, AllocResp: gpuResponse("gpu0", "gpu1")},
		{PodUID: "pod-b", ContainerName: "serve", ResourceName: "example.com/nic",
			DeviceIDs: checkpoint.DevicesPerNUMA{-1: {"nic0"}}, AllocResp: []byte{}},
	},
	RegisteredDevices: map[string][]string{"example.com/gpu": {"gpu0", "gpu1", "gpu2"}, "example.com/nic": {"nic0"}},
}

// doubleAllocation gives gpu1 to containers of two pods.
var doubleAllocation = checkpoint.Data{
	PodDeviceEntries: []checkpoint.PodDevicesEntry{
		{PodUID: "pod-a", ContainerName: "train", ResourceName: "example.com/gpu",
			DeviceIDs: checkpoint.DevicesPerNUMA{0: {"gpu0", "gpu1"}}, AllocResp: gpuResponse("gpu0", "gpu1")},
		{PodUID: "pod-b", ContainerName: "infer", ResourceName: "example.com/gpu",
			DeviceIDs: checkpoint.DevicesPerNUMA{0: {"gpu1"}}, AllocResp: gpuResponse("gpu1")},
	},
	RegisteredDevices: map[string][]string{"example.com/gpu": {"gpu0", "gpu1", "gpu2"}},
}

func mustEncode(t *testing.T, d checkpoint.Data) []byte {
	t.Helper()
	b, err := checkpoint.Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkpointTestdata derives every file under testdata/checkpoint from the
// data above, so the committed files cannot drift from what Encode writes.
func checkpointTestdata(t *testing.T) map[string][]byte {
	valid := mustEncode(t, specCheckpoint)
	clean := mustEncode(t, cleanCheckpoint)

	// Change the last digit of the checksum, which ends the file.
	corrupt := slices.Clone(valid)
	last := len(corrupt) - 2
	corrupt[last] = '0' + (corrupt[last]-'0'+1)%10

	// Indented JSON has the same data, hence a checksum that verifies: the
	// kubelet loads it, the strict decoder does not.
	var indented bytes.Buffer
	if err := json.Indent(&indented, clean, "", "  "); err != nil {
		t.Fatal(err)
	}
	indented.WriteByte('\n')

	return map[string][]byte{
		"valid.json":             valid,
		"clean.json":             clean,
		"double-allocation.json": mustEncode(t, doubleAllocation),
		"corrupt.json":           corrupt,
		"truncated.json":         valid[:len(valid)/2],
		"noncanonical.json":      indented.Bytes(),
	}
}

// TestCheckpointTestdata keeps the committed files equal to their sources;
// run with -update-checkpoint to rewrite them.
func TestCheckpointTestdata(t *testing.T) {
	for name, want := range checkpointTestdata(t) {
		path := filepath.Join(checkpointDir, name)
		if *updateCheckpoint {
			if err := os.MkdirAll(checkpointDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestCheckpointTestdata -update-checkpoint)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale:\n got %s\nwant %s\n(run go test -run TestCheckpointTestdata -update-checkpoint)", path, got, want)
		}
	}
}

func runCheckpointCmd(args ...string) (code int, stdout, stderr string) {
	return runNodeproof("", append([]string{"checkpoint"}, args...)...)
}

func TestCheckpointText(t *testing.T) {
	for _, c := range []struct {
		file string
		code int
		// stdout and stderr must contain each of these.
		stdout, stderr []string
	}{
		{"valid.json", 1, []string{
			"checksum: 103353102 (valid)",
			"a.com/b: none\n  domain1.com/resource1: dev1 dev2 dev3\n",
			"[0] pod pod1, container con1, resource domain1.com/resource1\n      no NUMA: dev3\n      NUMA node 0: dev1 dev2\n      NUMA node 2: dev9\n      NUMA node 10: dev10\n",
			"allocate response: does not decode: allocresp: Envs[entry 0]: tag at byte 0: truncated varint",
			`violations:` + "\n" + `  - PodDeviceEntries[0] (pod "pod1", container "con1", resource "domain1.com/resource1") has an AllocResp that does not decode`,
			"silently loses its devices",
		}, nil},
		{"clean.json", 0, []string{
			"allocate response: envs 1, mounts 0, devices 1, annotations 0, CDI devices 0\n        device /dev/gpu0 -> /dev/gpu0 (rw)\n",
			`note: device "gpu0" of resource "example.com/gpu" is shared by PodDeviceEntries[0] (pod "pod-a", container "setup") and PodDeviceEntries[1] (pod "pod-a", container "train") of one pod`,
			"violations: none\n",
		}, nil},
		{"double-allocation.json", 1, []string{
			`  - device "gpu1" of resource "example.com/gpu" is held by containers of different pods: PodDeviceEntries[0] (pod "pod-a", container "train") and PodDeviceEntries[1] (pod "pod-b", container "infer").` + "\n",
		}, nil},
		{"corrupt.json", 1, nil, []string{"corrupt.json: checkpoint is corrupted: the file stores checksum 103353103, its content has checksum 103353102"}},
		{"truncated.json", 1, nil, []string{"truncated.json: checkpoint: Data.PodDeviceEntries[0].DeviceIDs", "invalid JSON"}},
		{"noncanonical.json", 1, nil, []string{"noncanonical.json: not in the canonical form the kubelet writes: ", "the kubelet itself would load it"}},
		// A file that cannot be opened is bad input, status 2, as in every command.
		{"missing.json", 2, nil, []string{"missing.json", "no such file"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			code, stdout, stderr := runCheckpointCmd(filepath.Join(checkpointDir, c.file))
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
			for _, want := range c.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			for _, want := range c.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if c.stderr != nil && stdout != "" {
				t.Errorf("a file that does not decode printed to stdout:\n%s", stdout)
			}
		})
	}
}

// TestCheckpointViolations covers the violations no committed file shows,
// each in a file whose checksum is valid.
func TestCheckpointViolations(t *testing.T) {
	ok := gpuResponse("gpu0")
	d := checkpoint.Data{
		PodDeviceEntries: []checkpoint.PodDevicesEntry{
			{PodUID: "p", ContainerName: "c", ResourceName: "r", DeviceIDs: checkpoint.DevicesPerNUMA{0: {"d0"}}, AllocResp: ok},
			{PodUID: "p", ContainerName: "empty", ResourceName: "r", DeviceIDs: checkpoint.DevicesPerNUMA{0: {}}, AllocResp: ok},
			{PodUID: "p", ContainerName: "twice", ResourceName: "r", DeviceIDs: checkpoint.DevicesPerNUMA{-1: {"d1", "d1"}}, AllocResp: ok},
			{PodUID: "p", ContainerName: "c", ResourceName: "r", DeviceIDs: checkpoint.DevicesPerNUMA{0: {"d0"}}, AllocResp: ok},
		},
		RegisteredDevices: map[string][]string{"r": {"d0", "d1", "d0"}},
	}
	path := filepath.Join(t.TempDir(), "kubelet_internal_checkpoint")
	if err := os.WriteFile(path, mustEncode(t, d), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCheckpointCmd(path)
	if code != 1 {
		t.Errorf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	_, violations, _ := strings.Cut(stdout, "violations:\n")
	want := []string{
		`RegisteredDevices["r"] lists device "d0" more than once.`,
		`PodDeviceEntries[1] (pod "p", container "empty", resource "r") has no device IDs.`,
		`PodDeviceEntries[2] (pod "p", container "twice", resource "r") lists device "d1" more than once on no NUMA.`,
		`PodDeviceEntries[0] and PodDeviceEntries[3] all record pod "p", container "c", resource "r": the kubelet keeps only the last, PodDeviceEntries[3].`,
	}
	var got []string
	for line := range strings.Lines(violations) {
		got = append(got, strings.TrimSuffix(strings.TrimPrefix(line, "  - "), "\n"))
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n got %q\nwant %q\nstdout:\n%s", got, want, stdout)
	}
	if strings.Contains(stdout, "note:") {
		t.Errorf("a container listed twice is not sharing between containers:\n%s", stdout)
	}
}

// TestCheckpointKubeletReading covers files the strict decoder refuses but
// the kubelet's encoding/json reads: the verdict is the kubelet's.
func TestCheckpointKubeletReading(t *testing.T) {
	// An unknown field, which encoding/json ignores, before the checksum.
	clean := string(mustEncode(t, cleanCheckpoint))
	extra := strings.Replace(clean, `,"Checksum":`, `,"Extra":1,"Checksum":`, 1)
	for _, c := range []struct {
		name, file, want string
	}{
		{"checksum verifies", extra, "not in the canonical form the kubelet writes: checkpoint: unknown field \"Extra\""},
		{"checksum differs", strings.Replace(extra, `"Checksum":4186530581`, `"Checksum":7`, 1),
			"checkpoint is corrupted: the file stores checksum 7, its content has checksum 4186530581"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kubelet_internal_checkpoint")
			if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := runCheckpointCmd(path)
			if code != 1 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, stderr, c.want)
			}
		})
	}
}

// checkpointDoc is the documented --json schema.
type checkpointDoc struct {
	ChecksumValid     bool                `json:"checksumValid"`
	Error             string              `json:"error"`
	RegisteredDevices map[string][]string `json:"registeredDevices"`
	PodDeviceEntries  []struct {
		PodUID        string              `json:"podUID"`
		ContainerName string              `json:"containerName"`
		ResourceName  string              `json:"resourceName"`
		DeviceIDs     map[string][]string `json:"deviceIDs"`
	} `json:"podDeviceEntries"`
	Violations []string `json:"violations"`
}

// parseCheckpointDoc decodes out into the schema, refusing unknown keys, and
// checks that the keys every document has are present and not null.
func parseCheckpointDoc(t *testing.T, out string) checkpointDoc {
	t.Helper()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("output is not a JSON object: %v\n%s", err, out)
	}
	for _, k := range []string{"checksumValid", "registeredDevices", "podDeviceEntries", "violations"} {
		if v, ok := raw[k]; !ok || string(v) == "null" {
			t.Errorf("key %q is missing or null:\n%s", k, out)
		}
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var doc checkpointDoc
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("output does not fit the schema: %v\n%s", err, out)
	}
	return doc
}

func TestCheckpointJSON(t *testing.T) {
	t.Run("valid.json", func(t *testing.T) {
		// The flag goes before or after FILE.
		for _, args := range [][]string{{filepath.Join(checkpointDir, "valid.json"), "--json"}, {"--json", filepath.Join(checkpointDir, "valid.json")}} {
			code, stdout, _ := runCheckpointCmd(args...)
			if code != 1 {
				t.Errorf("%q: exit %d, want 1", args, code)
			}
			doc := parseCheckpointDoc(t, stdout)
			if !doc.ChecksumValid || doc.Error != "" {
				t.Errorf("checksumValid %v, error %q; want true and none", doc.ChecksumValid, doc.Error)
			}
			if want := map[string][]string{"a.com/b": nil, "domain1.com/resource1": {"dev1", "dev2", "dev3"}}; !reflect.DeepEqual(doc.RegisteredDevices, want) {
				t.Errorf("registeredDevices = %#v, want %#v", doc.RegisteredDevices, want)
			}
			if len(doc.PodDeviceEntries) != 1 {
				t.Fatalf("podDeviceEntries = %+v, want one", doc.PodDeviceEntries)
			}
			e := doc.PodDeviceEntries[0]
			if e.PodUID != "pod1" || e.ContainerName != "con1" || e.ResourceName != "domain1.com/resource1" {
				t.Errorf("entry = %+v", e)
			}
			if want := map[string][]string{"-1": {"dev3"}, "0": {"dev1", "dev2"}, "2": {"dev9"}, "10": {"dev10"}}; !reflect.DeepEqual(e.DeviceIDs, want) {
				t.Errorf("deviceIDs = %v, want %v", e.DeviceIDs, want)
			}
			if len(doc.Violations) != 1 || !strings.Contains(doc.Violations[0], "AllocResp that does not decode") {
				t.Errorf("violations = %q, want the undecodable AllocResp", doc.Violations)
			}
		}
	})
	t.Run("double-allocation.json", func(t *testing.T) {
		code, stdout, _ := runCheckpointCmd("--json", filepath.Join(checkpointDir, "double-allocation.json"))
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		doc := parseCheckpointDoc(t, stdout)
		if len(doc.Violations) != 1 || !strings.Contains(doc.Violations[0], `device "gpu1" of resource "example.com/gpu" is held by containers of different pods`) {
			t.Errorf("violations = %q, want gpu1 held by two pods", doc.Violations)
		}
		if len(doc.PodDeviceEntries) != 2 || doc.PodDeviceEntries[1].PodUID != "pod-b" {
			t.Errorf("podDeviceEntries = %+v", doc.PodDeviceEntries)
		}
	})
	t.Run("clean.json", func(t *testing.T) {
		code, stdout, _ := runCheckpointCmd("--json", filepath.Join(checkpointDir, "clean.json"))
		if code != 0 {
			t.Errorf("exit %d, want 0", code)
		}
		if !strings.Contains(stdout, `"violations": []`) {
			t.Errorf("violations is not an empty array:\n%s", stdout)
		}
		if doc := parseCheckpointDoc(t, stdout); !doc.ChecksumValid || len(doc.PodDeviceEntries) != 3 {
			t.Errorf("doc = %+v", doc)
		}
	})
	for _, file := range []string{"corrupt.json", "truncated.json", "missing.json"} {
		t.Run(file, func(t *testing.T) {
			code, stdout, stderr := runCheckpointCmd("--json", filepath.Join(checkpointDir, file))
			want := 1
			if file == "missing.json" {
				want = 2 // cannot be opened: bad input
			}
			if code != want {
				t.Errorf("exit %d, want %d", code, want)
			}
			doc := parseCheckpointDoc(t, stdout)
			if doc.ChecksumValid || doc.Error == "" || !strings.Contains(stderr, doc.Error) {
				t.Errorf("checksumValid %v, error %q; want false and the error of stderr %q", doc.ChecksumValid, doc.Error, stderr)
			}
			if len(doc.RegisteredDevices) != 0 || len(doc.PodDeviceEntries) != 0 || len(doc.Violations) != 0 {
				t.Errorf("a file that does not decode has content: %+v", doc)
			}
		})
	}
}

func TestCheckpointUsage(t *testing.T) {
	valid := filepath.Join(checkpointDir, "valid.json")
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{nil, 2, "FILE is required"},
		{[]string{"--json"}, 2, "FILE is required"},
		{[]string{valid, valid}, 2, "unexpected argument"},
		{[]string{valid, "--yaml"}, 2, "unknown flag: --yaml"},
	} {
		code, stdout, stderr := runCheckpointCmd(c.args...)
		if code != c.code || !strings.Contains(stderr, c.stderr) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", c.args, code, stderr, c.code, c.stderr)
		}
		if stdout != "" {
			t.Errorf("%q: printed to stdout:\n%s", c.args, stdout)
		}
	}
}
