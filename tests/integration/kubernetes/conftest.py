"""Fixtures shared by the kubernetes tests: the API server fake and the PKI it serves TLS with."""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from fake_apiserver import FakeApiServer, make_pki  # noqa: E402


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def server(pki):
    s = FakeApiServer(pki)
    yield s
    s.stop()
