#!/usr/bin/env bash
# The README's GitHub Actions workflow, as a user pastes it: the YAML parses; it has the
# permission upload-sarif needs (security-events: write), uploads the file the scan writes with
# github/codeql-action/upload-sarif, and fails the job on the scan's status afterwards. Its run
# steps are executed here, verbatim, in a copy of corpus/examples standing for the repository:
#  - "Build stguard": sudo apt-get is a stub that checks the packages against
#    tools/setup-debian.sh --minimal; git clone and the cmake configure run for real, on this
#    source; the build (cmake --build ... --target stguard_cli) runs for real only with
#    STG_WORKFLOW_BUILD=1 (minutes), otherwise the target is checked to exist and the CLI of this
#    build tree stands in for it;
#  - "Scan": writes stguard.sarif (valid SARIF, not listing itself) and status=1 to GITHUB_OUTPUT;
#  - "Fail on invalid or unsafe files": runs (its condition holds) and exits 1.
# Skips (77) without Debian's python3 with PyYAML (python3-yaml, the YAML reader); fails without git
# or outside a git checkout (the clone is the subject).
set -u
PY=/usr/bin/python3
CLI=${STGUARD_CLI:?set by ctest}
SRC=${STG_SOURCE_DIR:?set by ctest}
command -v git >/dev/null || { echo "FAIL: git missing (tools/setup-debian.sh installs it)"; exit 1; }
"$PY" -c "import yaml" 2>/dev/null || { echo "skip: $PY has no yaml (python3-yaml)"; exit 77; }
git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1 || { echo "FAIL: $SRC is not a git checkout"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# The workflow, its structure, and each run step as a script file.
"$PY" - "$SRC/README.md" "$T" <<'EOF' || exit 1
import re, sys, yaml
readme, out = sys.argv[1], sys.argv[2]
text = open(readme).read()
section = text[text.index("### In a GitHub Actions workflow"):]
m = re.search(r"```yaml\n(.*?)```", section, re.S)
wf = yaml.safe_load(m.group(1))
on = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` as true
assert on, "no trigger"
job = wf["jobs"]["stguard"]
assert job["permissions"]["security-events"] == "write", job["permissions"]
assert job["permissions"]["contents"] == "read", job["permissions"]
steps = job["steps"]
uses = [s.get("uses", "") for s in steps]
assert uses[0].startswith("actions/checkout@"), uses
up = [s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
assert len(up) == 1 and up[0]["uses"].endswith("@v4"), uses  # v3 is deprecated in Dec 2026
scan = [s for s in steps if s.get("id") == "scan"]
assert len(scan) == 1 and "> " + up[0]["with"]["sarif_file"] in scan[0]["run"], scan
assert steps.index(scan[0]) < steps.index(up[0]), "upload before the scan"
last = steps[-1]
assert last["if"] == "steps.scan.outputs.status != '0'", last
assert steps.index(up[0]) < len(steps) - 1, "the job fails before the upload"
n = 0
for s in steps:
    if "run" in s:
        body = s["run"].replace("${{ steps.scan.outputs.status }}", "$SCAN_STATUS")
        assert "${{" not in body, body
        n += 1
        open("%s/step%d.sh" % (out, n), "w").write(body)
        open("%s/step%d.name" % (out, n), "w").write(s.get("name", ""))
open(out + "/env.sh", "w").write("".join("export %s=%s\n" % (k, "'%s'" % v)
                                         for k, v in job.get("env", {}).items()))
assert n == 3, n
EOF

minimal=$(sed -n '/^minimal=(/,/^)/p' "$SRC/tools/setup-debian.sh" | grep -v '^ *#' | tr -s ' ()' '\n' |
    grep -v '^minimal=$\|^$')
mkdir -p "$T/repo" "$T/runner"
cp -r "$SRC/corpus/examples/." "$T/repo/"
cat > "$T/prelude.sh" <<EOF
set -eo pipefail # GitHub's default shell: bash --noprofile --norc -eo pipefail
export RUNNER_TEMP="$T/runner" GITHUB_OUTPUT="$T/github_output"
sudo() {
    [ "\$1" = apt-get ] || { echo "sudo \$*: not apt-get"; return 1; }
    [ "\$2" = update ] && return 0
    for p in "\$@"; do
        case \$p in apt-get|install|-y|--no-install-recommends) continue ;; esac
        echo "$minimal" | grep -qx -- "\$p" || { echo "package \$p is not in setup-debian.sh --minimal"; return 1; }
    done
}
cmake() {
    if [ "\$1" = --build ] && [ "\${STG_WORKFLOW_BUILD:-0}" != 1 ]; then
        command cmake --build "\$2" --target help >"$T/targets.txt" 2>&1
        grep -qw stguard_cli "$T/targets.txt" || { echo "no target stguard_cli"; return 1; }
        printf '#!/bin/sh\nexec "%s" "\$@"\n' "$CLI" > "\$2/stguard" && chmod +x "\$2/stguard"
        return 0
    fi
    command cmake "\$@" >"$T/cmake.log" 2>&1 || { cat "$T/cmake.log"; return 1; }
}
EOF
. "$T/env.sh"
[ -n "${STGUARD_REPO:-}" ] || bad "the workflow sets no STGUARD_REPO"
for i in 1 2 3; do
    name=$(cat "$T/step$i.name")
    (
        cd "$T/repo"
        export STGUARD_REPO="file://$SRC" SCAN_STATUS
        SCAN_STATUS=$(sed -n 's/^status=//p' "$T/github_output" 2>/dev/null)
        bash -c ". '$T/prelude.sh'; . '$T/step$i.sh'"
    ) >"$T/step$i.log" 2>&1
    rc=$?
    case "$name" in
        "Build stguard" | Scan) [ $rc -eq 0 ] || bad "step '$name' failed ($rc): $(tail -20 "$T/step$i.log")" ;;
        "Fail on invalid or unsafe files") [ $rc -eq 1 ] || bad "step '$name': exit $rc, want 1 (the examples hold invalid files)" ;;
        *) bad "unexpected step '$name'" ;;
    esac
done
grep -qx "status=1" "$T/github_output" 2>/dev/null || bad "GITHUB_OUTPUT: $(cat "$T/github_output" 2>&1)"
"$PY" - "$T/repo/stguard.sarif" <<'EOF' || fail=1
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
uris = [a["location"]["uri"] for a in run["artifacts"]]
assert uris and not any(u.endswith("stguard.sarif") for u in uris), uris
assert all(not u.startswith("file:") for u in uris), uris  # relative to the repository
assert run["invocations"][0]["exitCode"] == 1, run["invocations"]
EOF
[ $fail -eq 0 ] && echo "the README workflow's steps ran as a runner would run them"
exit $fail
