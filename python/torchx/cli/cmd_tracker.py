"""``torchx tracker list {jobs,metadata,artifacts}``: what the configured tracker recorded."""

import argparse
import logging
from typing import Optional

from torchx.cli.cmd_base import SubCommand
from torchx.tracker.api import TrackerBase, build_trackers, get_configured_trackers

logger: logging.Logger = logging.getLogger(__name__)


class CmdTracker(SubCommand):
    """Reads the first tracker configured (``[torchx:tracker]`` or ``$TORCHX_TRACKERS``); the
    tracker is built on first use, so the command exists without one."""

    def __init__(self) -> None:
        self._tracker: Optional[TrackerBase] = None

    @property
    def tracker(self) -> TrackerBase:
        if self._tracker is None:
            trackers = list(build_trackers(get_configured_trackers()))
            if not trackers:
                raise RuntimeError(
                    "no tracker is configured: name one in .torchxconfig's [torchx:tracker] section or in $TORCHX_TRACKERS"
                )
            self._tracker = trackers[0]
        return self._tracker

    def add_arguments(self, subparser: argparse.ArgumentParser) -> None:
        commands = subparser.add_subparsers(title="tracker commands")
        lists = commands.add_parser("list", help="list what the tracker recorded").add_subparsers(title="what")
        jobs = lists.add_parser("jobs", help="run ids")
        jobs.add_argument("--parent-run-id", type=str, help="only the runs of this parent run")
        jobs.set_defaults(func=self._list_jobs)
        metadata = lists.add_parser("metadata", help="a run's metadata")
        metadata.add_argument("RUN_ID", type=str)
        metadata.set_defaults(func=self._list_metadata)
        artifacts = lists.add_parser("artifacts", help="a run's artifacts")
        artifacts.add_argument("--artifact", type=str, help="only this artifact")
        artifacts.add_argument("RUN_ID", type=str)
        artifacts.set_defaults(func=self._list_artifacts)
        lineage = lists.add_parser("lineage", help="a run's lineage (not supported yet)")
        lineage.add_argument("RUN_ID", type=str, nargs="?")
        lineage.set_defaults(func=lambda args: lineage.error("lineage is not supported yet"))
        self._parser = subparser

    def run(self, args: argparse.Namespace) -> None:
        self._parser.print_help()

    def _list_jobs(self, args: argparse.Namespace) -> None:
        ids = self.tracker.run_ids(parent_run_id=args.parent_run_id) if args.parent_run_id else self.tracker.run_ids()
        for run_id in ids:
            print(run_id)

    def _list_metadata(self, args: argparse.Namespace) -> None:
        for key, value in self.tracker.metadata(args.RUN_ID).items():
            print(f"{key:<24} {value}")

    def _list_artifacts(self, args: argparse.Namespace) -> None:
        for name, artifact in self.tracker.artifacts(args.RUN_ID).items():
            if args.artifact and name != args.artifact:
                continue
            print(f"{name:<24} {artifact.path:<40} {dict(artifact.metadata or {})}")
