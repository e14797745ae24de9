package registration

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkRegisterRequestSeeds times FuzzRegisterRequest's body over its
// seed corpus, one op per seed, to find and measure what the body costs
// beside the engine (docs/commands/fuzzspeed.md). It is in a file of its
// own because go-118-fuzz-build's testing package, which OSS-Fuzz compiles
// the harness's file against, has no testing.B.
func BenchmarkRegisterRequestSeeds(b *testing.B) {
	paths, err := filepath.Glob("testdata/fuzz/FuzzRegisterRequest/*")
	if err != nil || len(paths) == 0 {
		b.Fatalf("seed corpus: %v, %d files", err, len(paths))
	}
	var seeds [][3]string
	for _, path := range paths {
		content, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(content)), "\n")
		if len(lines) != 4 || lines[0] != "go test fuzz v1" {
			b.Fatalf("%s: not a go test fuzz v1 file of three strings", path)
		}
		var seed [3]string
		for i, line := range lines[1:] {
			quoted, ok := strings.CutPrefix(line, "string(")
			quoted, ok2 := strings.CutSuffix(quoted, ")")
			if seed[i], err = strconv.Unquote(quoted); !ok || !ok2 || err != nil {
				b.Fatalf("%s: line %d is not a string(...): %q", path, i+2, line)
			}
		}
		seeds = append(seeds, seed)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		s := seeds[i%len(seeds)]
		checkRegisterRequest(b.Fatalf, s[0], s[1], s[2])
	}
}
