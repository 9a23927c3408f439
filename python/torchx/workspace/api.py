"""``WorkspaceMixin``: the part of a Python scheduler that turns a role's local workspace into
something the job can run (an image, a patch), before the dry run (TorchX's
torchx.workspace.api). ``Scheduler.submit`` calls ``build_workspaces`` for a scheduler that mixes
this in; ``run_opts`` adds ``workspace_opts``. The CLI's built-in back-ends build workspaces in
the core (local_docker, kubernetes, slurm)."""

import abc
import logging
import tempfile
from typing import Dict, Generic, List, Mapping, TypeVar

from torchx.specs.api import AppDef, CfgVal, Role, runopts

logger: logging.Logger = logging.getLogger(__name__)

T = TypeVar("T")


class WorkspaceMixin(abc.ABC, Generic[T]):
    """Mix into a Scheduler; implement ``caching_build_workspace_and_update_role`` (or the older
    ``build_workspace_and_update_role``) and, for remote images, ``dryrun_push_images`` and
    ``push_images``."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]

    def workspace_opts(self) -> runopts:
        """Run options of the workspace build (added to the scheduler's)."""
        return runopts()

    def build_workspaces(self, roles: List[Role], cfg: Mapping[str, CfgVal]) -> None:
        """Builds each role's workspace and points the role at the result (``role.image``, maybe
        env); roles share one build cache for this call."""
        cache: Dict[object, object] = {}
        for i, role in enumerate(roles):
            if role.workspace:
                before = role.image
                self.caching_build_workspace_and_update_role(role, cfg, cache)
                if role.image != before:
                    logger.info("role[%d]=%s updated with new image to include workspace changes", i, role.name)

    def caching_build_workspace_and_update_role(
        self, role: Role, cfg: Mapping[str, CfgVal], build_cache: Dict[object, object]
    ) -> None:
        """By default: ``build_workspace_and_update_role`` on the workspace directory itself when
        it is one project at the root, else on a temporary directory the projects are merged
        into."""
        workspace = role.workspace
        if not workspace:
            return
        if workspace.is_unmapped_single_project():
            self.build_workspace_and_update_role(role, str(workspace), cfg)
            return
        with tempfile.TemporaryDirectory(suffix="torchx_workspace_") as outdir:
            workspace.merge_into(outdir)
            self.build_workspace_and_update_role(role, outdir, cfg)

    def build_workspace_and_update_role(self, role: Role, workspace: str, cfg: Mapping[str, CfgVal]) -> None:
        """Builds the directory ``workspace`` and updates ``role`` (deprecated in TorchX in favour
        of ``caching_build_workspace_and_update_role``)."""
        raise NotImplementedError("implement `caching_build_workspace_and_update_role`")

    def dryrun_push_images(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> T:
        """What ``push_images`` would push, with ``app``'s images renamed to their remote names."""
        raise NotImplementedError("dryrun_push is not implemented")

    def push_images(self, images_to_push: T) -> None:
        raise NotImplementedError("push is not implemented")
