package check

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	gofuzzbuild "github.com/AdamKorcz/go-118-fuzz-build/testing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/fuzz/libfuzzer"
)

var paramTypes = map[string]reflect.Type{
	"[]uint8": reflect.TypeFor[[]byte](), "string": reflect.TypeFor[string](), "bool": reflect.TypeFor[bool](),
	"int": reflect.TypeFor[int](), "int8": reflect.TypeFor[int8](), "int16": reflect.TypeFor[int16](),
	"int32": reflect.TypeFor[int32](), "int64": reflect.TypeFor[int64](), "uint": reflect.TypeFor[uint](),
	"uint8": reflect.TypeFor[uint8](), "uint16": reflect.TypeFor[uint16](), "uint32": reflect.TypeFor[uint32](),
	"uint64": reflect.TypeFor[uint64](), "float32": reflect.TypeFor[float32](), "float64": reflect.TypeFor[float64](),
}

// decodeWithGo118FuzzBuild feeds input to go-118-fuzz-build's own F.Fuzz
// with a harness of the given argument types, as the libFuzzer binary does,
// and returns the arguments the harness received (nil if it never ran).
func decodeWithGo118FuzzBuild(t *testing.T, input []byte, params []string) []reflect.Value {
	in := []reflect.Type{reflect.TypeFor[*gofuzzbuild.T]()}
	for _, p := range params {
		typ, ok := paramTypes[p]
		require.True(t, ok, "no reflect type for %s", p)
		in = append(in, typ)
	}
	var got []reflect.Value
	harness := reflect.MakeFunc(reflect.FuncOf(in, nil, false), func(args []reflect.Value) []reflect.Value {
		got = args[1:]
		return nil
	})
	f := &gofuzzbuild.F{Data: input, T: gofuzzbuild.NewT()}
	f.Fuzz(harness.Interface())
	return got
}

// requireSameValues compares what the harness received with the corpus
// file's values; floats by their bits, so NaN payloads count.
func requireSameValues(t *testing.T, want []libfuzzer.Value, got []reflect.Value) {
	t.Helper()
	require.Len(t, got, len(want), "the harness did not run: go-fuzz-headers could not decode the input")
	for i, w := range want {
		g := got[i]
		switch g.Kind() {
		case reflect.Slice:
			assert.Equal(t, w.V, g.Bytes(), "argument %d", i+1)
		case reflect.String:
			assert.Equal(t, w.V, g.String(), "argument %d", i+1)
		case reflect.Bool:
			assert.Equal(t, w.V, g.Bool(), "argument %d", i+1)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			assert.Equal(t, w.V, g.Int(), "argument %d", i+1)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			assert.Equal(t, w.V, g.Uint(), "argument %d", i+1)
		case reflect.Float32:
			assert.Equal(t, math.Float32bits(float32(w.V.(float64))), math.Float32bits(float32(g.Float())), "argument %d", i+1)
		case reflect.Float64:
			assert.Equal(t, math.Float64bits(w.V.(float64)), math.Float64bits(g.Float()), "argument %d", i+1)
		default:
			t.Fatalf("argument %d: kind %s", i+1, g.Kind())
		}
	}
}

// TestEncodedInputsDecodeToTheCorpusValues: the bytes ossfuzzprep writes
// for a Go corpus file make go-118-fuzz-build's harness receive exactly
// that file's values, for every type it generates and the edge cases of
// go-fuzz-headers (an empty []byte or string last, a []byte whose length
// equals or exceeds what follows).
func TestEncodedInputsDecodeToTheCorpusValues(t *testing.T) {
	cases := map[string]struct {
		file   string
		params []string
	}{
		"every type": {"go test fuzz v1\nstring(\"a\\x00b\")\n[]byte(\"\\xff\\x00\")\nbool(true)\nbool(false)\nbyte('a')\nint8(-3)\nint16(-300)\nuint16(65000)\nint32(-70000)\nrune('é')\nuint32(4000000000)\nint64(-1099511627776)\nuint64(9223372036854775808)\nint(-5)\nuint(7)\nfloat32(1.5)\nfloat64(-2.25)\nmath.Float64frombits(0x7ff8000000000001)\n",
			[]string{"string", "[]uint8", "bool", "bool", "uint8", "int8", "int16", "uint16", "int32", "int32", "uint32", "int64", "uint64", "int", "uint", "float32", "float64", "float64"}},
		"empty bytes last":  {"go test fuzz v1\nstring(\"x\")\n[]byte(\"\")\n", []string{"string", "[]uint8"}},
		"empty string last": {"go test fuzz v1\n[]byte(\"abc\")\nstring(\"\")\n", []string{"[]uint8", "string"}},
		"empty bytes first": {"go test fuzz v1\n[]byte(\"\")\nbool(true)\nbool(false)\n", []string{"[]uint8", "bool", "bool"}},
		// 12 bytes follow the empty slice: go-fuzz-headers' 30 for a zero
		// length would take 30 % 12 = 6 of them.
		"empty bytes, string":  {"go test fuzz v1\n[]byte(\"\")\nstring(\"abcdefg\")\n", []string{"[]uint8", "string"}},
		"only bytes":           {"go test fuzz v1\n[]byte(\"0123456789012345678901234567890123456789\")\n", []string{"[]uint8"}},
		"three strings, empty": {"go test fuzz v1\nstring(\"\")\nstring(\"\")\nstring(\"\")\n", []string{"string", "string", "string"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			values, err := libfuzzer.ParseGoCorpusFile([]byte(c.file))
			require.NoError(t, err)
			input, err := libfuzzer.EncodeInput(values, c.params)
			require.NoError(t, err)
			requireSameValues(t, values, decodeWithGo118FuzzBuild(t, input, c.params))
		})
	}
}

// TestEveryTreeSeedDecodes round-trips every seed file of every target
// go-118-fuzz-build can run, as found in the tree now.
func TestEveryTreeSeedDecodes(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	targets, err := libfuzzer.Discover(root)
	require.NoError(t, err)
	seeds := 0
	for _, target := range targets {
		if target.Unsupported != "" {
			continue
		}
		dir := filepath.Join(root, target.SeedDir())
		entries, err := os.ReadDir(dir)
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			values, err := libfuzzer.ParseGoCorpusFile(data)
			require.NoError(t, err, "%s/%s", dir, e.Name())
			input, err := libfuzzer.EncodeInput(values, target.Params)
			require.NoError(t, err, "%s/%s", dir, e.Name())
			requireSameValues(t, values, decodeWithGo118FuzzBuild(t, input, target.Params))
			seeds++
		}
	}
	assert.Greater(t, seeds, 0, "no seed files found")
	t.Logf("%d seed files decode to their values", seeds)
}
