#!/usr/bin/env bash
# Issue 31's floors: bench/bench_worst_case's tables (every adversarial header shape at each of
# SIZES MB, compat and strict, beside a realistic header of the same size in the same run; every
# pickle shape at PICKLE_MB beside a realistic torch.save data.pkl), as Markdown on stdout.
#
#   REF_SRC=<huggingface/safetensors checkout or git dir> bench/run_worst_case.sh
#
# Environment:
#   SIZES="10,100"     header sizes in MB (100 means the reference's cap, 100,000,000 bytes)
#   PICKLE_MB=10       size of each generated pickle shape
#   SECONDS_PER=1      CPU seconds per measurement (a call slower than that is timed once)
#   ONLY=...           only the shapes whose name contains this
#   REF_SRC=...        the reference (bench/reference/build.sh builds it, offline); unset: its
#                      columns say "-" and the reference floor is not checked
#   WORK_DIR=...       builds and generated files (default build/worst-case); the header files
#                      (sparse data sections) are deleted after each row
#   PYTHON=...         interpreter with torch for the realistic data.pkl (default
#                      /usr/bin/python3); without torch, a torch-like pickle generated in process
# Exit status 1 when a row is below its floor (the table marks it BELOW).
set -euo pipefail

src_dir=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK_DIR:-$src_dir/build/worst-case}
python=${PYTHON:-/usr/bin/python3}
mkdir -p "$work"
work=$(cd "$work" && pwd)
log=$work/build.log
(cd "$src_dir" && cmake --preset release >"$log" &&
    cmake --build --preset release -j2 --target bench_worst_case >>"$log") ||
    { echo "run_worst_case.sh: release build failed (see $log)" >&2; exit 2; }
args=(--sizes "${SIZES:-10,100}" --pickle-mb "${PICKLE_MB:-10}" --seconds "${SECONDS_PER:-1}"
      --dir "$work")
[[ -n ${ONLY:-} ]] && args+=(--only "$ONLY")
if [[ -n ${REF_SRC:-} ]]; then
    ref=$("$src_dir/bench/reference/build.sh" "$REF_SRC" "$work/reference" | tail -1)
    args+=(--ref "$ref")
    echo "reference: $(cat "$work/reference/revision")"
fi
if "$python" -c "import torch" 2>/dev/null; then
    [[ -f $work/data.pkl ]] ||
        "$python" "$src_dir/bench/gen_pickle.py" "$work/torch.pt" --tensors 20000 \
            --pickle "$work/data.pkl" >/dev/null
    args+=(--torch-pkl "$work/data.pkl")
fi
echo "stguard: $(git -C "$src_dir" rev-parse --short HEAD), $(date -u +%H:%M) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
exec "$src_dir/build/release/bench/bench_worst_case" "${args[@]}"
