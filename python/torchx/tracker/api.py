"""The tracker interface (``TrackerBase``), how trackers are configured and built, and
``AppRun``, the current job's view of them. Kept light to import: the runner reads the
configuration on every dry run."""

import abc
import os
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional

from torchx import settings
if TYPE_CHECKING:  # type checkers know dataclasses, and records behave as they do
    from dataclasses import dataclass as record, field
else:
    from torchx._record import field, record
from torchx.util.torchxconfig import find_configs


def _logger() -> Any:
    # Made on first use: logging is a tenth of `import torchx.runner`'s time, and a warning rare.
    import logging

    return logging.getLogger(__name__)


def __getattr__(name: str) -> Any:
    if name == "logger":  # the module attribute TorchX has
        return _logger()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@record
class TrackerSource:
    """A run that another run came from (``source_run_id``), optionally through one of its
    artifacts."""

    source_run_id: str
    artifact_name: Optional[str]


@record
class TrackerArtifact:
    name: str
    path: str
    metadata: Optional[Mapping[str, object]]


@record
class AppRunTrackableSource:
    parent: "AppRun"
    artifact_name: Optional[str]


class Lineage:
    """The runs a run descends from and produced (not tracked yet by any built-in tracker)."""


class TrackerBase(abc.ABC):
    """A tracking back-end: stores artifacts, metadata and sources per run id."""

    @abc.abstractmethod
    def add_artifact(self, run_id: str, name: str, path: str, metadata: Optional[Mapping[str, object]] = None) -> None:
        ...

    @abc.abstractmethod
    def artifacts(self, run_id: str) -> Mapping[str, TrackerArtifact]:
        ...

    @abc.abstractmethod
    def add_metadata(self, run_id: str, **kwargs: object) -> None:
        ...

    @abc.abstractmethod
    def metadata(self, run_id: str) -> Mapping[str, object]:
        ...

    @abc.abstractmethod
    def add_source(self, run_id: str, source_id: str, artifact_name: Optional[str] = None) -> None:
        ...

    @abc.abstractmethod
    def sources(self, run_id: str, artifact_name: Optional[str] = None) -> Iterable[TrackerSource]:
        ...

    @abc.abstractmethod
    def lineage(self, run_id: str) -> Lineage:
        ...

    @abc.abstractmethod
    def run_ids(self, **kwargs: str) -> Iterable[str]:
        ...


def tracker_config_env_var_name(entrypoint_key: str) -> str:
    """``TORCHX_TRACKER_<NAME>_CONFIG``: where a job finds tracker ``entrypoint_key``'s config."""
    return f"TORCHX_TRACKER_{entrypoint_key.upper()}_CONFIG"


def get_configured_trackers() -> Dict[str, Optional[str]]:
    """Trackers to set up in every job: ``$TORCHX_TRACKERS`` (comma-separated names) if set, else
    the keys of ``.torchxconfig``'s ``[torchx:tracker]``; each with its config
    (``$TORCHX_TRACKER_<NAME>_CONFIG``, else ``[tracker:<name>] config``) or None. The rules are
    the core's (config::ConfiguredTrackers, as ``torchx run`` reads them); the files are this
    package's lookup (torchx.util.torchxconfig)."""
    from torchx._core import core

    return dict(core().configured_trackers(find_configs()))


def _tracker_factory(name: str, plugins: Mapping[str, Callable[..., Any]]) -> Optional[Callable[..., Any]]:
    if name in plugins:
        return plugins[name]
    from torchx.util.modules import load_module

    try:
        factory = load_module(name)
    except Exception as e:  # noqa: BLE001 - a bad name is reported, the other trackers still load
        _logger().warning("tracker `%s`: cannot load it: %s", name, e)
        return None
    return factory if callable(factory) else None


def build_trackers(factory_and_config: Mapping[str, Optional[str]]) -> Iterable[TrackerBase]:
    """One tracker per name: a registered ``torchx.tracker`` plugin of that name, else a
    ``module.path:factory`` (or module path) to import; each factory is called with its config.
    Names that resolve to nothing are skipped with a warning."""
    from torchx.plugins import PluginType, registry

    plugins = registry().get(PluginType.TRACKER) if factory_and_config else {}
    trackers: List[TrackerBase] = []
    for name, config in factory_and_config.items():
        factory = _tracker_factory(name, plugins)
        if factory is None:
            _logger().warning("tracker `%s`: no torchx.tracker plugin or importable factory has this name", name)
            continue
        trackers.append(factory(config))
    return trackers


def trackers_from_environ() -> Iterable[TrackerBase]:
    """The trackers this job's environment names (``TORCHX_TRACKERS``); none when unset."""
    names = os.environ.get(settings.ENV_TORCHX_TRACKERS)
    if not names:
        return []
    return build_trackers(
        {n: os.environ.get(tracker_config_env_var_name(n)) for n in (x.strip() for x in names.split(",")) if n}
    )


@record
class AppRun:
    """A job's run (its id is its app handle, ``TORCHX_JOB_ID``) and the trackers it reports to."""

    id: str
    backends: Iterable[TrackerBase] = field(default_factory=list)

    @staticmethod
    def run_from_env() -> "AppRun":
        global _from_env
        if _from_env is None:
            job_id = os.environ.get(settings.ENV_TORCHX_JOB_ID)
            if job_id is None:
                _logger().warning("%s is not set: not in a torchx job, nothing is tracked", settings.ENV_TORCHX_JOB_ID)
                _from_env = AppRun(id="<UNDEFINED>", backends=[])
            else:
                _from_env = AppRun(id=job_id, backends=list(trackers_from_environ()))
        return _from_env

    def add_metadata(self, **kwargs: object) -> None:
        for b in self.backends:
            b.add_metadata(self.id, **kwargs)

    def add_artifact(self, name: str, path: str, metadata: Optional[Mapping[str, object]] = None) -> None:
        for b in self.backends:
            b.add_artifact(self.id, name, path, metadata)

    def job_id(self) -> str:
        return self.id

    def add_source(self, source_id: str, artifact_name: Optional[str] = None) -> None:
        for b in self.backends:
            b.add_source(self.id, source_id, artifact_name)

    def sources(self) -> Iterable[AppRunTrackableSource]:
        """The runs this one came from, as the first tracker records them."""
        first = next(iter(self.backends), None)
        if first is None:
            return []
        return [AppRunTrackableSource(AppRun(s.source_run_id, self.backends), s.artifact_name) for s in first.sources(self.id)]


_from_env: Optional[AppRun] = None
