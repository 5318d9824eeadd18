#!/bin/bash
# stguard's Flax rules against flax's own reader (msgpack.unpackb with flax's extension hook,
# reimplemented from flax's source in tests/flax/flaxpack.py) over 1,500 seeded mutations of
# writer output (tests/flax/flax_differential.py): where stguard says ok, the reader returns the
# same tree of arrays (paths, dtype names, shapes: tests/support/flax_tree prints stguard's);
# where the reader refuses, stguard is not ok. Skips (77) without msgpack and numpy.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "msgpack, numpy"
[ -x "${STG_FLAX_TREE:-}" ] || { echo "FAIL: no flax_tree driver (STG_FLAX_TREE)"; exit 1; }
mkdir "$tmp/m"
"$PY" "$SRC/tests/flax/flax_differential.py" gen "$tmp/m" || { echo "FAIL: generator"; exit 1; }
"$STGUARD_CLI" scan --no-digest --format json "$tmp/m" >"$tmp/scan.jsonl"
"$STG_FLAX_TREE" "$tmp"/m/m_*.msgpack >"$tmp/tree.jsonl" || { echo "FAIL: flax_tree"; exit 1; }
"$PY" "$SRC/tests/flax/flax_differential.py" judge "$tmp/m" "$tmp/scan.jsonl" "$tmp/tree.jsonl"
