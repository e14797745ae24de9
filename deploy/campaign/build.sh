#!/bin/sh
# build.sh OUT [PACKAGE...]: the binaries of the campaign image, built from the
# root of a nodeproof checkout. The Dockerfile runs it, and so does the test
# that runs a small campaign (cmd/nodeproof TestCampaignJobEveryIndex), so the
# two cannot drift apart.
#
#   OUT/nodeproof                       static (CGO_ENABLED=0), the entrypoint
#   OUT/fuzz/<dir>/<name>.test          each fuzz package's test binary, at the
#   OUT/fuzz/<dir>/testdata/fuzz/...    package's directory, with its seed corpus
#
# The test binaries are built with `go test -c -fuzz=.`: without -fuzz the
# compiler leaves out the coverage instrumentation, and the fuzzer would run
# blind. PACKAGEs (default ./...) are searched for Fuzz functions the way
# `make fuzz` does, so a new target joins without editing this script.
set -eu
out=${1:?usage: build.sh OUT [PACKAGE...]}
shift
[ $# -gt 0 ] || set -- ./...
export CGO_ENABLED=0
go=${GO:-go}
module=$($go list -m)
$go build -trimpath -o "$out/nodeproof" ./cmd/nodeproof
# `go test -list` names a package's targets, then prints the package's "ok" line.
$go test -list '^Fuzz' "$@" | awk '/^Fuzz/ { n++; next } /^ok/ { if (n) print $2; n = 0 }' |
while read -r pkg; do
	dir=${pkg#"$module"/}
	$go test -c -fuzz=. -trimpath -o "$out/fuzz/$dir/$(basename "$dir").test" "./$dir"
	if [ -d "$dir/testdata/fuzz" ]; then
		mkdir -p "$out/fuzz/$dir/testdata"
		cp -R "$dir/testdata/fuzz" "$out/fuzz/$dir/testdata/"
	fi
done
