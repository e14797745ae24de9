package libfuzzer

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseGoCorpusFile(t *testing.T) {
	values, err := ParseGoCorpusFile([]byte("go test fuzz v1\n[]byte(\"a\\x00\")\nstring(\"é\")\nbool(false)\nbyte('\\xff')\nrune('é')\nint8(-128)\nuint16(65535)\nfloat32(-0.5)\nmath.Float32frombits(0x7fc00001)\n"))
	require.NoError(t, err)
	assert.Equal(t, []Value{
		{"[]uint8", []byte("a\x00")}, {"string", "é"}, {"bool", false}, {"uint8", uint64(0xff)},
		{"int32", int64('é')}, {"int8", int64(-128)}, {"uint16", uint64(65535)}, {"float32", -0.5},
	}, values[:8])
	assert.Equal(t, "float32", values[8].Type)
}

func TestParseGoCorpusFileRefusesWhatGoTestWould(t *testing.T) {
	for name, c := range map[string]struct{ file, want string }{
		"no header":     {"string(\"a\")\n", "line 1"},
		"not a literal": {"go test fuzz v1\nstring(x)\n", "line 2"},
		"overflow":      {"go test fuzz v1\nint8(128)\n", "overflows int8"},
		"unsigned sign": {"go test fuzz v1\nuint(-1)\n", "line 2"},
		"unknown type":  {"go test fuzz v1\ncomplex128(1)\n", "unknown type"},
		"bad bool":      {"go test fuzz v1\nbool(1)\n", "bool of something"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseGoCorpusFile([]byte(c.file))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestEncodeInputBytes(t *testing.T) {
	input, err := EncodeInput([]Value{{"string", "ab"}, {"bool", true}, {"[]uint8", []byte("xyz")}, {"int64", int64(-2)}}, []string{"string", "bool", "[]uint8", "int64"})
	require.NoError(t, err)
	assert.Equal(t, []byte{
		0, 0, 0, 2, 'a', 'b', // string: length, bytes
		0,                         // bool: even is true
		0, 0, 0, 3, 'x', 'y', 'z', // []byte: length, bytes
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 1, // int64: big endian, odd byte for big endian
		0, // the end
	}, input)
	// An empty []byte is twice what follows its length, which
	// go-fuzz-headers reduces to zero.
	input, err = EncodeInput([]Value{{"[]uint8", []byte{}}, {"bool", false}}, []string{"[]uint8", "bool"})
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 0, 0, 4, 1, 0}, input)
}

func TestEncodeInputRefusesAMismatch(t *testing.T) {
	_, err := EncodeInput([]Value{{"string", "a"}}, []string{"[]uint8"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "argument 1: a string for a harness argument of type []uint8")
	_, err = EncodeInput([]Value{{"string", "a"}}, []string{"string", "bool"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "1 values for a harness of 2 arguments")
}

func TestWriteSeedZip(t *testing.T) {
	dir := t.TempDir()
	seeds := filepath.Join(dir, "FuzzX")
	require.NoError(t, os.MkdirAll(seeds, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(seeds, "b"), []byte("go test fuzz v1\nstring(\"b\")\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(seeds, "a"), []byte("go test fuzz v1\nstring(\"a\")\n"), 0o644))
	out := filepath.Join(dir, "x.zip")
	n, err := WriteSeedZip(seeds, []string{"string"}, out)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	zr, err := zip.OpenReader(out)
	require.NoError(t, err)
	defer zr.Close()
	got := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		data, err := io.ReadAll(rc)
		require.NoError(t, err)
		rc.Close()
		got[f.Name] = data
	}
	assert.Equal(t, map[string][]byte{"a": {0, 0, 0, 1, 'a', 0}, "b": {0, 0, 0, 1, 'b', 0}}, got)

	n, err = WriteSeedZip(filepath.Join(dir, "missing"), []string{"string"}, filepath.Join(dir, "none.zip"))
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.NoFileExists(t, filepath.Join(dir, "none.zip"))

	require.NoError(t, os.WriteFile(filepath.Join(seeds, "c"), []byte("go test fuzz v1\nbool(true)\n"), 0o644))
	_, err = WriteSeedZip(seeds, []string{"string"}, out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(seeds, "c"))
}
