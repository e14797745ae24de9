package manifest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestSplit(t *testing.T) {
	in := "\xef\xbb\xbfa: 1\r\n---\r\nb: 2\n----\nc: 3\n--- # comment\n--- {d: 4}\n  ---\n"
	want := []Document{
		{Line: 1, Text: []byte("a: 1\r\n")},
		{Line: 2, Text: []byte("\nb: 2\n----\nc: 3\n")},
		{Line: 6, Text: []byte(" # comment\n")},
		{Line: 7, Text: []byte(" {d: 4}\n  ---\n")},
	}
	assert.Equal(t, want, Split([]byte(in)))
}

func TestDocumentJSON(t *testing.T) {
	for _, text := range []string{"", "# a comment\n", "null\n", "~\n"} {
		raw, duplicate, err := Document{Line: 1, Text: []byte(text)}.JSON()
		require.NoError(t, err, "%q", text)
		assert.Nil(t, raw, "%q holds nothing", text)
		assert.Nil(t, duplicate, "%q", text)
	}

	_, _, err := Document{Line: 10, Text: []byte("a: 1\nb:\n  c: [\n")}.JSON()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 12", "the line in the stream (the document starts on line 10), not in the document")

	for _, tc := range []struct {
		name, text, path string // path "" for no duplicate
	}{
		{"none", "a: {b: 1, c: [{d: 1}, {d: 2}]}\n", ""},
		{"top level", "a: 1\nb: 2\na: 3\n", "a"},
		{"nested in a list", "a:\n- {b: 1}\n- {b: 1, c: 2, b: 3}\n", "a[1].b"},
		{"the first in document order", "a: [{b: 1, b: 2}]\nc: 1\nc: 2\n", "a[0].b"},
		{"a key that is not a word", "limits: {example.com/gpu: 1, example.com/gpu: 2}\n", "limits[example.com/gpu]"},
		{"keys JSON makes one", "labels: {1: a, '1': b}\n", "labels.1"},
		{"JSON", `{"a": {"b": 1, "b": 2}}`, "a.b"},
		{"equal keys in different mappings", "a: {x: 1}\nb: {x: 1}\n", ""},
		{"a merge that overrides a key", "base: &b {x: 1, y: 2}\nover:\n  <<: *b\n  x: 3\n", ""},
		{"a document that is not a mapping", "[a, a]\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, duplicate, err := Document{Line: 1, Text: []byte(tc.text)}.JSON()
			require.NoError(t, err)
			require.NotNil(t, raw, "the document still converts")
			if tc.path == "" {
				assert.Nil(t, duplicate)
				return
			}
			require.NotNil(t, duplicate)
			assert.Equal(t, tc.path+": duplicate key", duplicate.Error())
		})
	}
}

// plan is a type of the kind DecodeOne reads: nested structs, a list of
// them, a map, an embedded struct and pointers.
type plan struct {
	Shards int               `json:"shards"`
	Sim    *planSim          `json:"sim,omitempty"`
	Steps  []planStep        `json:"steps"`
	Labels map[string]string `json:"labels"`
}

type planSim struct {
	planCommon
	Hours float64 `json:"hours"`
}

type planCommon struct {
	Seeds string `json:"seeds"`
}

type planStep struct {
	Name   string `json:"name"`
	Checks *int32 `json:"checks"`
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name, json, want string
	}{
		{"unknown field", `{"shards": 1, "shardz": 2}`, "shardz: unknown field"},
		{"unknown field in a list", `{"steps": [{"name": "a"}, {"name": "b", "chekcs": 1}]}`, "steps[1].chekcs: unknown field"},
		{"field names are case-sensitive", `{"Shards": 1}`, "Shards: unknown field"},
		{"string for an integer", `{"shards": "two"}`, "shards: must be an integer (int), not a string"},
		{"fraction for an integer in a list", `{"steps": [{"name": "a"}, {"name": "b", "checks": 1.5}]}`,
			"steps[1].checks: must be an integer (int32), not the number 1.5"},
		{"list for a struct", `{"sim": [1]}`, "sim: must be a mapping, not a list"},
		{"mapping for a list", `{"steps": {"name": "a"}}`, "steps: must be a list, not a mapping"},
		{"in a map", `{"labels": {"a": "x", "b": [1]}}`, "labels.b: must be a string, not a list"},
		{"in an embedded struct", `{"sim": {"hours": 1, "seeds": 4}}`, "sim.seeds: must be a string, not a number"},
		{"boolean for a number", `{"sim": {"hours": true}}`, "sim.hours: must be a number, not a boolean"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p plan
			err := Decode([]byte(tc.json), &p)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.want, err.Error())
		})
	}
	var p plan
	require.NoError(t, Decode([]byte(`{"shards": 2, "sim": {"seeds": "1..4", "hours": 1.5}, "steps": [{"name": "a", "checks": 3}], "labels": {"a": "b"}}`), &p))
	assert.Equal(t, 2, p.Shards)
	assert.Equal(t, "1..4", p.Sim.Seeds, "through the embedded struct")
	assert.Equal(t, int32(3), *p.Steps[0].Checks)
}

// TestDecodeTypesOwnDecoding: a value that a type's own UnmarshalJSON
// refuses (a port, int or string; a time) is named by its path too.
func TestDecodeTypesOwnDecoding(t *testing.T) {
	for _, tc := range []struct {
		name, json, want string
	}{
		{"port", `{"spec": {"containers": [{"name": "a"}, {"name": "b", "livenessProbe": {"tcpSocket": {"port": {"a": 1}}}}]}}`,
			"spec.containers[1].livenessProbe.tcpSocket.port: cannot be a mapping"},
		{"time", `{"metadata": {"deletionTimestamp": "yesterday"}}`,
			`metadata.deletionTimestamp: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`},
		{"quantity", `{"spec": {"volumes": [{"name": "v", "emptyDir": {"sizeLimit": "lots"}}]}}`,
			"spec.volumes[0].emptyDir.sizeLimit: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
		{"through an embedded struct", `{"spec": {"containers": [{"name": "a", "readinessProbe": {"httpGet": {"port": 80}, "periodSeconds": "often"}}]}}`,
			"spec.containers[0].readinessProbe.periodSeconds: must be an integer (int32), not a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p corev1.Pod
			err := Decode([]byte(tc.json), &p)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

func TestDecodeOne(t *testing.T) {
	var p plan
	require.NoError(t, DecodeOne([]byte("# the plan\n---\nshards: 2\n---\n# nothing more\n"), &p))
	assert.Equal(t, 2, p.Shards)

	for _, tc := range []struct {
		name, text, want string
	}{
		{"a second document", "shards: 1\n---\n# a comment\n---\nshards: 2\n", "document 2 (line 4): the file must hold one document"},
		{"duplicate key", "shards: 1\nsim: {hours: 1, hours: 2}\n", "sim.hours: duplicate key"},
		{"unknown field", "shards: 1\nsim: {hourz: 1}\n", "sim.hourz: unknown field"},
		{"no document", "# nothing\n", "holds no document"},
		{"YAML syntax", "shards: 1\nsim: [\n", "yaml: line 2: did not find expected node content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p plan
			err := DecodeOne([]byte(tc.text), &p)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

func TestKeyPath(t *testing.T) {
	assert.Equal(t, "cpu", KeyPath("", "cpu"))
	assert.Equal(t, "limits.cpu", KeyPath("limits", "cpu"))
	assert.Equal(t, "limits[example.com/gpu]", KeyPath("limits", "example.com/gpu"))
	assert.Equal(t, "spec.x: bad", (&FieldError{Path: "spec.x", Err: errors.New("bad")}).Error())
	assert.Equal(t, "bad", (&FieldError{Err: errors.New("bad")}).Error())
}
