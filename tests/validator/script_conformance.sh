#!/bin/bash
# ctest wrapper: the compat conformance check of tools/conformance.sh (exit 77 = skipped when
# ../shared/conformance is absent; the project's own tests never need that folder).
root=${STG_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
exec bash "$root/tools/conformance.sh" "$root/../shared/conformance"
