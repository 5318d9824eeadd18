#!/bin/bash
# TensorFlow SavedModels written with python3-protobuf in TensorFlow's schema (gen_savedmodel.py
# names the .proto files it follows): ok-* cases are ok, bad-<code>-* carry <code>; every op
# protobuf reads back from a file that stguard calls unsafe or warns about is one stguard names
# (the ops the parse finds in the graph and in the function library, compared with the ops the
# findings name); saved_model.pb is labelled tf-savedmodel, keras_metadata.pb keras.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "google.protobuf"
"$PY" "$SRC/tests/keras/gen_savedmodel.py" "$tmp/sm" >"$tmp/ops.txt" || exit 1
fail=0
for dir in "$tmp"/sm/*; do
    case=$(basename "$dir")
    out=$("$STGUARD_CLI" scan --format json "$dir" | grep '"type":"file"')
    verdicts=$(printf '%s\n' "$out" | "$PY" -c 'import json,sys; print(" ".join(sorted(json.loads(l)["verdict"] for l in sys.stdin)))')
    codes=$(printf '%s\n' "$out" | "$PY" -c 'import json,sys; print(" ".join(x["code"] for l in sys.stdin for x in json.loads(l)["findings"]))')
    formats=$(printf '%s\n' "$out" | "$PY" -c '
import json, sys, os
for l in sys.stdin:
    r = json.loads(l); print(os.path.basename(r["path"]) + "=" + r["format"])')
    case "$case" in
    ok-*)
        case " $verdicts " in *" ok "*) ;; *) echo "FAIL $case: $verdicts ($codes)"; fail=1 ;; esac
        if [ -n "$codes" ]; then echo "FAIL $case: findings $codes"; fail=1; fi ;;
    bad-*)
        code=${case#bad-}; code=${code%%-*}
        case " $codes " in *" $code "*) ;; *) echo "FAIL $case: no $code ($codes)"; fail=1 ;; esac ;;
    esac
    for f in $formats; do
        case "$f" in
        saved_model.pb=tf-savedmodel | keras_metadata.pb=keras) ;;
        *) echo "FAIL $case: label $f"; fail=1 ;;
        esac
    done
    # the ops protobuf reads back that are on stguard's lists are each named by a finding
    ops=$(grep "^$case " "$tmp/ops.txt" | cut -d' ' -f2-)
    for op in $ops; do
        case "$op" in
        ReadFile | WriteFile | MatchingFiles | EagerPyFunc | PyFunc)
            if ! printf '%s' "$out" | grep -q "($op)\|an op $op"; then
                echo "FAIL $case: $op not named"; fail=1
            fi ;;
        esac
    done
done
if [ $fail -ne 0 ]; then
    exit 1
fi
echo "savedmodel fixtures: all as expected"
