#!/usr/bin/env bash
# The wheel on a machine that never built anything (issue 54; docs/install.md): a minimal Debian 12
# root (debootstrap's minbase with python3 and python3-venv: no compiler, no -dev package, no build
# tool), entered with unshare (its own mount, pid and network namespaces, so every process it
# starts ends with it and nothing it serves is reachable from outside) and chroot, /proc mounted.
# Inside it, tests/install/clean_root_check.sh installs the wheel into a venv with pip --no-index
# from a wheelhouse of its dependencies and uses it, then tries the sdist beside the wheel, which
# must stop at once naming what the root lacks to build it.
#   tests/install/clean_root.sh WHEEL
# The root's tarball and the wheelhouse are cached in $TORCHX_CACHE_DIR (default ~/.cache/torchx);
# without them the stage makes them (debootstrap from Debian's mirror, pip download from PyPI).
# Needs root (unshare, chroot, mount), as the container engines' stage does.
set -euo pipefail
cd "$(dirname "$0")/../.."
wheel=$(readlink -f "${1:?usage: tests/install/clean_root.sh WHEEL}")
py=${TORCHX_PYTHON:-python3}
cache=${TORCHX_CACHE_DIR:-$HOME/.cache/torchx}
[[ $(id -u) -eq 0 ]] || { echo "clean-root: needs root (unshare, chroot and mount)" >&2; exit 1; }
case "$(basename "$wheel")" in
  *-cp311-cp311-*) ;;
  *) echo "clean-root: the root has Debian 12's Python 3.11; $(basename "$wheel") is for another Python" >&2; exit 1 ;;
esac
mkdir -p "$cache"
mb=$(($(stat -c %s "$wheel") / 1000000))
((mb < 40)) || { echo "clean-root: the wheel is $mb MB, over its 40 MB budget" >&2; exit 1; }

tarball=$cache/clean-root-bookworm.tar
[[ -s $tarball ]] || echo "clean-root: making the Debian 12 root (debootstrap, about a minute)" >&2
bash scripts/engines/make-rootfs.sh debian "$tarball" python3,python3-venv

# The package's dependencies as wheels for Debian 12's CPython 3.11, fetched once: by this
# interpreter, which built a cp311 wheel, so its own tags are the root's. With them the sdist's
# build requirements, so that pip reaches the sdist's own check.
sdist=$(ls "$(dirname "$wheel")"/torchx-*.tar.gz 2>/dev/null | head -1 || true)
[[ -n $sdist ]] || { echo "clean-root: no sdist beside $wheel (scripts/build-wheel.sh makes both)" >&2; exit 1; }
wheelhouse=$cache/wheelhouse-cp311
mkdir -p "$wheelhouse"
mapfile -t requires < <("$py" - "$wheel" <<'EOF'
import sys, tomllib, zipfile
from email.parser import Parser
with zipfile.ZipFile(sys.argv[1]) as z:
    meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
    msg = Parser().parsestr(z.read(meta).decode())
for req in msg.get_all("Requires-Dist") or []:
    if "extra ==" not in req:
        print(req.split(";")[0].strip())
with open("pyproject.toml", "rb") as f:
    print("\n".join(tomllib.load(f)["build-system"]["requires"]))
EOF
)
if ! "$py" -m pip download -q --no-index --find-links "$wheelhouse" --only-binary=:all: --dest "$wheelhouse" \
    "${requires[@]}" >/dev/null 2>&1; then
  echo "clean-root: fetching ${requires[*]} into $wheelhouse" >&2
  "$py" -m pip download -q --only-binary=:all: --dest "$wheelhouse" "${requires[@]}"
fi

work=$(mktemp -d /tmp/torchx-clean-root.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root" "$work/out"
tar -C "$root" -xf "$tarball"
mkdir -p "$root/opt/in/wheelhouse" "$root/opt/out"
cp "$wheel" "$sdist" "$root/opt/in/"
cp "$wheelhouse"/*.whl "$root/opt/in/wheelhouse/"
cp tests/install/clean_root_check.sh "$root/opt/in/check.sh"

echo "clean-root: entering $root" >&2
status=0
timeout -k 15 600 unshare --mount --pid --fork --net --propagation private bash -c '
  set -e
  root=$1
  ip link set lo up
  mount -t proc proc "$root/proc"
  mount -t sysfs sysfs "$root/sys" 2>/dev/null || true
  mount --rbind /dev "$root/dev"
  mount -t tmpfs tmpfs "$root/tmp"
  mount --bind "$2" "$root/opt/out"
  exec chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/bash /opt/in/check.sh
' _ "$root" "$work/out" || status=$?
if [[ -s $work/out/install_ms ]]; then
  echo "clean-root: the wheel ($(du -m "$wheel" | cut -f1) MB) installed in $(cat "$work/out/install_ms") ms" >&2
fi
exit "$status"
