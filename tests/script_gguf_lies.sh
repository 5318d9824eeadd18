#!/usr/bin/env bash
# A GGUF whose header lies is never ok (issue 13): every broken fixture tests/gen_gguf.py
# writes (bad-*.gguf) is invalid with exit status 1 in the CLI's default (strict) profile and
# never ok in compat (the one without GGUF magic is format_mismatch: its .gguf name claims the
# format, as ggml's gguf_init_from_file refuses it), every valid one (ok-*.gguf) is ok with exit
# status 0; and for a valid
# file with metadata, a vocabulary and three tensors, each lie told about a dimension, a count,
# a string length or a tensor offset (one field changed, the rest of the bytes kept) is
# invalid too. Python standard library only: skips (77) only without python3 or the CLI.
. "$(dirname "$0")/support/script_prelude.sh"
stg_script_needs "struct"
B=$STGUARD_CLI
"$PY" "$SRC/tests/gen_gguf.py" "$tmp/fixtures" || { echo "FAIL: gen_gguf.py"; exit 1; }
"$PY" - "$SRC/tests" "$tmp/lies" <<'PYEOF' || { echo "FAIL: writing the lies"; exit 1; }
import os, re, struct, sys
sys.path.insert(0, sys.argv[1])
from gen_gguf import gguf, kv, nbytes, pad_to, ARR, STR, U32, F32
out = sys.argv[2]
os.makedirs(out)
vocab = ["<unk>", "<s>", "</s>"] + ["t%d" % i for i in range(29)]
meta = [kv("general.architecture", STR, "llama"), kv("llama.block_count", U32, 1),
        kv("tokenizer.ggml.tokens", ARR, (STR, vocab)),
        kv("tokenizer.ggml.scores", ARR, (F32, [0.0] * len(vocab)))]
tensors = [("a.weight", [32, 4], 0), ("b.weight", [64, 2], 8), ("c.bias", [8], 1)]
good = gguf(meta, tensors)
open(os.path.join(out, "good.gguf"), "wb").write(good)

# Where each field is: walk the file as the generator wrote it.
fields = []  # (name, offset, size)
fields += [("tensor_count", 8, 8), ("kv_count", 16, 8)]
p = 24
for i in range(len(meta)):
    (n,) = struct.unpack_from("<Q", good, p)
    fields.append(("key%d_len" % i, p, 8))
    p += 8 + n
    (t,) = struct.unpack_from("<I", good, p)
    p += 4
    if t == STR:
        (n,) = struct.unpack_from("<Q", good, p)
        fields.append(("value%d_len" % i, p, 8))
        p += 8 + n
    elif t == ARR:
        et, cnt = struct.unpack_from("<IQ", good, p)
        fields.append(("array%d_count" % i, p + 4, 8))
        p += 12
        for j in range(cnt):
            if et == STR:
                (n,) = struct.unpack_from("<Q", good, p)
                if j in (0, cnt - 1):
                    fields.append(("array%d_str%d_len" % (i, j), p, 8))
                p += 8 + n
            else:
                p += 4
    else:
        p += 4
for i in range(len(tensors)):
    (n,) = struct.unpack_from("<Q", good, p)
    fields.append(("tensor%d_name_len" % i, p, 8))
    p += 8 + n
    (nd,) = struct.unpack_from("<I", good, p)
    fields.append(("tensor%d_n_dims" % i, p, 4))
    p += 4
    for d in range(nd):
        fields.append(("tensor%d_dim%d" % (i, d), p, 8))
        p += 8
    p += 4  # type
    fields.append(("tensor%d_offset" % i, p, 8))
    p += 8
n = 0
for name, off, size in fields:
    (v,) = struct.unpack_from("<Q" if size == 8 else "<I", good, off)
    lies = {v + 1, v * 2 + 2, v - 1 if v > 0 else None, 1 << 32, (1 << 63) - 1,
            (1 << (8 * size)) - 1}
    if name.endswith("_offset"):
        lies |= {v + 32, v + 1}
    for lie in sorted(x for x in lies if x is not None and x != v and x < (1 << (8 * size))):
        if re.fullmatch(r"tensor\d_dim\d", name):
            # A smaller or larger dimension whose tensor still ends in the same aligned slot
            # tells no lie about the layout: the file is valid as it stands (its tensor only
            # leaves more padding). Only lies that move the tensor's end are kept.
            i, d = int(name[6]), int(name[-1])
            t = tensors[i]
            dims = list(t[1])
            dims[d] = lie
            old, new = nbytes(t[1], t[2]), nbytes(dims, t[2])
            if dims[0] % {0: 1, 1: 1, 8: 32}[t[2]] == 0 and new < (1 << 40) and \
                    old + pad_to(old, 32) == new + pad_to(new, 32):
                continue
        data = good[:off] + struct.pack("<Q" if size == 8 else "<I", lie) + good[off + size:]
        with open(os.path.join(out, "lie-%s-%d.gguf" % (name, lie)), "wb") as f:
            f.write(data)
        n += 1
print("lies written:", n)
PYEOF
fail=0
checked=0
expect() { # file, profile option or "", want verdict(s) regex, want exit status regex
    local f=$1 prof=$2 want=$3 rc_want=$4 rc
    "$B" scan --no-digest --format json $prof "$f" >"$tmp/out.json" 2>/dev/null
    rc=$?
    local verdict
    verdict=$(head -n 1 "$tmp/out.json" | sed -n 's/.*"verdict":"\([a-z]*\)".*/\1/p')
    checked=$((checked + 1))
    if ! [[ "$verdict" =~ ^($want)$ ]] || ! [[ "$rc" =~ ^($rc_want)$ ]]; then
        echo "FAIL: $(basename "$f") ${prof:-strict}: verdict '$verdict' exit $rc (want $want, exit $rc_want)"
        fail=1
    fi
}
nbad=0
nok=0
for f in "$tmp"/fixtures/bad-*.gguf "$tmp"/lies/lie-*.gguf; do
    # (bad-gguf_header_invalid-magic.gguf too: no magic under a .gguf name, format_mismatch)
    expect "$f" "" invalid 1
    # compat: never ok (trailing bytes after the last tensor are a compat warning)
    expect "$f" "--profile compat" "warn|invalid|unsafe" "0|1"
    nbad=$((nbad + 1))
done
for f in "$tmp"/fixtures/ok-*.gguf "$tmp"/lies/good.gguf; do
    expect "$f" "" ok 0
    nok=$((nok + 1))
done
echo "$nbad broken and $nok valid GGUF files, $checked checks"
[ "$nbad" -ge 100 ] && [ "$nok" -ge 40 ] || { echo "FAIL: too few files"; fail=1; }
exit $fail
