# Sourced by tests/remotecode/script_*.sh after the prelude: expect PATH VERDICT LABEL [TEXT...]
# scans $tmp/PATH with the CLI and checks it says VERDICT (LABEL) and every TEXT; a miss prints
# the output and sets fail=1.
fail=0
expect() {
    local p=$1 v=$2 l=$3
    shift 3
    "$STGUARD_CLI" scan -v --no-digest "$tmp/$p" >"$tmp/out.txt" 2>&1
    local ok=1
    grep -q ": $v ($l)" "$tmp/out.txt" || ok=0
    for t in "$@"; do grep -qF -- "$t" "$tmp/out.txt" || ok=0; done
    if [ $ok -eq 0 ]; then
        echo "FAIL: $p: want $v ($l) $*"
        cat "$tmp/out.txt"
        fail=1
    fi
}
