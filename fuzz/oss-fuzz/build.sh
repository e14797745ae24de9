#!/bin/bash -eu
# OSS-Fuzz and ClusterFuzzLite build of nodeproof's native Go fuzz targets.
# It runs in the base-builder-go image from the module's root, with $OUT,
# $WORK and compile_native_go_fuzzer from the image; `make oss-fuzz` runs it
# here, on a scratch copy of the tree, with a local compile_native_go_fuzzer.
#
# Every target is found by ossfuzzprep (a new Fuzz function joins without
# editing this file). A target go-118-fuzz-build cannot run is listed with
# the reason and not built. Each built target gets $OUT/<name>_seed_corpus.zip
# made from its testdata/fuzz/<Func> files, converted to the raw bytes the
# libFuzzer harness decodes (OSS-Fuzz ignores f.Add).
set -euo pipefail

# The version of go-118-fuzz-build's testing package the rewritten harnesses
# import; it matches the go-118-fuzz-build binary the image installs (its
# main branch) and GO118FUZZBUILD_VERSION in the Makefile.
go118fuzzbuild_version=v0.0.0-20250520111509-a70c2aa677fa

# compile_native_go_fuzzer rewrites the harness to import this package, so
# the module must require it. The build changes go.mod in its copy only.
go get "github.com/AdamKorcz/go-118-fuzz-build/testing@${go118fuzzbuild_version}"

prep="$WORK/ossfuzzprep"
go build -o "$prep" ./cmd/ossfuzzprep

built=0
unsupported=0
while IFS=$'\t' read -r name package function reason; do
	if [ -n "$reason" ]; then
		echo "build.sh: $name ($package): not built: $reason"
		unsupported=$((unsupported + 1))
		continue
	fi
	echo "build.sh: $name ($package): building"
	compile_native_go_fuzzer "$package" "$function" "$name"
	# compile_native_go_fuzzer only prints a line and exits 0 when it does
	# not recognise the function: a target it skipped is an error here.
	if [ ! -x "$OUT/$name" ]; then
		echo "build.sh: $name: compile_native_go_fuzzer left no $OUT/$name" >&2
		exit 1
	fi
	built=$((built + 1))
done < <("$prep" targets)

"$prep" seeds --out "$OUT"
echo "build.sh: $built targets built, $unsupported not built (reasons above)"
if [ "$built" -eq 0 ]; then
	echo "build.sh: no target built" >&2
	exit 1
fi
