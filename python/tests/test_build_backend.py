"""The package's build backend (python/build_backend/torchx_build.py): before anything compiles, it
names every tool and library the machine lacks with its Debian package and one apt-get line."""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "build_backend"))
import torchx_build  # noqa: E402


@pytest.fixture
def bare_machine(tmp_path, monkeypatch):
    """No tool on PATH and an include directory holding only the headers a test puts there."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "include").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.delenv("TORCHX_BUILD_CHECK", raising=False)
    monkeypatch.setattr(torchx_build, "_include_dirs", lambda: [str(tmp_path / "include")])
    return tmp_path


def tool(machine, name, script="#!/bin/sh\nexit 0\n"):
    path = machine / "bin" / name
    path.write_text(script)
    path.chmod(0o755)


def test_a_bare_machine_lacks_every_tool_and_header_each_with_its_debian_package(bare_machine):
    missing = dict(torchx_build.missing_build_requirements())
    assert missing["a C++ compiler"] == "g++"
    assert missing["Ninja"] == "ninja-build"
    assert missing["yaml-cpp's headers (yaml-cpp/yaml.h)"] == "libyaml-cpp-dev"
    assert missing["libcurl's headers (curl/curl.h)"] == "libcurl4-openssl-dev"
    assert len(missing) == len(torchx_build._TOOLS) + len(torchx_build._HEADERS)


def test_what_is_present_is_not_named(bare_machine):
    tool(bare_machine, "g++")
    tool(bare_machine, "cmake", "#!/bin/sh\necho 'cmake version 3.25.1'\n")
    (bare_machine / "include" / "yaml-cpp").mkdir()
    (bare_machine / "include" / "yaml-cpp" / "yaml.h").write_text("")
    packages = {package for _, package in torchx_build.missing_build_requirements()}
    assert not packages & {"g++", "cmake", "libyaml-cpp-dev"}
    assert {"ninja-build", "libre2-dev"} <= packages


def test_a_cmake_too_old_is_named_with_its_version(bare_machine):
    tool(bare_machine, "cmake", "#!/bin/sh\necho 'cmake version 3.18.4'\n")
    missing = dict(torchx_build.missing_build_requirements())
    assert missing["CMake 3.25 or newer (found 3.18)"] == "cmake"


def test_the_check_stops_the_build_with_one_message_and_the_apt_line(bare_machine):
    with pytest.raises(SystemExit) as stopped:
        torchx_build.get_requires_for_build_wheel()
    message = str(stopped.value)
    assert message.startswith("torchx: cannot build the C++ core from source on this machine")
    assert "  - a C++ compiler: Debian package g++" in message
    apt = next(line for line in message.splitlines() if "apt-get install" in line)
    assert "g++" in apt.split() and "libyaml-cpp-dev" in apt.split() and "ninja-build" in apt.split()


def test_the_check_can_be_switched_off(bare_machine, monkeypatch):
    monkeypatch.setenv("TORCHX_BUILD_CHECK", "0")
    assert torchx_build._check() is None  # no SystemExit on a machine that lacks everything
