#!/bin/bash -eu
# ClusterFuzzLite uses the same build as OSS-Fuzz.
exec bash "$SRC/stguard/fuzz/oss-fuzz/build.sh"
