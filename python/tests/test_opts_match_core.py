"""Each scheduler's typed run-option dataclass (TorchX's StructuredOpts: SlurmOpts, the local,
docker and kubernetes Opts) is written by hand for its docstrings, while the scheduler's runopts
come from the core. This test fails when the two disagree: an option missing from either side, or
a different type, default or required flag."""

import pytest

from torchx._core import core
from torchx.schedulers.docker_scheduler import Opts as DockerOpts
from torchx.schedulers.kubernetes_scheduler import Opts as KubernetesOpts
from torchx.schedulers.local_scheduler import Opts as LocalOpts
from torchx.schedulers.slurm_scheduler import SlurmOpts
from torchx.specs.api import runopts

TABLES = [("slurm", SlurmOpts), ("local_cwd", LocalOpts), ("local", LocalOpts), ("local_docker", DockerOpts),
          ("kubernetes", KubernetesOpts)]


def _table(opts):
    return {name: (opt.opt_type, opt.default, opt.is_required) for name, opt in opts}


@pytest.mark.parametrize("backend,opts_class", TABLES, ids=[t[0] for t in TABLES])
def test_python_option_table_is_the_cores(backend, opts_class):
    want = _table(runopts._from_json(core().scheduler_runopts(backend)))
    have = _table(opts_class.as_runopts())
    assert sorted(set(want) - set(have)) == [], f"{opts_class.__name__} lacks options the core declares"
    assert sorted(set(have) - set(want)) == [], f"{opts_class.__name__} has options the core does not declare"
    differ = {k: {"core": want[k], "python": have[k]} for k in want if want[k] != have[k]}
    assert differ == {}, f"{opts_class.__name__}: type, default or required differ"


def test_the_check_sees_a_missing_option():
    """The comparison itself: a table without one of the core's options differs."""
    want = _table(runopts._from_json(core().scheduler_runopts("slurm")))
    have = _table(SlurmOpts.as_runopts())
    have.pop("dependency")
    assert set(want) - set(have) == {"dependency"}
