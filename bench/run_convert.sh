#!/usr/bin/env bash
# Conversion benchmark (docs/convert.md, docs/performance.md): `stguard convert` on a ~1 GiB
# torch.save checkpoint (a state_dict of TENSORS float32 tensors of TOTAL bytes together, plus a
# transposed view and a tied alias so that the copy paths and shared storages are exercised)
# against the usual way, torch.load + a Python writer of the same bytes
# (bench/convert_baseline.py), in the same run. Prints MB/s of tensor data (10^6 bytes) and peak
# RSS (the child's maxrss) for both, and checks that the two outputs are identical.
#
# Environment:
#   BUILD_DIR=...   configured build tree to use instead of the release preset
#   DATA_DIR=...    generated files (default build/bench-data); the checkpoint is deleted after
#                   the run unless KEEP_BIG=1
#   REPEAT=N        timed runs per measurement (default 3)
#   TOTAL=BYTES     tensor data in the checkpoint (default 1 GiB)
#   TENSORS=N       number of tensors (default 16)
#   PYTHON=...      Debian's interpreter with python3-torch (default /usr/bin/python3)
set -euo pipefail

src_dir=$(cd "$(dirname "$0")/.." && pwd)
data_dir=${DATA_DIR:-$src_dir/build/bench-data}
repeat=${REPEAT:-3}
total=${TOTAL:-$((1024 * 1024 * 1024))}
tensors=${TENSORS:-16}
python=${PYTHON:-/usr/bin/python3}
timer=("$python" "$src_dir/bench/time_cmd.py")

if [[ -z "${BUILD_DIR:-}" ]]; then
    (cd "$src_dir" && cmake --preset release >/dev/null &&
        cmake --build --preset release -j2 --target stguard_cli >/dev/null)
    build_dir=$src_dir/build/release
else
    build_dir=$BUILD_DIR
    cmake --build "$build_dir" -j2 --target stguard_cli >/dev/null
fi
cli=$build_dir/stguard
mkdir -p "$data_dir"
ckpt=$data_dir/convert-big.pt
out_c=$data_dir/convert-big.stguard.safetensors
out_py=$data_dir/convert-big.python.safetensors
cleanup() {
    rm -f "$out_c" "$out_py"
    [[ ${KEEP_BIG:-0} == 1 ]] || rm -f "$ckpt"
}
trap cleanup EXIT

"$python" - "$ckpt" "$total" "$tensors" <<'PY'
import sys, torch
path, total, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
per = total // n // 4
side = int(per ** 0.5)
sd = {}
g = torch.Generator().manual_seed(0)
for i in range(n):
    sd["layer%02d.weight" % i] = torch.randn(side, per // side, generator=g)
sd["transposed"] = torch.randn(256, 512, generator=g).t()
sd["tied"] = sd["layer00.weight"]
torch.save(sd, path)
PY
data_bytes=$("$python" -c "
import torch,sys; sd=torch.load(sys.argv[1], weights_only=True)
print(sum(t.numel()*t.element_size() for t in sd.values()))" "$ckpt")
echo "checkpoint: $(stat -c %s "$ckpt") bytes, tensor data written: $data_bytes bytes"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"

echo "stguard convert (scan, evaluate, copy, validate, rename):"
"${timer[@]}" "$repeat" --bytes "$data_bytes" --label stguard -- \
    "$cli" convert --force "$ckpt" "$out_c"
echo "torch.load + Python writer:"
"${timer[@]}" "$repeat" --bytes "$data_bytes" --label python -- \
    "$python" "$src_dir/bench/convert_baseline.py" "$ckpt" "$out_py"
if cmp -s "$out_c" "$out_py"; then
    echo "outputs: identical ($(stat -c %s "$out_c") bytes)"
else
    echo "outputs: DIFFER"
    exit 1
fi
