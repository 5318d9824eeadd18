#!/usr/bin/env bash
# Speed benchmark of issue 17, side by side with its baselines in one run, printed as the
# Markdown tables of docs/performance.md ("Speed"):
#   1. in-process header validation (bench_header: stg_validate_buffer, strict, all checks) in
#      MB/s of header bytes by process CPU time, best of REPEAT processes, for realistic headers
#      of 291 (Llama-3-8B-like), 995 (Mixtral-like), 10k, 100k and 900k tensors and for headers
#      of tiny tensors (shape [1,1]), and the first call of a process alone (fresh pages for
#      every large buffer); beside the same program built from the commit BASE,
#      simdjson's On-Demand walk of the same fields (bench/simdjson_baseline.cpp, any key order
#      and writer's order) and Python's json.loads (bench/json_baseline.py);
#   2. the CLI as a process (`stguard scan --no-digest`): CPU time per file, against BASE's CLI,
#      an empty process and, for the 900k header, a Python process running json.loads;
#   3. many small files: `stguard scan -j2` over SMALL_FILES small safetensors and pickle files,
#      files/s beside `sha256sum` over the same tree;
#   4. the complexity suite (bench/run_complexity.sh: growth exponents, fails past its bound),
#      unless COMPLEXITY=0.
#
#   bench/run_speed.sh
#
# Environment:
#   BASE=<commit>    earlier commit to compare with (default 95eb53b, the tree before issue 17's
#                    changes); built from `git archive` in WORK_DIR, never in the source tree
#   REPEAT=N         processes per measurement (default 3); the table shows the best
#   SECONDS_PER=S    time budget of one in-process measurement (default 1)
#   SIZES, TINY      tensor counts of the realistic and the tiny-tensor headers
#   SMALL_FILES=N    files in the many-small-files tree (default 10000; 0 skips part 3)
#   PARTS="..."      which of header cli small complexity to run (default all four)
#   COMPLEXITY=0     skip part 4 (as PARTS without complexity)
#   WORK_DIR=...     builds and generated files (default build/speed; kept between runs)
#   PYTHON=...       interpreter (default /usr/bin/python3)
#   REF_SRC=...      the reference implementation (huggingface/safetensors: a checkout or its
#                    git directory; REF_COMMIT picks the commit, default HEAD): built by
#                    bench/reference/build.sh (cargo, offline, Debian's Rust crates) and
#                    measured beside stguard: SafeTensors::read_metadata in process (part 1)
#                    and a process mapping each file and deserializing it (part 2). Unset: its
#                    columns say "-".
# Needs: the release toolchain, g++ and Debian's libsimdjson-dev (tools/setup-debian.sh); for
# REF_SRC also cargo and the crates bench/reference/build.sh names.
set -euo pipefail

src_dir=$(cd "$(dirname "$0")/.." && pwd)
base=${BASE:-95eb53b}
repeat=${REPEAT:-3}
seconds=${SECONDS_PER:-1}
sizes=${SIZES:-"291 995 10000 100000 900000"}
tiny=${TINY:-"100000 900000"}
small_files=${SMALL_FILES:-10000}
work=${WORK_DIR:-$src_dir/build/speed}
python=${PYTHON:-/usr/bin/python3}
parts=" ${PARTS:-header cli small complexity} "
[[ ${COMPLEXITY:-1} == 0 ]] && parts=${parts/ complexity / }
mkdir -p "$work"
work=$(cd "$work" && pwd)

# ---- builds: this tree (release preset), BASE (same preset, its own sources), simdjson walk
log=$work/build.log
: >"$log"
(cd "$src_dir" && cmake --preset release >>"$log" &&
    cmake --build --preset release -j2 --target bench_header stguard_cli >>"$log") ||
    { echo "run_speed.sh: release build failed (see $log)" >&2; exit 2; }
cur_bench=$src_dir/build/release/bench/bench_header
cur_cli=$src_dir/build/release/stguard
base_rev=$(git -C "$src_dir" rev-parse --short "$base")
base_src=$work/base-$base_rev
if [[ ! -f $base_src/build/bench/bench_header ]]; then
    rm -rf "$base_src"
    mkdir -p "$base_src"
    git -C "$src_dir" archive "$base_rev" | tar -x -C "$base_src"
    cmake -S "$base_src" -B "$base_src/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc \
        -DSTG_WERROR=OFF >>"$log" &&
        cmake --build "$base_src/build" -j2 --target bench_header stguard_cli >>"$log" ||
        { echo "run_speed.sh: build of $base_rev failed (see $log)" >&2; exit 2; }
fi
base_bench=$base_src/build/bench/bench_header
base_cli=$base_src/build/stguard
simd=$work/simdjson_baseline
if [[ ! -x $simd || $src_dir/bench/simdjson_baseline.cpp -nt $simd ]]; then
    g++ -O3 -std=c++17 -o "$simd" "$src_dir/bench/simdjson_baseline.cpp" -lsimdjson ||
        { echo "run_speed.sh: needs g++ and libsimdjson-dev" >&2; exit 2; }
fi

ref_bin=""
if [[ -n ${REF_SRC:-} ]]; then
    ref_bin=$("$src_dir/bench/reference/build.sh" "$REF_SRC" "$work/reference" 2>>"$log") ||
        { echo "run_speed.sh: the reference did not build (see $log)" >&2; exit 2; }
fi

# ---- inputs
gen() { # name, count, extra flags
    local file=$work/$1.safetensors
    if [[ ! -f $file || $src_dir/bench/gen_header.py -nt $file ]]; then
        "$python" "$src_dir/bench/gen_header.py" "$2" "$file" "${@:3}" >&2
    fi
}
inputs=()
for n in $sizes; do gen "hf_$n" "$n"; inputs+=("hf_$n"); done
for n in $tiny; do gen "tiny_$n" "$n" --tiny; inputs+=("tiny_$n"); done
inputs_header=("${inputs[@]}")

results=$work/results.txt
: >"$results"
kv() { tr ' ' '\n' | sed -n "s/^$1=//p" | head -1; }

# ---- 1. in-process header validation, all tools interleaved per input
[[ $parts == *" header "* ]] || inputs_header=()
for name in "${inputs_header[@]}"; do
    file=$work/$name.safetensors
    for ((r = 0; r < repeat; r++)); do
        for tool in stguard base simd_any simd_order json reference; do
            case $tool in
            reference)
                [[ -n $ref_bin ]] || continue
                out=$("$ref_bin" metadata "$file" --seconds "$seconds")
                ;;
            stguard) out=$("$cur_bench" "$file" --seconds "$seconds") ;;
            base) out=$("$base_bench" "$file" --seconds "$seconds") ;;
            simd_any) out=$("$simd" "$file" any --seconds "$seconds") ;;
            simd_order) out=$("$simd" "$file" order --seconds "$seconds") ;;
            json) out=$("$python" "$src_dir/bench/json_baseline.py" "$file" --seconds "$seconds") ;;
            esac
            echo "part=header input=$name tool=$tool $out" >>"$results"
        done
    done
done

# ---- 2. the CLI as a process: CPU time per file (child user + system, best of the runs)
timer=("$python" "$src_dir/bench/time_cmd.py")
cli_inputs=()
for n in 291 995 900000; do [[ " ${inputs[*]} " == *" hf_$n "* ]] && cli_inputs+=("hf_$n"); done
[[ $parts == *" cli "* ]] || cli_inputs=()
# Rounds of a few runs per tool, the tools taking turns: a busy spell of the machine then
# falls on every tool alike; the table keeps each tool's best.
for ((round = 0; round < repeat && ${#cli_inputs[@]} > 0; round++)); do
    echo "part=cli input=empty tool=true $("${timer[@]}" 7 -- /bin/true)" >>"$results"
    for name in "${cli_inputs[@]}"; do
        file=$work/$name.safetensors
        r=7
        [[ $name == hf_900000 ]] && r=1
        echo "part=cli input=$name tool=stguard $("${timer[@]}" "$r" -- "$cur_cli" scan --no-digest "$file")" >>"$results"
        echo "part=cli input=$name tool=base $("${timer[@]}" "$r" -- "$base_cli" scan --no-digest "$file")" >>"$results"
        if [[ -n $ref_bin ]]; then
            echo "part=cli input=$name tool=reference $("${timer[@]}" "$r" -- "$ref_bin" load "$file")" >>"$results"
        fi
        if [[ $name == hf_900000 ]]; then
            echo "part=cli input=$name tool=json $("${timer[@]}" "$r" -- "$python" -c \
                'import json,struct,sys; f=open(sys.argv[1],"rb"); n=struct.unpack("<Q",f.read(8))[0]; json.loads(f.read(n))' \
                "$file")" >>"$results"
        fi
    done
done

# ---- 3. many small files
if ((small_files > 0)) && [[ $parts == *" small "* ]]; then
    tree=$work/small-$small_files
    if [[ ! -f $tree/.done ]]; then
        rm -rf "$tree"
        "$python" - "$tree" "$small_files" <<'EOF'
import json, os, pickle, struct, sys
root, count = sys.argv[1], int(sys.argv[2])
for i in range(count):
    d = os.path.join(root, "%03d" % (i // 100))
    os.makedirs(d, exist_ok=True)
    if i % 2 == 0:  # a small safetensors file: 8 tensors of 64 F32 values
        meta, off = {"__metadata__": {"format": "pt"}}, 0
        for t in range(8):
            meta["layer.%d.weight" % t] = {"dtype": "F32", "shape": [8, 8],
                                           "data_offsets": [off, off + 256]}
            off += 256
        h = json.dumps(meta, separators=(",", ":")).encode()
        h += b" " * ((8 - len(h) % 8) % 8)
        data = struct.pack("<Q", len(h)) + h + bytes(range(256)) * 8
        name = "model_%05d.safetensors" % i
    else:  # a small plain pickle of builtins (protocol 2)
        data = pickle.dumps({"step": i, "lr": 1e-3, "names": ["a", "b"] * 8}, protocol=2)
        name = "state_%05d.pkl" % i
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
open(os.path.join(root, ".done"), "w").close()
EOF
    fi
    for ((round = 0; round < repeat; round++)); do # tools take turns, as above
        echo "part=small input=tree tool=stguard $("${timer[@]}" 2 -- "$cur_cli" scan -j2 -q "$tree")" >>"$results"
        echo "part=small input=tree tool=stguard_nodigest $("${timer[@]}" 2 -- "$cur_cli" scan -j2 -q --no-digest "$tree")" >>"$results"
        echo "part=small input=tree tool=base $("${timer[@]}" 2 -- "$base_cli" scan -j2 -q "$tree")" >>"$results"
        echo "part=small input=tree tool=sha256sum $("${timer[@]}" 2 -- sh -c \
            'find "$1" -type f -name "*.*" ! -name .done -print0 | xargs -0 sha256sum' sh "$tree")" >>"$results"
    done
fi

# ---- tables
ref_rev=-
[[ -n $ref_bin ]] && ref_rev=$(sed -n 's/^reference=//p' "$work/reference/revision")
"$python" - "$results" "$base_rev" "$(git -C "$src_dir" rev-parse --short HEAD)" "$small_files" \
    "$ref_rev" <<'EOF'
import sys
rows = []
for line in open(sys.argv[1]):
    rows.append(dict(item.split("=", 1) for item in line.split()))
base, head, small, ref = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]

def num(v, fmt="%.0f"):
    return "-" if v is None else fmt % v

def ratio(a, b):
    return "-" if a is None or b is None else "%.1fx" % (a / b)

def best(part, inp, tool, key, fn=max):
    vals = [float(r[key]) for r in rows
            if r["part"] == part and r["input"] == inp and r["tool"] == tool and key in r]
    return fn(vals) if vals else None

print("Header validation, MB/s of header bytes by process CPU time (best of the processes); "
      "this tree %s, BASE %s, reference %s:" % (head, base, ref))
print()
print("| header | tensors | MB | stguard | stguard, first call | stguard at %s | "
      "simdjson On-Demand, any order | "
      "simdjson, writer's order | json.loads | reference read_metadata | stguard / json.loads | "
      "stguard / simdjson any | stguard / reference |" % base)
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
seen = []
for r in rows:
    if r["part"] == "header" and r["input"] not in seen:
        seen.append(r["input"])
for inp in seen:
    one = next(r for r in rows if r["part"] == "header" and r["input"] == inp and r["tool"] == "stguard")
    s = best("header", inp, "stguard", "cpu_best_MBps")
    first = best("header", inp, "stguard", "first_cpu_MBps")
    b = best("header", inp, "base", "cpu_best_MBps")
    sa = best("header", inp, "simd_any", "cpu_best_MBps")
    so = best("header", inp, "simd_order", "cpu_best_MBps")
    j = best("header", inp, "json", "cpu_best_MBps")
    rf = best("header", inp, "reference", "cpu_best_MBps")
    kind = "tiny [1,1]" if inp.startswith("tiny") else "realistic"
    print("| %s | %s | %.2f | %.0f | %s | %.0f | %.0f | %.0f | %.0f | %s | %.1fx | %.2fx | %s |"
          % (kind, one["tensors"], int(one["header_bytes"]) / 1e6, s, num(first), b, sa, so, j,
             num(rf),
             s / j, s / sa, ratio(s, rf)))
print()
print("The CLI as a process (`scan --no-digest`): CPU time (user + system) per run, best of the "
      "runs, ms; peak RSS MiB:")
print()
print("| file | stguard | stguard at %s | json.loads process | reference process (map + "
      "deserialize) | empty process | reference / stguard |" % base)
print("|---|---:|---:|---:|---:|---:|---:|")
empty = best("cli", "empty", "true", "cpu_best_s", min) or 0.0
for inp in sorted({r["input"] for r in rows if r["part"] == "cli" and r["input"] != "empty"},
                  key=lambda x: int(x.split("_")[1])):
    def cell(tool):
        t = best("cli", inp, tool, "cpu_best_s", min)
        m = best("cli", inp, tool, "max_rss_kib")
        return "-" if t is None else "%.2f (%.1f MiB)" % (t * 1e3, m / 1024)
    st = best("cli", inp, "stguard", "cpu_best_s", min)
    rf = best("cli", inp, "reference", "cpu_best_s", min)
    print("| %s | %s | %s | %s | %s | %.2f | %s |" % (inp, cell("stguard"), cell("base"),
                                                      cell("json"), cell("reference"),
                                                      empty * 1e3, ratio(rf, st)))
if small and any(r["part"] == "small" for r in rows):
    print()
    print("Many small files (%d: half safetensors, half pickles), wall time best of the runs "
          "and files/s; CPU time of all processes:" % small)
    print()
    print("| command | wall s | files/s | CPU s |")
    print("|---|---:|---:|---:|")
    for tool, label in (("stguard", "stguard scan -j2 -q (SHA-256 on)"),
                        ("stguard_nodigest", "stguard scan -j2 -q --no-digest"),
                        ("base", "stguard at %s scan -j2 -q" % base),
                        ("sha256sum", "find | xargs sha256sum")):
        w = best("small", "tree", tool, "best_s", min)
        c = best("small", "tree", tool, "cpu_best_s", min)
        if w is not None:
            print("| %s | %.3f | %.0f | %.3f |" % (label, w, small / w, c))
EOF

# ---- 4. the complexity suite of the robustness work (its own table; exit 1 past its bound)
if [[ $parts == *" complexity "* ]]; then
    echo
    echo "Complexity suite (bench/run_complexity.sh):"
    echo
    BUILD_DIR=$src_dir/build/release "$src_dir/bench/run_complexity.sh"
fi
