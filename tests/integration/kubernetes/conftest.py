"""Fixtures shared by the kubernetes tests: the API server fake and the PKI it serves TLS with."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from apiserver_fixtures import pki, server  # noqa: E402,F401  (fixtures)
