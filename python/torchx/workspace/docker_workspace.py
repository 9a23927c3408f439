"""Workspaces built into container images (TorchX's torchx.workspace.docker_workspace): the
workspace is sent to the Docker daemon as a build context on top of the role's image, and the
role runs the new image; ``dryrun_push_images``/``push_images`` take it to ``image_repo`` for
remote clusters.

For Python schedulers (plugins) that mix this in; they talk to the daemon through the docker-py
client they are given (``docker_client=``), else ``docker.from_env()``. The built-in back-ends
(local_docker, kubernetes) build the same image in the core (``src/container_engine``), with the
same Dockerfile and build arguments."""

import io
import logging
import posixpath
import stat
import sys
import tarfile
import tempfile
from typing import IO, TYPE_CHECKING, Dict, Iterable, List, Mapping, Optional, TextIO, Tuple

from torchx.specs.api import AppDef, CfgVal, Role, runopts
from torchx.workspace.api import walk_workspace, WorkspaceMixin

if TYPE_CHECKING:
    from docker import DockerClient

log: logging.Logger = logging.getLogger(__name__)

TORCHX_DOCKERFILE = "Dockerfile.torchx"

# Used when the workspace has no Dockerfile.torchx of its own.
DEFAULT_DOCKERFILE = b"""ARG IMAGE
FROM $IMAGE

COPY . .
"""

_IMAGE_ID_PREFIX = "sha256:"

ImagesToPush = Dict[str, Tuple[str, str]]  # local image id -> (repository, tag)


class DockerWorkspaceMixin(WorkspaceMixin[ImagesToPush]):
    """Builds each role's workspace into an image (``Dockerfile.torchx`` from the workspace, with
    the build arguments ``IMAGE`` (the role's image) and ``WORKSPACE``, else ``COPY . .`` on top of
    the role's image; ``.dockerignore`` leaves files out) and points the role at it."""

    LABEL_VERSION: str = "torchx.pytorch.org/version"

    def __init__(self, *args: object, docker_client: Optional["DockerClient"] = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.__docker_client = docker_client

    @property
    def _docker_client(self) -> "DockerClient":
        if self.__docker_client is None:
            import docker

            self.__docker_client = docker.from_env()
        return self.__docker_client

    def workspace_opts(self) -> runopts:
        opts = runopts()
        opts.add(
            "image_repo",
            type_=str,
            help="(remote jobs) the image repository workspace images are pushed to (push access needed),"
            " e.g. example.com/your/container",
        )
        opts.add("quiet", type_=bool, default=False, help="hide the image build's output")
        return opts

    def build_workspace_and_update_role(self, role: Role, workspace: str, cfg: Mapping[str, CfgVal]) -> None:
        import torchx

        client = self._docker_client
        context = _build_context(role.image, workspace)
        try:
            # A newer base image if the registry has one; a local-only image is fine as it is.
            try:
                client.images.pull(role.image)
            except Exception as e:  # noqa: BLE001 - any failure means: build on the local image
                log.warning("could not pull `%s`, building on the local image: %s", role.image, e)
            log.info("building the workspace image (this may take a while)...")
            events = client.api.build(
                fileobj=context,
                custom_context=True,
                dockerfile=TORCHX_DOCKERFILE,
                buildargs={"IMAGE": role.image, "WORKSPACE": workspace},
                pull=False,
                rm=True,
                decode=True,
                labels={self.LABEL_VERSION: torchx.__version__},
            )
            role.image = _image_id_from_build(events, quiet=bool(cfg.get("quiet", False)))
        finally:
            context.close()

    def dryrun_push_images(self, app: AppDef, cfg: Mapping[str, CfgVal]) -> ImagesToPush:
        """Renames every role's locally built image (``sha256:<hash>``) to ``<image_repo>:<hash>``
        and returns what ``push_images`` must push; ``KeyError`` when there is one and no
        ``image_repo``."""
        image_repo = cfg.get("image_repo")
        to_push: ImagesToPush = {}
        for role in app.roles:
            if not role.image.startswith(_IMAGE_ID_PREFIX):
                continue
            if not image_repo:
                raise KeyError(
                    f"image_repo: the role `{role.name}` runs the local image {role.image}, which must be pushed"
                    " somewhere the cluster can pull from: set the `image_repo` option"
                )
            if not isinstance(image_repo, str):
                raise TypeError(f"image_repo: expected str, got {type(image_repo).__name__}")
            tag = role.image[len(_IMAGE_ID_PREFIX) :]
            to_push[role.image] = (image_repo, tag)
            role.image = f"{image_repo}:{tag}"
        return to_push

    def push_images(self, images_to_push: ImagesToPush) -> None:
        """Tags and pushes each image (credentials: ``docker login``)."""
        if not images_to_push:
            return
        client = self._docker_client
        for local, (repo, tag) in images_to_push.items():
            log.info("pushing image `%s:%s`...", repo, tag)
            client.images.get(local).tag(repo, tag=tag)
            print_push_events(client.images.push(repo, tag=tag, stream=True, decode=True))


def _image_id_from_build(events: Iterable[Mapping[str, object]], quiet: bool) -> str:
    """The built image's id from the daemon's build events (its ``aux`` record); the build's
    output goes to the log unless ``quiet``; a build error raises docker's ``BuildError``."""
    image_id: Optional[str] = None
    for event in events:
        text = event.get("stream")
        if text and not quiet:
            line = str(text).strip("\r\n")
            if line:
                log.info(line)
        aux = event.get("aux")
        if isinstance(aux, Mapping) and "ID" in aux:
            image_id = str(aux["ID"])
        error = event.get("error")
        if error:
            from docker.errors import BuildError

            raise BuildError(reason=error, build_log=None)
    if not image_id:
        raise RuntimeError("the Docker daemon finished the workspace build without naming the image it built")
    return image_id


def print_push_events(events: Iterable[Mapping[str, str]], stream: TextIO = sys.stderr) -> None:
    """Shows a push's progress as ``docker push`` does: one line per layer, rewritten in place
    (ANSI cursor moves) as it progresses. A push error raises ``RuntimeError``."""
    header = "\033[34mdocker push \033[0m"
    layers: List[str] = []
    for event in events:
        if "error" in event:
            raise RuntimeError(f"failed to push docker image: {event['error']}")
        status = event.get("status")
        if not status:
            continue
        layer = event.get("id")
        if not layer:
            stream.write(f"{header}{status}\n")
            continue
        line = f"{header}{layer}: {status} {event.get('progress', '')}"
        if layer not in layers:
            layers.append(layer)
            stream.write(line + "\n")
        else:
            up = len(layers) - layers.index(layer)  # lines between here and the layer's line
            stream.write(f"\033[{up}F\033[2K{line}\033[{up}E")


def _build_context(image: str, workspace: str) -> IO[bytes]:
    """A tar of the workspace (what ``.dockerignore`` keeps), with the default Dockerfile.torchx
    added when the workspace has none; a temporary file the caller closes."""
    f = tempfile.NamedTemporaryFile(prefix="torchx-context", suffix=".tar")
    try:
        with tarfile.open(fileobj=f, mode="w") as tf:
            _copy_to_tarfile(workspace, tf)
            if TORCHX_DOCKERFILE not in tf.getnames():
                info = tarfile.TarInfo(TORCHX_DOCKERFILE)
                info.size = len(DEFAULT_DOCKERFILE)
                tf.addfile(info, io.BytesIO(DEFAULT_DOCKERFILE))
    except BaseException:
        f.close()
        raise
    f.seek(0)
    return f


def _copy_to_tarfile(workspace: str, tf: tarfile.TarFile) -> None:
    """Adds the files of the fsspec path ``workspace`` that ``.dockerignore`` keeps to ``tf``,
    with their unix permissions where the filesystem has them."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(workspace)
    log.info("workspace `%s` is `%s` on %s", workspace, root, type(fs).__name__)
    for directory, _, files in walk_workspace(fs, root, ".dockerignore"):
        rel_dir = posixpath.relpath(directory, root)
        for name, info in files.items():
            member = tarfile.TarInfo(name if rel_dir == "." else posixpath.join(rel_dir, name))
            if info.get("islink"):  # a symlink stays one (its listed size is the link's, not the target's)
                member.type = tarfile.SYMTYPE
                member.linkname = str(info["destination"])  # fsspec lists a link with its target
                tf.addfile(member)
                continue
            member.size = int(info["size"])
            if "mode" in info:  # memory:// and object stores have none
                member.mode = stat.S_IMODE(int(info["mode"]))
            with fs.open(info["name"], "rb") as src:
                tf.addfile(member, src)
