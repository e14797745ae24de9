package checkpointdecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
)

// mutationSample is how many byte positions of an accepted input the
// single-byte-change oracle tries. Trying every position costs one Decode
// per byte, which for files of a few KiB would cut the fuzzer's speed by
// orders of magnitude; core's TestEverySingleByteChangeIsRejected tries every
// position of generated files instead.
const mutationSample = 16

// FuzzCheckpointDecode checks Decode against an oracle on arbitrary input:
//  1. it never panics;
//  2. it accepts exactly what the kubelet loads: encoding/json decodes the
//     input into the kubelet's struct and the checksum over the decoded
//     content equals the stored one (inputs over the size bounds aside);
//  3. whatever it accepts, Encode writes, and Decode reads that back as the
//     same content; Encode gives exactly the input if and only if Read calls
//     the input canonical;
//  4. whatever it accepts stops being accepted when one byte changes, unless
//     the content stays the same (a field name in another letter case, a
//     respelled unknown field): each sampled position is tried with the
//     byte's lowest bit flipped (a digit, letter or quote becomes its
//     neighbour) and with bit 5 flipped (case, '{' to '[', ',' and ':' to
//     control characters). The one other excuse is a genuine FNV-32a
//     collision, which the kubelet's format cannot detect;
//  5. an input over MaxFileBytes is refused before parsing (the fuzzer's
//     inputs are smaller: TestCheckpointDecodeRefusesOversizeUnparsed covers
//     it).
//
// The seed corpus is in testdata/fuzz/FuzzCheckpointDecode.
func FuzzCheckpointDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		// The checks report with t.Fatalf, not testify: linking testify
		// puts its (and net/http's) coverage counters in the test binary,
		// which the engine copies and compares after every execution
		// (fuzz/doc.go has the figures).
		d, err := checkpoint.Decode(in)
		if !overBounds(err) {
			if loads := kubeletLoads(in); loads != (err == nil) {
				t.Fatalf("Decode(%q) error = %v; the kubelet's reading loads it = %v: want it accepted exactly when the kubelet loads it", in, err, loads)
			}
		}
		if err != nil {
			return
		}
		out, err := checkpoint.Encode(d)
		if err != nil {
			t.Fatalf("Decode accepted %q, but Encode refuses its content: %v", in, err)
		}
		again, err := checkpoint.Decode(out)
		if err != nil {
			t.Fatalf("Decode accepted %q; its encoding %q does not decode: %v", in, out, err)
		}
		if !reflect.DeepEqual(d, again) {
			t.Fatalf("Decode accepted %q; its encoding %q decodes as other content:\n got %#v\nwant %#v", in, out, again, d)
		}
		f, err := checkpoint.Read(in)
		if err != nil {
			t.Fatalf("Read(%q): %v", in, err)
		}
		if f.Canonical() != bytes.Equal(out, in) {
			t.Fatalf("Read(%q) calls it canonical = %v; Encode of its content gives %q", in, f.Canonical(), out)
		}
		sum := checkpoint.Checksum(d)
		m := bytes.Clone(in)
		for _, i := range samplePositions(in, mutationSample) {
			for _, flip := range [...]byte{0x01, 0x20} {
				m[i] ^= flip
				// Equal content has an equal checksum, so only other content
				// reaches the comparison, which then fails with both. Other
				// content under the same checksum is a genuine FNV-32a
				// collision, the one excuse.
				if d2, err := checkpoint.Decode(m); err == nil && checkpoint.Checksum(d2) != sum && !reflect.DeepEqual(d, d2) {
					t.Fatalf("Decode accepted %q, byte %d of %q changed, as other content:\n got %#v\nwant %#v", m, i, in, d2, d)
				}
				m[i] ^= flip
			}
		}
	})
}

// kubeletFile is the kubelet's struct {Data checkpointData; Checksum
// checksum.Checksum}: JSON does not spell type names, and checkpoint.Data's
// field names are the kubelet's.
type kubeletFile struct {
	Data     checkpoint.Data
	Checksum uint64
}

// kubeletLoads is the kubelet's reading of a checkpoint
// (UnmarshalCheckpoint, then VerifyChecksum), with checkpoint.Checksum
// standing in for the kubelet's spew-based checksum; package fuzz checks the
// two agree.
func kubeletLoads(in []byte) bool {
	var f kubeletFile
	return json.Unmarshal(in, &f) == nil && checkpoint.Checksum(f.Data) == f.Checksum
}

// overBounds reports whether err is one of nodeproof's bounds, which the
// kubelet does not have.
func overBounds(err error) bool {
	return err != nil && strings.Contains(err.Error(), "over the limit of")
}

// samplePositions returns every index of in if it has at most n bytes, and
// otherwise n indexes spread over it from a start derived from its content,
// so a run is reproducible from the input alone.
func samplePositions(in []byte, n int) []int {
	if len(in) <= n {
		pos := make([]int, len(in))
		for i := range pos {
			pos[i] = i
		}
		return pos
	}
	h := fnv.New32a()
	h.Write(in)
	start, step := int(h.Sum32())%len(in), len(in)/n
	pos := make([]int, n)
	for k := range pos {
		pos[k] = (start + k*step) % len(in)
	}
	return pos
}

// TestCheckpointDecodeRefusesOversizeUnparsed checks oracle 5: a file over
// MaxFileBytes (here a valid file padded with whitespace) is refused by its
// length alone, with next to no allocation.
func TestCheckpointDecodeRefusesOversizeUnparsed(t *testing.T) {
	in := make([]byte, checkpoint.MaxFileBytes+1)
	copy(in, `{"Data":{"PodDeviceEntries":null,"RegisteredDevices":{}},"Checksum":3467439661}`)
	for i := 80; i < len(in); i++ {
		in[i] = ' '
	}
	var err error
	allocs := testing.AllocsPerRun(1, func() { _, err = checkpoint.Decode(in) })
	if want := "checkpoint: file is 67108865 bytes, over the limit of 67108864"; err == nil || err.Error() != want {
		t.Errorf("Decode of an oversized file: error %v, want %q", err, want)
	}
	if allocs > 4 {
		t.Errorf("Decode made %v allocations before refusing an oversized file, want at most 4", allocs)
	}
}

// TestCheckpointSeedCorpus pins what the seed files are meant to exercise:
// the accepted ones decode, canonical or respelled as the kubelet would still
// load them, and the rejected ones fail for their stated reason.
func TestCheckpointSeedCorpus(t *testing.T) {
	const canonical, respelled = "", "respelled"
	for name, want := range map[string]string{
		"spec-example":              canonical,
		"spec-empty":                canonical,
		"generated-1":               canonical,
		"generated-2":               canonical,
		"generated-3":               canonical,
		"legacy-v1-no-entries":      canonical,
		"whitespace":                respelled,
		"html-unescaped":            respelled,
		"trailing-newline":          respelled,
		"keys-reordered":            respelled,
		"letter-case-unknown-field": respelled,
		"truncated":                 "invalid JSON at byte 155: unexpected end of JSON input",
		"wrong-checksum":            "checkpoint is corrupted",
		"corrupt-reindented":        "checkpoint is corrupted",
		"legacy-v1":                 "legacy V1 checkpoint format",
	} {
		t.Run(name, func(t *testing.T) {
			in, err := readSeed("testdata/fuzz/FuzzCheckpointDecode/" + name)
			if err != nil {
				t.Fatal(err)
			}
			_, err = checkpoint.Decode(in)
			if accepted := want == canonical || want == respelled; accepted {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				f, err := checkpoint.Read(in)
				if err != nil {
					t.Fatalf("Read: %v", err)
				}
				if f.Canonical() != (want == canonical) {
					t.Errorf("Read(...).Canonical() = %v, want %v", f.Canonical(), want == canonical)
				}
			} else if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Decode: error %v, want one containing %q", err, want)
			}
			var corrupt *checkpoint.CorruptError
			if errors.As(err, &corrupt) != (want == "checkpoint is corrupted") {
				t.Errorf("Decode error %v is a CorruptError = %v, want %v", err, !(want == "checkpoint is corrupted"), want == "checkpoint is corrupted")
			}
		})
	}
}

// readSeed reads a one-argument corpus file in the "go test fuzz v1" format.
func readSeed(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	header, arg, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	quoted, ok := strings.CutPrefix(arg, "[]byte(")
	quoted, ok2 := strings.CutSuffix(quoted, ")")
	if header != "go test fuzz v1" || !ok || !ok2 {
		return nil, fmt.Errorf("%s: not a go test fuzz v1 file with one []byte", path)
	}
	s, err := strconv.Unquote(quoted)
	return []byte(s), err
}
