#!/bin/bash -eu
# ClusterFuzzLite runs $SRC/build.sh from $SRC/nodeproof: the OSS-Fuzz
# build is the one build, so a target added for one is fuzzed by both.
exec bash -eu "$SRC/nodeproof/fuzz/oss-fuzz/build.sh"
