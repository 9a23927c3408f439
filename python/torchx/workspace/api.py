"""``WorkspaceMixin``: the part of a Python scheduler that turns a role's local workspace into
something the job can run (an image, a patch), before the dry run (TorchX's
torchx.workspace.api). ``Scheduler.submit`` calls ``build_workspaces`` for a scheduler that mixes
this in; ``run_opts`` adds ``workspace_opts``. The CLI's built-in back-ends build workspaces in
the core (local_docker, kubernetes, slurm)."""

import abc
import logging
import posixpath
import tempfile
from typing import TYPE_CHECKING, Any, Dict, Generic, Iterator, List, Mapping, Tuple, TypeVar

from torchx.specs.api import AppDef, CfgVal, Role, runopts

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

logger: logging.Logger = logging.getLogger(__name__)

TORCHX_IGNORE = ".torchxignore"
# Never excluded: the Dockerfile a workspace build needs, and the workspace's root.
_ALWAYS_KEPT = (".", "Dockerfile.torchx")

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


def _has_push_step(builder: WorkspaceMixin[Any]) -> bool:
    # A builder that keeps the base dryrun_push_images has no push step: its build already put
    # the artifact where the job reads it.
    return type(builder).dryrun_push_images is not WorkspaceMixin.dryrun_push_images


class MultiWorkspaceMixin(WorkspaceMixin[Tuple[str, Any]]):
    """A scheduler mix-in offering several workspace builders, one picked per run by the
    ``workspace_type`` run option (torchx-nightly's, TorchX #1458): a Python scheduler whose
    engine takes more than one kind of image returns ``{name: builder}`` from
    ``workspace_builders`` (the first is the default, so adding this mix-in changes nothing until
    a user sets the option). Every WorkspaceMixin call goes to the selected builder;
    ``workspace_opts`` is the selector plus the union of the builders' options. The built-in Slurm
    back-end reads the same option in the core."""

    WORKSPACE_TYPE_OPT: str = "workspace_type"

    @abc.abstractmethod
    def workspace_builders(self) -> Mapping[str, WorkspaceMixin[Any]]:
        """``{name: builder}``, the first the default; the same instances on every call (the push
        step finds the builder that built by name)."""

    def workspace_opts(self) -> runopts:
        builders = self.workspace_builders()
        if not builders:
            raise ValueError(f"{type(self).__name__}.workspace_builders() returned no builders")
        names = list(builders)
        opts = runopts()
        opts.add(self.WORKSPACE_TYPE_OPT, type_=str, default=names[0],
                 help=f"which workspace builder patches the image: one of {', '.join(names)}")
        for builder in builders.values():
            opts.update(builder.workspace_opts())
        return opts

    def workspace_builder(self, cfg: Mapping[str, CfgVal]) -> Tuple[str, WorkspaceMixin[Any]]:
        """``(name, builder)`` for ``cfg["workspace_type"]`` (the first when unset); ValueError
        naming the choices for a name this scheduler does not offer."""
        builders = self.workspace_builders()
        name = cfg.get(self.WORKSPACE_TYPE_OPT)
        if name is None:
            name = next(iter(builders))
        if not isinstance(name, str) or name not in builders:
            raise ValueError(f"unknown {self.WORKSPACE_TYPE_OPT} `{name}`; this scheduler offers: {', '.join(builders)}")
        return name, builders[name]

    def caching_build_workspace_and_update_role(
        self, role: Role, cfg: Mapping[str, CfgVal], build_cache: Dict[object, object]
    ) -> None:
        self.workspace_builder(cfg)[1].caching_build_workspace_and_update_role(role, cfg, build_cache)

    def dryrun_push_images(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> Tuple[str, Any]:
        """``(name, images)``: the selected builder's push dry run (``images`` None for a builder
        with no push step), so that ``push_images`` finds the same builder again."""
        name, builder = self.workspace_builder(cfg)
        return name, builder.dryrun_push_images(app, cfg) if _has_push_step(builder) else None

    def push_images(self, images_to_push: Tuple[str, Any]) -> None:
        name, images = images_to_push
        if images is not None:
            self.workspace_builders()[name].push_images(images)


def _read_ignore_patterns(fs: "AbstractFileSystem", ignore_path: str) -> List[str]:
    """The patterns of an ignore file as TorchX reads ``.torchxignore``: ``#`` starts a comment
    anywhere on a line, lines are stripped, and ``.`` (the whole workspace) is not a pattern."""
    if not fs.exists(ignore_path):
        return []
    with fs.open(ignore_path, "rt") as f:
        text = f.read()
    patterns = []
    for line in text.splitlines():
        pattern = line.partition("#")[0].strip()
        if pattern and pattern != ".":
            patterns.append(pattern)
    return patterns


def _is_ignored(rel: str, patterns: List[str]) -> bool:
    if not patterns or rel in _ALWAYS_KEPT:
        return False
    from torchx._core import core

    return core().workspace_path_ignored(posixpath.normpath(rel), patterns)


def walk_workspace(
    fs: "AbstractFileSystem", path: str, ignore_name: str = TORCHX_IGNORE
) -> Iterator[Tuple[str, List[str], Dict[str, Mapping[str, Any]]]]:
    """Walks the workspace ``path`` on the fsspec filesystem ``fs`` top-down, as ``fs.walk`` with
    ``detail=True`` does (``(dir, subdir names, {file name: info})``), leaving out what the
    ignore file ``ignore_name`` at its root excludes (dockerignore rules, matched by the core as
    the built-in back-ends' workspace builds match them). An excluded directory is not entered."""
    # TorchX walks a missing workspace as an empty one; a mistyped path would then build or copy
    # nothing without a word, so it is an error here (docs/compatibility.md).
    if not fs.isdir(path):
        raise FileNotFoundError(f"workspace: `{path}` is not a directory on {type(fs).__name__}")
    patterns = _read_ignore_patterns(fs, posixpath.join(path, ignore_name))
    pending = [path]
    while pending:
        current = pending.pop()
        rel_dir = posixpath.relpath(current, path)
        dirs: List[str] = []
        files: Dict[str, Mapping[str, Any]] = {}
        for info in fs.ls(current, detail=True):
            name = posixpath.basename(str(info["name"]).rstrip("/"))
            rel = name if rel_dir == "." else posixpath.join(rel_dir, name)
            if _is_ignored(rel, patterns):
                continue
            if info.get("type") == "directory":
                dirs.append(name)
            else:
                files[name] = info
        yield current, dirs, files
        pending.extend(posixpath.join(current, d) for d in reversed(dirs))
