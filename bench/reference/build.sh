#!/usr/bin/env bash
# Builds the timing driver of the reference implementation (huggingface/safetensors, Rust:
# bench/reference/src/main.rs) for bench/run_speed.sh, and prints the binary's path.
#
#   bench/reference/build.sh REF_SRC WORK_DIR
#
# REF_SRC: a checkout of huggingface/safetensors (the folder holding its safetensors/ crate), or
# its git directory (then REF_COMMIT, default HEAD, is archived). Nothing is downloaded: cargo
# runs offline with the crate's dependencies from Debian's Rust source packages
# (/usr/share/cargo/registry: librust-serde-dev, librust-serde-derive-dev,
# librust-serde-json-dev, librust-hashbrown-dev), and needs a toolchain at least as new as the
# crate's rust-version (1.80 at 24b0b28; Debian 12's rustc is 1.63, so e.g. a rustup one).
# Two changes to the crate's copy, neither on the read path: hashbrown (used only by no_std
# builds) is taken at Debian's 0.12, and the writer's tempfile crate (not packaged) becomes a
# plain File::create. The driver and the crate are built with cargo's release profile.
set -euo pipefail
ref=${1:?REF_SRC}
work=${2:?WORK_DIR}
here=$(cd "$(dirname "$0")" && pwd)
registry=/usr/share/cargo/registry
command -v cargo >/dev/null || { echo "build.sh: no cargo on PATH" >&2; exit 2; }
[[ -d $registry/serde_json-1.0.87 || -n $(ls -d "$registry"/serde_json-* 2>/dev/null) ]] ||
    { echo "build.sh: Debian's librust-serde-json-dev is not installed" >&2; exit 2; }
mkdir -p "$work"
work=$(cd "$work" && pwd)
crate=$work/ref/safetensors
rm -rf "$work/src" "$work/ref"
mkdir -p "$work/ref" "$work/.cargo"
cp "$here/Cargo.toml" "$work/"
cp -r "$here/src" "$work/"
if [[ -d $ref/safetensors/src ]]; then
    cp -r "$ref/safetensors" "$work/ref/"
    rev=$(git -C "$ref" rev-parse --short HEAD 2>/dev/null || echo unknown)
else
    git --git-dir="$ref" archive "${REF_COMMIT:-HEAD}" safetensors | tar -x -C "$work/ref"
    rev=$(git --git-dir="$ref" rev-parse --short "${REF_COMMIT:-HEAD}")
fi
# dev-dependencies, benches and tempfile go; hashbrown at Debian's version
sed -i -e 's/^hashbrown = { version = "[^"]*"/hashbrown = { version = "0.12"/' \
    -e '/^tempfile = /d' -e 's/, "dep:tempfile"//' \
    -e '/^\[dev-dependencies\]/,/^\[/{/^\[features\]/!d}' -e '/^\[\[bench\]\]/,$d' \
    "$crate/Cargo.toml"
"${PYTHON:-python3}" - "$crate/src/tensor.rs" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("let temp = tempfile::NamedTempFile::new_in(parent)?;",
              "let _ = parent;\n    let temp = PlainFile(std::fs::File::create(path)?);")
s = s.replace("temp.persist(path).map_err(|e| e.error)?;", "drop(temp);")
s += """
#[cfg(feature = "std")]
struct PlainFile(std::fs::File);
#[cfg(feature = "std")]
impl PlainFile {
    fn as_file(&self) -> &std::fs::File {
        &self.0
    }
}
"""
open(p, "w").write(s)
PY
[[ -f $crate/README.md ]] || echo "# safetensors" >"$crate/README.md"
cat >"$work/.cargo/config.toml" <<CFG
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "$registry"
[net]
offline = true
CFG
(cd "$work" && cargo build --release --quiet) >&2
echo "reference=$rev" >"$work/revision"
echo "$work/target/release/stg-reference-bench"
