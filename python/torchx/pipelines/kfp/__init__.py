"""TorchX apps as Kubeflow Pipelines v2 steps (kfp 2.x).

TorchX 0.7.0's adapter targets kfp 1.x (``ContainerOp``, removed in kfp 2) and TorchX HEAD
retired pipelines; this package keeps TorchX's names (``container_from_app``,
``component_from_app``, ``component_spec_from_app``, ``resource_from_app``) over kfp 2.x.
See docs/pipelines.md.
"""

import kfp

from torchx.version import __version__  # noqa: F401


def _check_kfp_version() -> None:
    major = str(getattr(kfp, "__version__", "0")).split(".", 1)[0]
    if not major.isdigit() or int(major) < 2:
        raise ImportError(
            f"torchx.pipelines.kfp needs kfp 2.x (Kubeflow Pipelines v2), found kfp {kfp.__version__}; "
            "pip install 'kfp>=2'"
        )


_check_kfp_version()

from torchx.pipelines.kfp.adapter import (  # noqa: E402
    component_from_app,
    component_spec_from_app,
    container_from_app,
    resource_from_app,
)

__all__ = ["component_from_app", "component_spec_from_app", "container_from_app", "resource_from_app"]
