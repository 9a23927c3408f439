"""torchx.pipelines: TorchX apps as stages of ML pipelines (``torchx.pipelines.kfp`` for Kubeflow
Pipelines v2), and pipelines of dependent jobs run by the launcher itself.

Dependent jobs: ``run`` takes a pipeline file (docs/pipelines.md) or the same as a dict, validates
every step (nothing is submitted if one is wrong) and starts it, returning a handle
``pipeline://<session>/<id>`` that ``torchx.runner.Runner``'s status / wait / log_lines / cancel /
list / describe take like any app's::

    from torchx.pipelines import run
    from torchx.runner import get_runner

    handle = run("pipeline.yaml", scheduler="slurm")
    status = get_runner().wait(handle)
"""

import json
import os
from typing import Any, Dict, Mapping, Optional, Union

from torchx.runner import Runner, get_runner

__all__ = ["run", "dryrun"]

PipelineSource = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def _text_of(pipeline: PipelineSource) -> "tuple[str, str]":
    if isinstance(pipeline, Mapping):
        return json.dumps(dict(pipeline), ensure_ascii=False), "pipeline"
    path = os.fspath(pipeline)
    with open(path, encoding="utf-8") as f:
        return f.read(), path


def _call(pipeline: PipelineSource, scheduler: Optional[str], cfg: Optional[Dict[str, Any]], name: Optional[str],
          runner: Optional[Runner], dryrun: bool) -> str:
    text, origin = _text_of(pipeline)
    core = (runner or get_runner())._core
    overrides: Dict[str, Any] = {}
    if cfg:
        overrides["cfg"] = dict(cfg)
    if name:
        overrides["name"] = name
    return core.launch_composite("pipeline", text, origin, scheduler or "", json.dumps(overrides, ensure_ascii=False),
                                 dryrun)


def run(pipeline: PipelineSource, scheduler: Optional[str] = None, cfg: Optional[Dict[str, Any]] = None,
        name: Optional[str] = None, runner: Optional[Runner] = None) -> str:
    """Validates and starts a pipeline; returns its handle. ``scheduler``: for steps that name
    none (default: the file's, else local_cwd); ``cfg``: options for those steps, over the file's
    ``cfg``. Raises ``ValueError`` naming the step and field for a bad pipeline."""
    return _call(pipeline, scheduler, cfg, name, runner, False)


def dryrun(pipeline: PipelineSource, scheduler: Optional[str] = None, cfg: Optional[Dict[str, Any]] = None,
           name: Optional[str] = None, runner: Optional[Runner] = None) -> str:
    """What ``run`` would submit, step by step (every step validated); submits nothing."""
    return _call(pipeline, scheduler, cfg, name, runner, True)
