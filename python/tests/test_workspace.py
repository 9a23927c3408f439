"""torchx.workspace: walk_workspace over fsspec with the core's ignore rules, the directory
workspaces, and the docker workspace mixin's context, image renames and push output. The real
docker build is in tests/integration/docker (test_python_docker_workspace_mixin_...)."""

import io
import os
import tarfile

import fsspec
import pytest

from torchx.specs import AppDef, Role
from torchx.workspace import walk_workspace
from torchx.workspace.api import WorkspaceMixin
from torchx.workspace.dir_workspace import DirWorkspaceMixin, TmpDirWorkspaceMixin
from torchx.workspace.docker_workspace import (
    DEFAULT_DOCKERFILE,
    DockerWorkspaceMixin,
    _build_context,
    _image_id_from_build,
    print_push_events,
)


def _tree(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


def _walked(fs, root, ignore_name=".torchxignore"):
    out = set()
    for directory, _, files in walk_workspace(fs, root, ignore_name):
        rel = os.path.relpath(directory, root)
        out |= {name if rel == "." else f"{rel}/{name}" for name in files}
    return out


def test_walk_leaves_out_what_torchxignore_excludes_on_any_fsspec_filesystem():
    fs = fsspec.filesystem("memory")
    for rel in ["keep.py", "build/out.o", "logs/a.log", "src/x.log", "src/keep.log", "src/m.py", "Dockerfile.torchx"]:
        fs.pipe(f"/ws-walk/{rel}", b"x")
    # indented lines, inline comments, `.` and a pattern matching Dockerfile.torchx: TorchX's reading
    fs.pipe("/ws-walk/.torchxignore", b"  build   # outputs\n**/*.log\n!src/keep.log\n.\nDockerfile*\n")
    assert _walked(fs, "/ws-walk") == {".torchxignore", "keep.py", "src/keep.log", "src/m.py", "Dockerfile.torchx"}
    # another ignore file name, absent: everything
    assert "build/out.o" in _walked(fs, "/ws-walk", ".dockerignore")


def test_an_excluded_directory_is_not_entered(tmp_path):
    _tree(tmp_path, {"data/big.bin": "x", "data/sub/more.bin": "x", "a.py": ""})
    (tmp_path / ".torchxignore").write_text("data\n")
    dirs_seen = [d for d, _, _ in walk_workspace(fsspec.filesystem("file"), str(tmp_path))]
    assert dirs_seen == [str(tmp_path)]


def test_a_missing_workspace_is_an_error_naming_it():
    with pytest.raises(FileNotFoundError, match="workspace: .*no-such-dir"):
        list(walk_workspace(fsspec.filesystem("file"), "/no-such-dir"))


def test_dir_workspace_copies_into_job_dir_and_points_the_role_there(tmp_path):
    ws, job_dir = tmp_path / "ws", tmp_path / "job"
    _tree(ws, {"train.py": "print(1)", "ckpt/model.pt": "big", "lib/util.py": "u"})
    (ws / ".torchxignore").write_text("ckpt\n")
    role = Role(name="r", image="/shared/base")
    DirWorkspaceMixin().build_workspace_and_update_role(role, f"file://{ws}", {"job_dir": str(job_dir)})
    assert role.image == str(job_dir)
    assert (job_dir / "lib" / "util.py").read_text() == "u" and not (job_dir / "ckpt").exists()
    # an existing job_dir is refused: an earlier job's files would leak into this one
    with pytest.raises(FileExistsError):
        DirWorkspaceMixin().build_workspace_and_update_role(role, str(ws), {"job_dir": str(job_dir)})
    unchanged = Role(name="r", image="img")
    DirWorkspaceMixin().build_workspace_and_update_role(unchanged, str(ws), {})  # no job_dir: nothing to do
    assert unchanged.image == "img"


def test_dir_workspaces_create_nothing_for_a_missing_workspace(tmp_path):
    job_dir = tmp_path / "job"
    with pytest.raises(FileNotFoundError, match="workspace"):
        DirWorkspaceMixin().build_workspace_and_update_role(Role("r", "i"), str(tmp_path / "nope"), {"job_dir": str(job_dir)})
    assert not job_dir.exists()
    with pytest.raises(TypeError, match="job_dir"):
        DirWorkspaceMixin().build_workspace_and_update_role(Role("r", "i"), str(tmp_path), {"job_dir": 3})


def test_tmp_dir_workspace_copies_into_a_new_directory(tmp_path):
    _tree(tmp_path, {"a.txt": "A"})
    role = Role(name="r", image="img")
    TmpDirWorkspaceMixin().build_workspace_and_update_role(role, str(tmp_path), {})
    try:
        assert open(os.path.join(role.image, "a.txt")).read() == "A"
    finally:
        import shutil

        shutil.rmtree(role.image)


class _Scheduler(TmpDirWorkspaceMixin):
    pass


def test_build_workspaces_points_each_role_with_a_workspace_at_its_copy(tmp_path):
    from torchx.specs import Workspace

    _tree(tmp_path, {"a.txt": "A"})
    with_ws = Role(name="a", image="img", workspace=Workspace.from_str(str(tmp_path)))
    without = Role(name="b", image="img")
    _Scheduler().build_workspaces([with_ws, without], {})
    try:
        assert with_ws.image != "img" and without.image == "img"
    finally:
        import shutil

        shutil.rmtree(with_ws.image)
    assert isinstance(_Scheduler(), WorkspaceMixin)


def test_docker_context_holds_the_kept_files_and_the_default_dockerfile(tmp_path):
    _tree(tmp_path, {"run.sh": "#!/bin/sh", "out/x.o": "o"})
    os.chmod(tmp_path / "run.sh", 0o755)
    (tmp_path / ".dockerignore").write_text("out\n")
    with _build_context("base:1", str(tmp_path)) as f, tarfile.open(fileobj=f) as tf:
        assert sorted(tf.getnames()) == [".dockerignore", "Dockerfile.torchx", "run.sh"]
        assert tf.getmember("run.sh").mode == 0o755
        assert tf.extractfile("Dockerfile.torchx").read() == DEFAULT_DOCKERFILE
    (tmp_path / "Dockerfile.torchx").write_text("FROM scratch\n")  # the workspace's own wins
    with _build_context("base:1", str(tmp_path)) as f, tarfile.open(fileobj=f) as tf:
        assert tf.extractfile("Dockerfile.torchx").read() == b"FROM scratch\n"


def test_build_events_give_the_image_id_or_docker_build_error():
    assert _image_id_from_build([{"stream": "Step 1/2\n"}, {"aux": {"ID": "sha256:abc"}}], quiet=False) == "sha256:abc"
    from docker.errors import BuildError

    with pytest.raises(BuildError, match="no space left"):
        _image_id_from_build([{"stream": "Step 1/2"}, {"error": "no space left"}], quiet=True)
    with pytest.raises(RuntimeError, match="without naming the image"):
        _image_id_from_build([{"stream": "done"}], quiet=True)


def test_dryrun_push_renames_local_images_to_image_repo():
    app = AppDef("app", roles=[Role("a", image="sha256:1234"), Role("b", image="busybox:latest")])
    mixin = DockerWorkspaceMixin(docker_client=object())
    with pytest.raises(KeyError, match="image_repo"):
        mixin.dryrun_push_images(app, {})
    assert mixin.dryrun_push_images(app, {"image_repo": "registry.local/team/x"}) == {
        "sha256:1234": ("registry.local/team/x", "1234")
    }
    assert [r.image for r in app.roles] == ["registry.local/team/x:1234", "busybox:latest"]
    assert {"image_repo", "quiet"} <= set(mixin.workspace_opts()._opts)


def test_push_progress_rewrites_each_layers_line_and_errors_raise():
    out = io.StringIO()
    print_push_events(
        [{"status": "The push refers to repository"}, {"id": "l1", "status": "Pushing", "progress": "[=> ]"},
         {"id": "l2", "status": "Pushing"}, {"id": "l1", "status": "Pushed"}],
        stream=out,
    )
    text = out.getvalue()
    assert text.count("\n") == 3 and "l1: Pushed" in text and "\033[2F" in text
    with pytest.raises(RuntimeError, match="denied"):
        print_push_events([{"error": "denied: requested access"}], stream=io.StringIO())


def test_symlinks_stay_symlinks_in_copies_and_build_contexts(tmp_path):
    ws = tmp_path / "ws"
    _tree(ws, {"data/a.txt": "A"})
    os.symlink("data/a.txt", ws / "link.txt")
    os.symlink("data", ws / "linkdir")
    os.symlink("nowhere", ws / "dangling")
    with _build_context("base:1", str(ws)) as f, tarfile.open(fileobj=f) as tf:
        assert tf.getmember("link.txt").issym() and tf.getmember("link.txt").linkname == "data/a.txt"
        assert tf.getmember("dangling").linkname == "nowhere" and tf.getmember("linkdir").issym()
        assert tf.extractfile("data/a.txt").read() == b"A"
    job_dir = tmp_path / "job"
    DirWorkspaceMixin().build_workspace_and_update_role(Role("r", "i"), str(ws), {"job_dir": str(job_dir)})
    assert os.readlink(job_dir / "link.txt") == "data/a.txt" and (job_dir / "link.txt").read_text() == "A"
    assert os.readlink(job_dir / "dangling") == "nowhere"


def test_a_job_dir_inside_the_workspace_is_not_copied_into_itself(tmp_path):
    _tree(tmp_path, {"train.py": "t", "lib/u.py": "u"})
    job_dir = tmp_path / "job"
    DirWorkspaceMixin().build_workspace_and_update_role(Role("r", "i"), str(tmp_path), {"job_dir": str(job_dir)})
    assert sorted(os.listdir(job_dir)) == ["lib", "train.py"]


def test_a_failed_copy_leaves_no_job_dir_behind(tmp_path, monkeypatch):
    import torchx.workspace.dir_workspace as dw

    _tree(tmp_path / "ws", {"a.txt": "A"})
    job_dir = tmp_path / "job"

    def broken(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(dw.shutil, "copyfileobj", broken)
    with pytest.raises(OSError, match="disk full"):
        DirWorkspaceMixin().build_workspace_and_update_role(Role("r", "i"), str(tmp_path / "ws"), {"job_dir": str(job_dir)})
    assert not job_dir.exists()


def test_runner_warns_for_a_deprecated_builtin_as_calling_it_does():
    import warnings

    from torchx.runner import get_runner

    with pytest.warns(UserWarning, match=r"dist.ddp is deprecated"):
        get_runner().dryrun_component("dist.ddp", ["--script", "t.py"], "local_cwd")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        get_runner().dryrun_component("dist.torchrun", ["--script", "t.py"], "local_cwd")


class _PushingBuilder(WorkspaceMixin):
    def __init__(self) -> None:
        super().__init__()
        self.pushed = []

    def workspace_opts(self):
        from torchx.specs import runopts

        opts = runopts()
        opts.add("image_repo", type_=str, default=None, help="where images go")
        return opts

    def build_workspace_and_update_role(self, role, workspace, cfg):
        role.image = f"{role.image}+built"

    def dryrun_push_images(self, app, cfg):
        return [r.image for r in app.roles]

    def push_images(self, images_to_push):
        self.pushed.append(images_to_push)


def test_multi_workspace_mixin_picks_a_builder_by_workspace_type(tmp_path):
    from torchx.workspace import MultiWorkspaceMixin

    class TwoWays(MultiWorkspaceMixin):
        def __init__(self) -> None:
            super().__init__()
            self.builders = {"dir": DirWorkspaceMixin(), "image": _PushingBuilder()}

        def workspace_builders(self):
            return self.builders

    mixin = TwoWays()
    assert mixin.workspace_builder({})[0] == "dir"  # the first is the default
    assert mixin.workspace_builder({"workspace_type": "image"})[0] == "image"
    opts = mixin.workspace_opts()
    assert opts.get("workspace_type").default == "dir" and opts.get("image_repo") is not None
    with pytest.raises(ValueError, match="unknown workspace_type `zip`; this scheduler offers: dir, image"):
        mixin.workspace_builder({"workspace_type": "zip"})

    ws = tmp_path / "ws"
    _tree(ws, {"train.py": "print(1)"})
    from torchx.specs import Workspace

    role = Role(name="r", image="base", workspace=Workspace.from_str(str(ws)))
    mixin.build_workspaces([role], {"workspace_type": "image"})
    assert role.image == "base+built"
    app = AppDef("a", roles=[role])
    images = mixin.dryrun_push_images(app, {"workspace_type": "image"})
    assert images == ("image", ["base+built"])
    mixin.push_images(images)
    assert mixin.builders["image"].pushed == [["base+built"]]
    assert mixin.dryrun_push_images(app, {}) == ("dir", None)  # dir has no push step
    mixin.push_images(("dir", None))  # nothing to push
