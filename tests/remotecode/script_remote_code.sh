#!/bin/bash
# A Hub repo whose configs' auto_map names code (docs/remote-code.md), through the CLI: each
# entry is a warning naming the module and class, present or not beside the config; a
# cross-repo reference names the other repo; `--fail-on warning` blocks the repo (exit 1) and
# passes a repo without auto_map (exit 0); .py files are python_code and quiet.
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "json"
repo=$tmp/repo plain=$tmp/plain
mkdir -p "$repo" "$plain"
cat >"$repo/config.json" <<'JSON'
{
  "architectures": ["XForCausalLM"],
  "auto_map": {
    "AutoConfig": "configuration_x.XConfig",
    "AutoModelForCausalLM": "modeling_x.XForCausalLM",
    "AutoModel": "someone/other-repo--modeling_y.YModel"
  },
  "model_type": "x"
}
JSON
cat >"$repo/tokenizer_config.json" <<'JSON'
{"auto_map": {"AutoTokenizer": ["tokenization_x.XTokenizer", null]}, "model_max_length": 2048}
JSON
printf 'import torch\nclass XForCausalLM: pass\n' >"$repo/modeling_x.py"
printf 'class XConfig: pass\n' >"$repo/configuration_x.py"
printf '{"model_type": "bert", "hidden_size": 768}\n' >"$plain/config.json"
printf '{"do_lower_case": true}\n' >"$plain/tokenizer_config.json"
printf 'print("helper")\n' >"$plain/helper.py"
fail=0
out=$("$STGUARD_CLI" scan --no-digest "$repo" 2>&1)
for t in "remote_code @" "[global configuration_x.XConfig]" "[global modeling_x.XForCausalLM]" \
    "present beside this config" "remote_code_cross_repo" \
    "[global someone/other-repo--modeling_y.YModel]" "[global tokenization_x.XTokenizer]" \
    "not beside this config"; do
    grep -qF -- "$t" <<<"$out" || { echo "FAIL: no '$t' in:"; echo "$out"; fail=1; }
done
"$STGUARD_CLI" scan --no-digest "$repo" >/dev/null 2>&1 || { echo "FAIL: warnings alone failed"; fail=1; }
"$STGUARD_CLI" scan --no-digest --fail-on warning "$repo" >/dev/null 2>&1
[ $? -eq 1 ] || { echo "FAIL: --fail-on warning did not block the auto_map repo"; fail=1; }
"$STGUARD_CLI" scan --no-digest --fail-on warning "$plain" >/dev/null 2>&1 ||
    { echo "FAIL: --fail-on warning blocked a repo without auto_map"; fail=1; }
fmt=$("$STGUARD_CLI" scan --no-digest --format json "$plain/helper.py" | head -1)
grep -q '"format":"python_code"' <<<"$fmt" || { echo "FAIL: helper.py: $fmt"; fail=1; }
grep -q '"verdict":"ok"' <<<"$fmt" || { echo "FAIL: helper.py not ok: $fmt"; fail=1; }
# the same config bytes in two folders, the module beside only one: each judged in its folder
# (the report records that it looked beside the file, so the walk shares no result)
mkdir -p "$tmp/share/a" "$tmp/share/b"
printf '{"auto_map":{"AutoModel":"modeling_x.XModel"}}' >"$tmp/share/a/config.json"
cp "$tmp/share/a/config.json" "$tmp/share/b/config.json"
printf 'x = 1\n' >"$tmp/share/a/modeling_x.py"
out=$("$STGUARD_CLI" scan --no-digest "$tmp/share" 2>&1)
grep -A1 "share/a/config.json" <<<"$out" | grep -qF "present beside" &&
    grep -A1 "share/b/config.json" <<<"$out" | grep -qF "not beside" ||
    { echo "FAIL: identical configs in two folders judged alike:"; echo "$out"; fail=1; }
[ $fail -eq 0 ] && echo "auto_map repos warned and blocked with --fail-on warning"
exit $fail
