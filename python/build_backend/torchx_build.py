"""The package's build backend: scikit-build-core's, after a check that the machine can build the
C++ core at all. Building from source (an sdist, a checkout) needs a C++ compiler, CMake, Ninja,
pkg-config and a dozen libraries' headers; without this check a missing one surfaces minutes into
the build as a compiler or CMake error. Here every missing piece is named at once, before anything
is compiled, with the Debian package that provides it and the one `apt-get install` line.

TORCHX_BUILD_CHECK=0 skips the check (headers in a place it does not look, a non-Debian system).
"""

import os
import platform
import shlex
import shutil
import subprocess
import sys
from typing import List, Optional, Tuple

from scikit_build_core import build as _skbuild

# (what is missing, how it is found, the Debian package). Tools by name on PATH; headers by path.
_TOOLS: List[Tuple[str, Tuple[str, ...], str]] = [
    ("a C++ compiler", ("c++", "g++", "clang++"), "g++"),
    ("CMake (3.25 or newer)", ("cmake",), "cmake"),
    ("Ninja", ("ninja",), "ninja-build"),
    ("pkg-config", ("pkg-config", "pkgconf"), "pkg-config"),
]
_HEADERS: List[Tuple[str, str, str]] = [
    ("nlohmann/json", "nlohmann/json.hpp", "nlohmann-json3-dev"),
    ("yaml-cpp", "yaml-cpp/yaml.h", "libyaml-cpp-dev"),
    ("CLI11", "CLI/CLI.hpp", "libcli11-dev"),
    ("fmt", "fmt/format.h", "libfmt-dev"),
    ("inih", "INIReader.h", "libinih-dev"),
    ("SQLite", "sqlite3.h", "libsqlite3-dev"),
    ("libcurl", "curl/curl.h", "libcurl4-openssl-dev"),
    ("cpp-httplib", "httplib.h", "libcpp-httplib-dev"),
    ("RE2", "re2/re2.h", "libre2-dev"),
    ("libzip", "zip.h", "libzip-dev"),
    ("OpenSSL", "openssl/evp.h", "libssl-dev"),
]


def _include_dirs() -> List[str]:
    dirs = []
    for var in ("CPLUS_INCLUDE_PATH", "CPATH"):
        dirs += [d for d in os.environ.get(var, "").split(os.pathsep) if d]
    multiarch = f"{platform.machine()}-linux-gnu"
    for prefix in ("/usr/local/include", "/usr/include"):
        dirs += [os.path.join(prefix, multiarch), prefix]
    return dirs


def _cmake_too_old(cmake: str) -> Optional[str]:
    try:
        out = subprocess.run([cmake, "--version"], capture_output=True, text=True, timeout=30).stdout
        version = tuple(int(p) for p in out.split()[2].split(".")[:2])
    except (OSError, subprocess.SubprocessError, IndexError, ValueError):
        return None
    return None if version >= (3, 25) else ".".join(str(p) for p in version)


def missing_build_requirements() -> List[Tuple[str, str]]:
    """What this machine lacks to build the core: (description, Debian package), in order."""
    missing = []
    for what, names, package in _TOOLS:
        # CXX may carry a launcher or flags ("ccache g++"): its program is the first word.
        env = shlex.split(os.environ.get("CXX", "")) if package == "g++" else []
        found = shutil.which(env[0]) if env else next((shutil.which(n) for n in names if shutil.which(n)), None)
        if not found:
            missing.append((what, package))
        elif package == "cmake" and (old := _cmake_too_old(found)):
            missing.append((f"CMake 3.25 or newer (found {old})", package))
    dirs = _include_dirs()
    for what, header, package in _HEADERS:
        if not any(os.path.exists(os.path.join(d, header)) for d in dirs):
            missing.append((f"{what}'s headers ({header})", package))
    return missing


def _check() -> None:
    if os.environ.get("TORCHX_BUILD_CHECK", "1") == "0":
        return
    missing = missing_build_requirements()
    if not missing:
        return
    packages = sorted({package for _, package in missing})
    lines = ["torchx: cannot build the C++ core from source on this machine; it lacks:"]
    lines += [f"  - {what}: Debian package {package}" for what, package in missing]
    lines += [
        "Install them with:",
        f"  sudo apt-get install -y --no-install-recommends {' '.join(packages)}",
        "or install the binary wheel, which needs none of them (docs/install.md).",
        "(TORCHX_BUILD_CHECK=0 skips this check.)",
    ]
    sys.exit("\n".join(lines))


def get_requires_for_build_wheel(config_settings=None):
    _check()
    return _skbuild.get_requires_for_build_wheel(config_settings)


def get_requires_for_build_editable(config_settings=None):
    _check()
    return _skbuild.get_requires_for_build_editable(config_settings)


def get_requires_for_build_sdist(config_settings=None):
    return _skbuild.get_requires_for_build_sdist(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _skbuild.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _skbuild.prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _check()
    return _skbuild.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _check()
    return _skbuild.build_editable(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    return _skbuild.build_sdist(sdist_directory, config_settings)
