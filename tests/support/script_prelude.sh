# Sourced by the tests/<layer>/script_*.sh that drive the real loaders and the CLI:
#   . "$(dirname "$0")/../support/script_prelude.sh"; stg_script_needs "torch, numpy"
# Sets PY (Debian's python3), SRC (the source tree) and tmp (removed on exit). Skips (exit 77)
# only when python3 cannot import the named modules (the real loaders, the oracle); a missing CLI
# binary is the subject missing, and fails.
set -u
PY=/usr/bin/python3
SRC=${STG_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}

stg_script_needs() { # "mod, mod": what python3 must import
    if ! "$PY" -c "import $1" >/dev/null 2>&1; then
        echo "skip: $PY cannot import $1"
        exit 77
    fi
    if [ -z "${STGUARD_CLI:-}" ] || [ ! -x "$STGUARD_CLI" ]; then
        echo "FAIL: no CLI binary (STGUARD_CLI)"
        exit 1
    fi
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
}
