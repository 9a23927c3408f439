#!/bin/bash
# Runs inside the clean root (tests/install/clean_root.sh): Debian 12 with python3 and venv only, no
# compiler, no -dev package. Installs the wheel from /opt/in and uses it as a new user would.
set -euo pipefail
say() { echo "clean-root: $*" >&2; }
fail() { echo "clean-root: FAILED: $*" >&2; exit 1; }
# What a command printed, on stderr. Never `tee /dev/stderr`: that reopens the caller's log file by
# path and truncates it.
show() { printf '%s\n' "$1" >&2; }

for tool in gcc g++ cc c++ cmake make ninja pkg-config; do
  ! command -v "$tool" >/dev/null || fail "the root is not clean: it has $tool"
done
! ls /usr/include/curl /usr/include/sqlite3.h /usr/include/yaml-cpp >/dev/null 2>&1 || fail "the root has -dev headers"

python3 -m venv /opt/venv
started=$(date +%s%N)
/opt/venv/bin/pip install -q --no-index --find-links /opt/in/wheelhouse /opt/in/torchx-*.whl
ms=$((($(date +%s%N) - started) / 1000000))
say "pip install of $(basename /opt/in/torchx-*.whl) took ${ms} ms"
echo "$ms" >/opt/out/install_ms
# shellcheck source=/dev/null
. /opt/venv/bin/activate
mkdir -p /root/work && cd /root/work

say "every object of the installed wheel resolves its libraries inside this root"
site=$(python3 -c 'import os, torchx; print(os.path.dirname(os.path.dirname(torchx.__file__)))')
objects=$( (find "$site/torchx" "$site/torchx.libs" -type f \( -name '*.so*' -o -perm -u+x \); \
  find /opt/venv/bin -maxdepth 1 -type f -name 'torchx*') | sort -u)
checked=0
for f in $objects; do
  head -c 4 "$f" | grep -q 'ELF' || continue
  if ldd "$f" 2>&1 | grep -E 'not found|not a dynamic' | grep -v 'not a dynamic executable' >&2; then
    fail "$f: a library it needs is missing"
  fi
  checked=$((checked + 1))
done
((checked >= 8)) || fail "only $checked objects found in the installed wheel"
say "$checked objects resolve"

say "torchx --version"
v=$(torchx --version) || fail "torchx --version: $v"
echo "$v"
grep -qE '^torchx-[0-9]+\.[0-9]+' <<<"$v" || fail "torchx --version printed $v"

say "torchx run --wait utils.echo"
out=$(torchx run --wait utils.echo --msg hello-from-the-clean-root)
echo "$out"
h=$(echo "$out" | head -1)
[[ $h == local_cwd://* ]] || fail "no handle from run: $out"
torchx log "$h" | grep -q hello-from-the-clean-root || fail "echo's log"

say "a two-replica utils.sh app: status, log, list"
h=$(torchx run --wait utils.sh --num_replicas 2 echo replica '${replica_id}' | head -1)
out=$(torchx status "$h") && show "$out" && grep -q "State: SUCCEEDED" <<<"$out" || fail "status of $h: $out"
log=$(torchx log "$h")
grep -q "replica 0" <<<"$log" && grep -q "replica 1" <<<"$log" || fail "log of $h: $log"
torchx list | grep -q "${h##*/}" || fail "list does not show $h"

say "Python: get_runner().run() and wait()"
python3 - <<'EOF'
from torchx.components import utils
from torchx.runner import get_runner
from torchx.specs import AppState

runner = get_runner()
handle = runner.run(utils.echo(msg="from-python"), "local_cwd")
status = runner.wait(handle, wait_interval=0.2)
assert status is not None and status.state == AppState.SUCCEEDED, status
lines = "".join(runner.log_lines(handle, "echo"))
assert "from-python" in lines, lines
print("python:", handle, status.state)
EOF

say "a 4-trial grid sweep"
torchx sweep run --wait -p x=1,2,3,4 utils.sh echo 'trial @{x}' >sweep.out || { cat sweep.out; fail "sweep"; }
s=$(head -1 sweep.out)
out=$(torchx sweep status "$s") && show "$out" && (($(grep -c SUCCEEDED <<<"$out") >= 4)) || fail "sweep status of $s: $out"

say "torchx run --managed of an app that succeeds"
m=$(torchx run --managed --wait utils.echo --msg managed-ok | head -1)
[[ $m == managed://* ]] || fail "no managed handle: $m"
out=$(torchx status "$m") && show "$out" && grep -q SUCCEEDED <<<"$out" || fail "managed status of $m: $out"

say "torchx ui answers /api/v1/apps on loopback"
torchx ui --port 0 >ui.out 2>&1 &
ui=$!
for _ in $(seq 100); do grep -qoE 'http://127\.0\.0\.1:[0-9]+' ui.out && break; sleep 0.1; done
url=$(grep -oE 'http://127\.0\.0\.1:[0-9]+' ui.out | head -1)
[[ -n $url ]] || { cat ui.out; kill $ui; fail "torchx ui printed no address"; }
python3 - "$url" <<'EOF' || { kill $ui; fail "the dashboard's API"; }
import json, sys, urllib.request
apps = json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/apps", timeout=30))
print("ui:", len(apps.get("apps", apps)), "apps")
EOF
kill $ui
wait $ui 2>/dev/null || true

say "the back-end modules load from the package when first used"
for s in kubernetes local_docker ray; do
  torchx runopts "$s" >/dev/null || fail "runopts $s: its module did not load"
done

say "local_docker with no daemon: cannot connect, not a missing library"
if out=$(torchx status local_docker://torchx/x 2>&1); then fail "status without a daemon succeeded: $out"; fi
echo "$out"
! grep -qiE 'cannot load|libcurl|\.so(\.[0-9]|\b)' <<<"$out" || fail "a library is missing: $out"
grep -qiE "connect|docker\.sock|daemon" <<<"$out" || fail "does not say it cannot connect: $out"
say "pip install of the sdist stops at once, naming what is missing and the apt-get line"
python3 -m venv /opt/venv-sdist
started=$(date +%s)
if out=$(timeout 60 /opt/venv-sdist/bin/pip install --no-index --find-links /opt/in/wheelhouse /opt/in/torchx-*.tar.gz 2>&1); then
  fail "the sdist installed in a root without a compiler"
fi
echo "$out" | grep -A20 "cannot build the C++ core" >&2 || { echo "$out" >&2; fail "no message naming what is missing"; }
((($(date +%s) - started) < 60)) || fail "the sdist took 60 s or more to fail"
for expect in "a C++ compiler: Debian package g++" "cmake" "libyaml-cpp-dev" "sudo apt-get install -y"; do
  grep -qF -- "$expect" <<<"$out" || fail "the sdist's message does not name $expect"
done
say "all checks passed"
