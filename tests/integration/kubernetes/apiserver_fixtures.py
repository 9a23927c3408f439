"""What the kubernetes protocol tests and the kubernetes fault suite share: the API server fake
and its PKI as pytest fixtures, and the torchx CLI run against a kubeconfig."""

import os
import pathlib
import subprocess

import pytest

from fake_apiserver import FakeApiServer, make_pki

REPO = pathlib.Path(__file__).resolve().parents[3]
BINARY = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "debug" / "cli" / "torchx")


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def server(pki):
    s = FakeApiServer(pki)
    yield s
    s.stop()


def make_cli(tmp_path, config_text, extra_env=None):
    """torchx run in `tmp_path` with KUBECONFIG naming `config_text` (no TORCHX_KUBERNETES_* from
    the caller). `run.env` is the environment, for processes a test starts itself."""
    cfg = tmp_path / "kubeconfig"
    cfg.write_text(config_text)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHX_KUBERNETES")}
    env.update(KUBECONFIG=str(cfg), **(extra_env or {}))

    def run(*args, check=True, timeout=60):
        res = subprocess.run([BINARY, *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=timeout)
        assert res.returncode in (0, 1, 2), f"torchx {args} crashed: {res.returncode}\n{res.stderr}"
        if check:
            assert res.returncode == 0, f"torchx {' '.join(args)} -> {res.returncode}\n{res.stdout}\n{res.stderr}"
        return res

    run.env = env
    return run
