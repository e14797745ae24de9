package speed

// Target is one fuzz target measured against the empty targets of its
// argument types: the lean one in fuzz/ceiling and the same-binary one in
// its own package.
type Target struct {
	// Package is the module-relative package path, "./fuzz/checkpointdecode".
	Package string
	// Name is the Fuzz function.
	Name string
	// Ceiling is the name of the empty targets with the same argument
	// types, in fuzz/ceiling and in Package (file ceiling_test.go): the
	// engine marshals, mutates and copies each argument, so its cost
	// depends on them.
	Ceiling string
}

// CeilingPackage holds the lean empty targets. They, and the same-binary
// ones in the targets' packages, build only with ceilingTag.
const (
	CeilingPackage = "./fuzz/ceiling"
	ceilingTag     = "fuzzceiling"
)

// DecoderTargets are the targets that feed untrusted bytes to a decoder of
// outside input (docs/commands/fuzzspeed.md says why these and not the
// state-machine targets). Targets of the same argument types are adjacent,
// so one lean ceiling run sits between them.
var DecoderTargets = []Target{
	{"./fuzz/checkpointdecode", "FuzzCheckpointDecode", "FuzzEmptyBytes"},
	{"./fuzz/allocresp", "FuzzAllocRespUnmarshal", "FuzzEmptyBytes"},
	{"./fuzz/manifests", "FuzzProbeSpecs", "FuzzEmptyBytes"},
	{"./fuzz/manifests", "FuzzDecodeManifests", "FuzzEmptyBytesBool"},
	{"./fuzz/crianswers", "FuzzCRIAnswers", "FuzzEmptyByteBytes"},
	{"./fuzz/registration", "FuzzRegisterRequest", "FuzzEmptyThreeStrings"},
	{"./fuzz/httpprobe", "FuzzHTTPProbeResponse", "FuzzEmptyStringsBytes"},
}
