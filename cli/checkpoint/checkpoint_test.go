package checkpoint

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

	"github.com/nodeproof/nodeproof/cli"
	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
)

const checkpointDir = "testdata"

// update rewrites the files under testdata from their sources, as -update
// does in every package of the module that keeps golden files.
var update = flag.Bool("update", false, "rewrite the checkpoint files under testdata/ from their sources")

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
	require.NoError(t, err)
	return b
}

// checkpointTestdata derives every file under testdata from the
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
	require.NoError(t, json.Indent(&indented, clean, "", "  "))
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
// run with -update to rewrite them.
func TestCheckpointTestdata(t *testing.T) {
	for name, want := range checkpointTestdata(t) {
		path := filepath.Join(checkpointDir, name)
		if *update {
			require.NoError(t, os.MkdirAll(checkpointDir, 0o755))
			require.NoError(t, os.WriteFile(path, want, 0o644))
			continue
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err, "run go test -run TestCheckpointTestdata -update")
		assert.Equal(t, string(want), string(got), "%s is stale (run go test -run TestCheckpointTestdata -update)", path)
	}
}

func runCheckpointCmd(args ...string) (code int, stdout, stderr string) {
	return runCheckpointStdin("", args...)
}

func runCheckpointStdin(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = cli.Execute(cli.NewRoot(NewCommand()), append([]string{"checkpoint"}, args...), strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCheckpointText(t *testing.T) {
	for _, c := range []struct {
		file string
		code int
		// stdout and stderr must contain each of these; stdout is empty
		// when emptyStdout is set.
		stdout, stderr []string
		emptyStdout    bool
	}{
		{file: "valid.json", code: 1, stdout: []string{
			"checksum: 103353102 (valid)",
			"a.com/b: none\n  domain1.com/resource1: dev1 dev2 dev3\n",
			"[0] pod pod1, container con1, resource domain1.com/resource1\n      no NUMA: dev3\n      NUMA node 0: dev1 dev2\n      NUMA node 2: dev9\n      NUMA node 10: dev10\n",
			"allocate response: does not decode: allocresp: Envs[entry 0]: tag at byte 0: truncated varint",
			`violations:` + "\n" + `  - PodDeviceEntries[0] (pod "pod1", container "con1", resource "domain1.com/resource1") has an AllocResp that does not decode`,
			"silently loses its devices",
		}},
		{file: "clean.json", code: 0, stdout: []string{
			"allocate response: envs 1, mounts 0, devices 1, annotations 0, CDI devices 0\n        device /dev/gpu0 -> /dev/gpu0 (rw)\n",
			`note: device "gpu0" of resource "example.com/gpu" is shared by PodDeviceEntries[0] (pod "pod-a", container "setup") and PodDeviceEntries[1] (pod "pod-a", container "train") of one pod`,
			"violations: none\n",
		}},
		{file: "double-allocation.json", code: 1, stdout: []string{
			`  - device "gpu1" of resource "example.com/gpu" is held by containers of different pods: PodDeviceEntries[0] (pod "pod-a", container "train") and PodDeviceEntries[1] (pod "pod-b", container "infer").` + "\n",
		}},
		// The content of a file the kubelet refuses is shown, marked.
		{file: "corrupt.json", code: 1,
			stdout: []string{
				"checksum: 103353103 stored, 103353102 computed over the content (corrupted)\nthe kubelet would refuse this file: the content below is what the file holds, not what the kubelet would load\n",
				"[0] pod pod1, container con1, resource domain1.com/resource1\n",
			},
			stderr: []string{"corrupt.json: checkpoint is corrupted: the file stores checksum 103353103, its content has checksum 103353102; the kubelet would refuse it and start with no allocations"}},
		{file: "truncated.json", code: 1, stderr: []string{"truncated.json: checkpoint: invalid JSON at byte 155: unexpected end of JSON input"}, emptyStdout: true},
		// Reindented: the kubelet loads it, so it is only a note.
		{file: "noncanonical.json", code: 0, stdout: []string{
			"checksum: 4186530581 (valid)",
			"note: the bytes are not canonical: from byte 1 on they differ from what the kubelet writes for this content (reindented, reordered or respelled); the kubelet's checksum covers the decoded content, not the bytes, so it loads the file all the same, and its next write makes the file canonical.\n",
			"violations: none\n",
		}},
		{file: "missing.json", code: 2, stderr: []string{"missing.json", "no such file"}, emptyStdout: true},
	} {
		t.Run(c.file, func(t *testing.T) {
			code, stdout, stderr := runCheckpointCmd(filepath.Join(checkpointDir, c.file))
			assert.Equal(t, c.code, code, "exit code\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			for _, want := range c.stdout {
				assert.Contains(t, stdout, want)
			}
			for _, want := range c.stderr {
				assert.Contains(t, stderr, want)
			}
			if c.stderr == nil {
				assert.Empty(t, stderr)
			}
			if c.emptyStdout {
				assert.Empty(t, stdout, "a file that does not decode printed to stdout")
			}
		})
	}
}

// TestCheckpointReformattedLoads reproduces the report of issue #11: a
// checkpoint reindented by `python3 -m json.tool`, or with a trailing
// newline, is a file the kubelet loads, yet the command exited 1 and --json
// said checksumValid false while the message said the checksum verifies.
func TestCheckpointReformattedLoads(t *testing.T) {
	clean := mustEncode(t, cleanCheckpoint)
	var reindented bytes.Buffer
	require.NoError(t, json.Indent(&reindented, clean, "", "    "))
	reindented.WriteByte('\n')
	for name, file := range map[string][]byte{
		"python3 -m json.tool": reindented.Bytes(),
		"trailing newline":     append(slices.Clone(clean), '\n'),
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.json")
			require.NoError(t, os.WriteFile(path, file, 0o600))

			code, stdout, stderr := runCheckpointCmd(path)
			assert.Equal(t, 0, code, "exit code\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			assert.Contains(t, stdout, "checksum: 4186530581 (valid)\n")
			assert.Contains(t, stdout, "note: the bytes are not canonical")
			assert.Empty(t, stderr)

			code, stdout, _ = runCheckpointCmd(path, "--json")
			assert.Equal(t, 0, code)
			doc := parseCheckpointDoc(t, stdout)
			assert.True(t, doc.Loads)
			assert.True(t, doc.ChecksumValid)
			assert.Empty(t, doc.Error)
			require.NotNil(t, doc.Canonical)
			assert.False(t, *doc.Canonical)
			assert.Len(t, doc.PodDeviceEntries, 3)
		})
	}
}

// TestCheckpointStdin reads FILE "-" from stdin, as the other commands do.
func TestCheckpointStdin(t *testing.T) {
	code, stdout, stderr := runCheckpointStdin(string(mustEncode(t, cleanCheckpoint)), "-")
	assert.Equal(t, 0, code, "stderr:\n%s", stderr)
	assert.True(t, strings.HasPrefix(stdout, "checkpoint stdin\nchecksum: 4186530581 (valid)\n"), "stdout:\n%s", stdout)

	code, stdout, stderr = runCheckpointStdin("{", "--json", "-")
	assert.Equal(t, 1, code)
	doc := parseCheckpointDoc(t, stdout)
	assert.Equal(t, "stdin", doc.File)
	assert.Equal(t, "stdin: checkpoint: invalid JSON at byte 1: unexpected end of JSON input", doc.Error)
	assert.Equal(t, "nodeproof checkpoint: "+doc.Error+"\n", stderr)
}

// TestCheckpointKubeletReading covers files that only a reader following
// the kubelet's encoding/json reads: the verdict is the kubelet's.
func TestCheckpointKubeletReading(t *testing.T) {
	// An unknown field, which encoding/json ignores, before the checksum.
	clean := string(mustEncode(t, cleanCheckpoint))
	extra := strings.Replace(clean, `,"Checksum":`, `,"Extra":1,"Checksum":`, 1)
	for _, c := range []struct {
		name, file   string
		code         int
		stdout, note string
	}{
		{"checksum verifies", extra, 0, "checksum: 4186530581 (valid)\n", "so it loads the file all the same"},
		{"checksum differs", strings.Replace(extra, `"Checksum":4186530581`, `"Checksum":7`, 1), 1,
			"checksum: 7 stored, 4186530581 computed over the content (corrupted)\n", "not the bytes."},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kubelet_internal_checkpoint")
			require.NoError(t, os.WriteFile(path, []byte(c.file), 0o600))
			code, stdout, stderr := runCheckpointCmd(path)
			assert.Equal(t, c.code, code, "stderr:\n%s", stderr)
			assert.Contains(t, stdout, c.stdout)
			assert.Contains(t, stdout, "note: the bytes are not canonical: from byte 634 on")
			assert.Contains(t, stdout, c.note)
		})
	}
}

// checkpointDoc is the documented --json schema.
type checkpointDoc struct {
	File              string              `json:"file"`
	Loads             bool                `json:"loads"`
	ChecksumValid     bool                `json:"checksumValid"`
	Error             string              `json:"error"`
	StoredChecksum    *uint64             `json:"storedChecksum"`
	ComputedChecksum  *uint64             `json:"computedChecksum"`
	Canonical         *bool               `json:"canonical"`
	RegisteredDevices map[string][]string `json:"registeredDevices"`
	PodDeviceEntries  []struct {
		PodUID        string              `json:"podUID"`
		ContainerName string              `json:"containerName"`
		ResourceName  string              `json:"resourceName"`
		DeviceIDs     map[string][]string `json:"deviceIDs"`
	} `json:"podDeviceEntries"`
	Notes      []string `json:"notes"`
	Violations []string `json:"violations"`
}

// parseCheckpointDoc decodes out into the schema, refusing unknown keys, and
// checks that the keys every document has are present and not null.
func parseCheckpointDoc(t *testing.T, out string) checkpointDoc {
	t.Helper()
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &raw), "output is not a JSON object:\n%s", out)
	for _, k := range []string{"file", "loads", "checksumValid", "registeredDevices", "podDeviceEntries", "notes", "violations"} {
		v, ok := raw[k]
		assert.True(t, ok && string(v) != "null", "key %q is missing or null:\n%s", k, out)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var doc checkpointDoc
	require.NoError(t, dec.Decode(&doc), "output does not fit the schema:\n%s", out)
	return doc
}

func TestCheckpointJSON(t *testing.T) {
	t.Run("valid.json", func(t *testing.T) {
		// The flag goes before or after FILE.
		for _, args := range [][]string{{filepath.Join(checkpointDir, "valid.json"), "--json"}, {"--json", filepath.Join(checkpointDir, "valid.json")}} {
			code, stdout, _ := runCheckpointCmd(args...)
			assert.Equal(t, 1, code, "%q", args)
			doc := parseCheckpointDoc(t, stdout)
			assert.True(t, doc.Loads)
			assert.True(t, doc.ChecksumValid)
			assert.Empty(t, doc.Error)
			assert.Equal(t, map[string][]string{"a.com/b": nil, "domain1.com/resource1": {"dev1", "dev2", "dev3"}}, doc.RegisteredDevices)
			require.Len(t, doc.PodDeviceEntries, 1)
			e := doc.PodDeviceEntries[0]
			assert.Equal(t, []string{"pod1", "con1", "domain1.com/resource1"}, []string{e.PodUID, e.ContainerName, e.ResourceName})
			assert.Equal(t, map[string][]string{"-1": {"dev3"}, "0": {"dev1", "dev2"}, "2": {"dev9"}, "10": {"dev10"}}, e.DeviceIDs)
			require.Len(t, doc.Violations, 1)
			assert.Contains(t, doc.Violations[0], "AllocResp that does not decode")
		}
	})
	t.Run("double-allocation.json", func(t *testing.T) {
		code, stdout, _ := runCheckpointCmd("--json", filepath.Join(checkpointDir, "double-allocation.json"))
		assert.Equal(t, 1, code)
		doc := parseCheckpointDoc(t, stdout)
		require.Len(t, doc.Violations, 1)
		assert.Contains(t, doc.Violations[0], `device "gpu1" of resource "example.com/gpu" is held by containers of different pods`)
		require.Len(t, doc.PodDeviceEntries, 2)
		assert.Equal(t, "pod-b", doc.PodDeviceEntries[1].PodUID)
	})
	t.Run("clean.json", func(t *testing.T) {
		code, stdout, _ := runCheckpointCmd("--json", filepath.Join(checkpointDir, "clean.json"))
		assert.Equal(t, 0, code)
		assert.Contains(t, stdout, `"violations": []`)
		doc := parseCheckpointDoc(t, stdout)
		assert.True(t, doc.Loads)
		assert.True(t, doc.ChecksumValid)
		assert.Len(t, doc.PodDeviceEntries, 3)
		require.NotNil(t, doc.Canonical)
		assert.True(t, *doc.Canonical)
		assert.Len(t, doc.Notes, 1, "the shared init container device")
	})
	t.Run("corrupt.json", func(t *testing.T) {
		code, stdout, stderr := runCheckpointCmd("--json", filepath.Join(checkpointDir, "corrupt.json"))
		assert.Equal(t, 1, code)
		doc := parseCheckpointDoc(t, stdout)
		assert.False(t, doc.Loads)
		assert.False(t, doc.ChecksumValid)
		assert.Equal(t, "nodeproof checkpoint: "+doc.Error+"\n", stderr)
		require.NotNil(t, doc.StoredChecksum)
		require.NotNil(t, doc.ComputedChecksum)
		assert.Equal(t, []uint64{103353103, 103353102}, []uint64{*doc.StoredChecksum, *doc.ComputedChecksum})
		// The content is shown even though the kubelet would not load it.
		require.Len(t, doc.PodDeviceEntries, 1)
		assert.Equal(t, "pod1", doc.PodDeviceEntries[0].PodUID)
		assert.Len(t, doc.RegisteredDevices, 2)
	})
	for file, code := range map[string]int{"truncated.json": 1, "missing.json": 2} {
		t.Run(file, func(t *testing.T) {
			got, stdout, stderr := runCheckpointCmd("--json", filepath.Join(checkpointDir, file))
			assert.Equal(t, code, got)
			doc := parseCheckpointDoc(t, stdout)
			assert.False(t, doc.Loads)
			assert.False(t, doc.ChecksumValid)
			assert.NotEmpty(t, doc.Error)
			assert.Equal(t, "nodeproof checkpoint: "+doc.Error+"\n", stderr)
			assert.Nil(t, doc.StoredChecksum)
			assert.Nil(t, doc.Canonical)
			assert.Empty(t, doc.RegisteredDevices)
			assert.Empty(t, doc.PodDeviceEntries)
			assert.Empty(t, doc.Violations)
		})
	}
}

// TestCheckpointTextAndJSONAgree runs every kind of file through both
// outputs: the exit code, the error, the checksum verdict, the notes and the
// violations must say the same in both.
func TestCheckpointTextAndJSONAgree(t *testing.T) {
	clean := mustEncode(t, cleanCheckpoint)
	valid := mustEncode(t, specCheckpoint)
	files := map[string][]byte{
		"trailing newline":          append(slices.Clone(clean), '\n'),
		"corrupt and reindented":    bytes.ReplaceAll(bytes.Replace(valid, []byte("103353102"), []byte("9"), 1), []byte(","), []byte(",\n ")),
		"legacy V1":                 []byte(`{"Data":{"PodDeviceEntries":[{"DeviceIDs":["d"]}]},"Checksum":1}`),
		"null":                      []byte("null"),
		"empty":                     nil,
		"field names in lower case": bytes.ReplaceAll(clean, []byte(`"PodUID"`), []byte(`"poduid"`)),
	}
	for name, b := range checkpointTestdata(t) {
		files[name] = b
	}
	for name, b := range files {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kubelet_internal_checkpoint")
			require.NoError(t, os.WriteFile(path, b, 0o600))
			textCode, text, textErr := runCheckpointCmd(path)
			jsonCode, out, jsonErr := runCheckpointCmd(path, "--json")
			doc := parseCheckpointDoc(t, out)

			assert.Equal(t, textCode, jsonCode, "exit codes")
			assert.Equal(t, textErr, jsonErr, "stderr")
			wantCode := 1
			if doc.Loads && len(doc.Violations) == 0 {
				wantCode = 0
			}
			assert.Equal(t, wantCode, jsonCode, "exit code against loads %v and violations %q", doc.Loads, doc.Violations)
			assert.Equal(t, doc.Loads, doc.Error == "", "loads %v, error %q", doc.Loads, doc.Error)
			if doc.Error == "" {
				assert.Empty(t, textErr)
			} else {
				assert.Equal(t, "nodeproof checkpoint: "+doc.Error+"\n", textErr)
			}
			decoded := doc.StoredChecksum != nil
			assert.Equal(t, decoded, text != "", "text output exists exactly when the file decodes:\n%s", text)
			if !decoded {
				return
			}
			assert.Equal(t, doc.ChecksumValid, *doc.StoredChecksum == *doc.ComputedChecksum)
			assert.Equal(t, doc.ChecksumValid, strings.Contains(text, fmt.Sprintf("checksum: %d (valid)\n", *doc.StoredChecksum)), "text:\n%s", text)
			assert.Equal(t, !doc.ChecksumValid, strings.Contains(text, "(corrupted)\nthe kubelet would refuse this file"), "text:\n%s", text)
			assert.Equal(t, !*doc.Canonical, slices.ContainsFunc(doc.Notes, func(n string) bool { return strings.HasPrefix(n, "the bytes are not canonical") }))
			var notes, violations []string
			for line := range strings.Lines(text) {
				if n, ok := strings.CutPrefix(line, "note: "); ok {
					notes = append(notes, strings.TrimSuffix(n, "\n"))
				}
			}
			_, list, _ := strings.Cut(text, "violations:\n")
			for line := range strings.Lines(list) {
				violations = append(violations, strings.TrimSuffix(strings.TrimPrefix(line, "  - "), "\n"))
			}
			assert.Equal(t, doc.Notes, append([]string{}, notes...))
			assert.Equal(t, doc.Violations, append([]string{}, violations...))
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
	require.NoError(t, os.WriteFile(path, mustEncode(t, d), 0o600))
	code, stdout, stderr := runCheckpointCmd(path)
	assert.Equal(t, 1, code, "exit status; stderr:\n%s", stderr)
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
	assert.Equal(t, want, got, "violations; stdout:\n%s", stdout)
	assert.NotContains(t, stdout, "note:", "a container listed twice is not sharing between containers")
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
		assert.Equal(t, c.code, code, "%q: exit status; stderr %q", c.args, stderr)
		assert.Contains(t, stderr, c.stderr, "%q", c.args)
		assert.Empty(t, stdout, "%q: stdout", c.args)
	}
}

// TestCheckpointFailedWrite: `checkpoint FILE > /dev/full` exits 1 and
// says why, instead of 0 with nothing written.
func TestCheckpointFailedWrite(t *testing.T) {
	var stderr strings.Builder
	status := cli.Execute(cli.NewRoot(NewCommand()), []string{"checkpoint", "testdata/valid.json"}, strings.NewReader(""), failingWriter{}, &stderr)
	assert.Equal(t, cli.StatusFailed, status)
	assert.Contains(t, stderr.String(), "nodeproof checkpoint: writing the output: disk full")
}

// failingWriter fails every write, as a full disk does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
