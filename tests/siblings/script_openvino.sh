#!/bin/bash
# OpenVINO IR through the CLI (docs/openvino.md), on fixtures written as OpenVINO's serializer
# writes them (tests/siblings/gen_openvino.py; OpenVINO itself is not in Debian):
#  - a sentence-transformers-shaped repo with two IRs and their weights exits 0 under
#    --fail-on warning, the XML labelled openvino-ir and the .bin openvino-weights;
#  - a .bin cut short: both files invalid (openvino_weights_missing, sibling_range_outside);
#    the .bin alone keeps format_mismatch;
#  - differential against Python's expat (xml.etree, the XML reader Debian's python3 has): for
#    truncations and single-byte mutations of the IR text that still start with <net, stguard
#    reports xml_malformed exactly when expat refuses the document. Known differences are
#    left out and counted: a duplicate attribute (expat refuses it; pugixml, which OpenVINO
#    uses, and stguard take the first) and mutations inside the XML declaration (expat checks
#    it, pugixml and stguard skip it as a processing instruction).
. "$(dirname "$0")/../support/script_prelude.sh"
stg_script_needs "xml.etree.ElementTree"
fail=0
"$PY" "$SRC/tests/siblings/gen_openvino.py" "$tmp/f" || { echo "FAIL: gen_openvino.py"; exit 1; }

if ! out=$("$STGUARD_CLI" scan --fail-on warning "$tmp/f/repo"); then
    echo "FAIL: the repo does not pass --fail-on warning:"; echo "$out"; fail=1
fi
if printf '%s\n' "$out" | grep -v -e '^[0-9]* files: ' -e '^([0-9]* ok files\? not listed' >/dev/null; then
    echo "FAIL: the repo prints more than the summary:"; echo "$out"; fail=1
fi
"$STGUARD_CLI" scan --format json "$tmp/f/repo" "$tmp/f/short" > "$tmp/all.json"
cp "$tmp/f/repo/openvino/openvino_model.bin" "$tmp/alone.bin"
"$STGUARD_CLI" scan --format json "$tmp/alone.bin" >> "$tmp/all.json"
"$PY" - "$tmp/all.json" <<'PY' || fail=1
import json, sys
recs = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["type"] == "file":
        recs[r["path"].split("/f/", 1)[-1].rsplit("/tmp", 1)[-1]] = r
def codes(k):
    return sorted(f["code"] for f in recs[k]["findings"])
for stem in ("openvino_model", "openvino_model_qint8_quantized"):
    for ext, fmt in ((".xml", "openvino-ir"), (".bin", "openvino-weights")):
        r = recs["repo/openvino/" + stem + ext]
        assert r["format"] == fmt and r["verdict"] == "ok" and not r["findings"], r
assert codes("short/openvino_model.xml") == ["openvino_weights_missing"], recs["short/openvino_model.xml"]
assert recs["short/openvino_model.bin"]["format"] == "openvino-weights"
assert codes("short/openvino_model.bin") == ["sibling_range_outside"]
alone = [k for k in recs if k.endswith("alone.bin")]
assert len(alone) == 1 and codes(alone[0]) == ["format_mismatch"], alone
print("labels ok")
PY

# the differential: mutants in one folder, one scan
mkdir "$tmp/mut"
"$PY" - "$tmp/f/repo/openvino/openvino_model_qint8_quantized.xml" "$tmp/mut" <<'PY' || fail=1
import random, sys, xml.etree.ElementTree as ET
src = open(sys.argv[1], "rb").read()
decl = src.index(b"?>") + 2
rng = random.Random(27)
mutants = [src[:n] for n in range(decl + 40, len(src), max(1, len(src) // 40))]
for _ in range(300):
    i = rng.randrange(decl + 40, len(src))
    b = rng.choice([b"", b"<", b">", b'"', b"'", b"&", b"/", b"=", b" ", b"!", b"?", b"-", b"x", b";", b"#"])
    mutants.append(src[:i] + b + src[i + 1:])
mutants += [src.replace(b"<net", b'<!DOCTYPE net [<!ENTITY e "x">]><net', 1),
            src.replace(b"a&lt;b", b"a&e;b", 1), src.replace(b"a&lt;b", b"a&#x110000;b", 1)]
for n, m in enumerate(mutants):
    open("%s/m%04d.xml" % (sys.argv[2], n), "wb").write(m)
print(len(mutants), "mutants")
PY
"$STGUARD_CLI" scan --format json "$tmp/mut" > "$tmp/mut.json"
"$PY" - "$tmp/mut.json" <<'PY' || fail=1
import json, re, sys, xml.etree.ElementTree as ET
agree = skipped = not_ir = 0
bad = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["type"] != "file":
        continue
    if r["format"] != "openvino-ir":
        not_ir += 1
        continue
    ours = any(f["code"] == "xml_malformed" for f in r["findings"])
    data = open(r["path"], "rb").read()
    try:
        ET.fromstring(data)
        theirs, why = False, ""
    except ET.ParseError as e:
        theirs, why = True, str(e)
    if theirs and not ours and "duplicate attribute" in why:
        skipped += 1
    elif ours == theirs:
        agree += 1
    elif b"<!DOCTYPE" in data and ours:
        agree += 1  # stguard refuses DTDs by design (expat reads them)
    else:
        bad.append((r["path"], ours, why))
print("differential: %d agree, %d known differences, %d no longer IR" % (agree, skipped, not_ir))
for b in bad[:10]:
    print("DISAGREE", b)
assert not bad and agree > 200
PY
exit $fail
