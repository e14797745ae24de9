package upstream

import (
	"fmt"
	"slices"
	"strings"
)

// Modelled is the release nodeproof's core reproduces, the conformance
// module's go.mod pins, and every finding was confirmed on.
const Modelled = "v1.36.3"

// Release is one upstream release the conformance module is built against.
type Release struct {
	// Version is k8s.io/kubernetes's version: "v1.37.2".
	Version string
	// ModFile is the module file, relative to the conformance module, the
	// go command reads instead of go.mod; "" for go.mod (Modelled).
	ModFile string
	// Tag is the build tag that selects the release's API shims; "" for
	// Modelled.
	Tag string
	// Toolchain, when set, is the GOTOOLCHAIN the release's packages need.
	Toolchain string
}

// Releases are the releases the matrix covers, oldest first.
var Releases = []Release{
	{Version: "v1.35.4", ModFile: "releases/v1.35.4.mod", Tag: "kubelet1.35"},
	{Version: Modelled},
	{Version: "v1.37.2", ModFile: "releases/v1.37.2.mod", Tag: "kubelet1.37"},
	{Version: "v1.38.0-beta.0", ModFile: "releases/v1.38.0-beta.0.mod", Tag: "kubelet1.38", Toolchain: "go1.27.3"},
}

// Find returns the release of that version.
func Find(version string) (Release, error) {
	i := slices.IndexFunc(Releases, func(r Release) bool { return r.Version == version })
	if i < 0 {
		return Release{}, fmt.Errorf("release %q: not one the matrix covers (%s)", version, strings.Join(Versions(), ", "))
	}
	return Releases[i], nil
}

// Versions are the covered releases' versions, oldest first.
func Versions() []string {
	var vs []string
	for _, r := range Releases {
		vs = append(vs, r.Version)
	}
	return vs
}

// BuildFlags are the go command's flags that select the release.
func (r Release) BuildFlags() []string {
	var flags []string
	if r.ModFile != "" {
		flags = append(flags, "-modfile="+r.ModFile)
	}
	if r.Tag != "" {
		flags = append(flags, "-tags="+r.Tag)
	}
	return flags
}

// Replay is the command line, from the repository's root, that runs test
// (a test, or a subtest "TestX/name") against the release again.
func (r Release) Replay(test string) string {
	var b strings.Builder
	b.WriteString("cd conformance && ")
	if r.Toolchain != "" {
		b.WriteString("GOTOOLCHAIN=" + r.Toolchain + " ")
	}
	b.WriteString("go test -count=1 ")
	for _, f := range r.BuildFlags() {
		b.WriteString(f + " ")
	}
	// A subtest's name, "TestX/sub", is matched level by level.
	b.WriteString("-run '^" + strings.ReplaceAll(test, "/", "$/^") + "$' .")
	return b.String()
}
