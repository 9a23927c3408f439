"""torchx.tracker: experiment tracking for jobs (TorchX's tracker API). A job finds its trackers
in its environment (``TORCHX_TRACKERS``, set by the runner from ``.torchxconfig``) and records
metadata, artifacts and sources against its run id (``TORCHX_JOB_ID``) through ``app_run_from_env()``."""

from torchx.tracker.api import (
    AppRun,
    AppRunTrackableSource,
    Lineage,
    TrackerArtifact,
    TrackerBase,
    TrackerSource,
    build_trackers,
    get_configured_trackers,
    tracker_config_env_var_name,
    trackers_from_environ,
)


def app_run_from_env() -> AppRun:
    """The current job's run, with the trackers its environment names (none outside a job)."""
    return AppRun.run_from_env()


__all__ = [
    "AppRun",
    "AppRunTrackableSource",
    "Lineage",
    "TrackerArtifact",
    "TrackerBase",
    "TrackerSource",
    "app_run_from_env",
    "build_trackers",
    "get_configured_trackers",
    "tracker_config_env_var_name",
    "trackers_from_environ",
]
