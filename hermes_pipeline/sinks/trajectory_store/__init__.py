"""The trajectory store: every run of a profile as a replayable ATIF file (spec 06 §7, §9).

``observability.trajectories.enabled: true`` in a profile's ``config.yaml`` starts it for that
profile (:func:`attach_for_profile`, a built-in consumer of :mod:`hermes_pipeline.profile`),
independently of ``plugins.toml``. It is an ordinary sink (:class:`TrajectoryStoreSink`, entry point
``trajectory_store`` of the ``hermes_pipeline.sinks`` group) that hands the events to the ATIF sink,
found through the same entry-point group, configured for the store: one file per run named
``<YYYY-MM-DD>-<run uuid>.json``, LLM payloads included, directory ``0700``, files ``0600``,
atomic writes, partial files at shutdown. It also prunes its own old files and keeps the store out
of a surrounding git work tree.
"""

from .consumer import StoreHandle, attach_for_profile, attach_store
from .files import STORE_NAME, TrajectoryLookupError, find_trajectory, is_store_file, store_files, trajectory_date
from ...export.gitignore import ensure_gitignore, tracked_store_files
from .prune import parse_age, prune_store
from .sink import TrajectoryStoreSink, store_atif_config

__all__ = [
    "STORE_NAME",
    "StoreHandle",
    "TrajectoryLookupError",
    "TrajectoryStoreSink",
    "attach_for_profile",
    "attach_store",
    "ensure_gitignore",
    "find_trajectory",
    "is_store_file",
    "parse_age",
    "prune_store",
    "store_atif_config",
    "store_files",
    "tracked_store_files",
    "trajectory_date",
]
