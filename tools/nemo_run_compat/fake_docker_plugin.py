"""A pytest plugin (`-p fake_docker_plugin`, with this directory on PYTHONPATH) for NeMo-Run's
docker scheduler tests on a machine without a docker daemon: docker.from_env() returns a mock
client, as the tests' own mocks expect one to exist. Only for run_nemo_run.sh's docker check."""

from unittest import mock

import docker

docker.from_env = lambda *args, **kwargs: mock.MagicMock(name="docker_client")
