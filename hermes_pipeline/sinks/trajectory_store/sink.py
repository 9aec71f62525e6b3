"""The store as a sink: the ATIF sink, configured for the store, behind the sink contract (BOOK-28).

The ATIF sink is found by name in the ``hermes_pipeline.sinks`` entry-point group (a sink never
imports another sink), built with the store's fixed settings: one file per run (``group_by =
"turn"``), the store's filename template, LLM request and response payloads included, the content
gate open (a local destination). Everything else (atomic ``0600`` files in ``0700`` directories,
partial trajectories at shutdown) is the ATIF sink's own behaviour.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from ...export.errors import ExportConfigError
from ...export.events import ScopeEvent
from ..base import BaseSink, Sink, SinkContext, build_sink
from ..registry import load_sink
from .files import FILENAME_TEMPLATE

__all__ = ["KEYS", "TrajectoryStoreSink", "store_atif_config"]

KEYS: Final = ("enabled", "directory", "retention_days", "max_queue_size")
"""The keys of a ``trajectory_store`` section."""


def store_atif_config(directory: Path, *, max_queue_size: int | None = None) -> dict[str, Any]:
    """The ``atif`` table that makes the ATIF sink write the store's files into ``directory``."""
    config: dict[str, Any] = {"enabled": True, "output_directory": str(directory), "group_by": "turn",
                              "filename_template": FILENAME_TEMPLATE, "include_llm_payloads": True,
                              "include_system_prompt": False, "shared_definitions": True,
                              "llm_history": "delta"}
    if max_queue_size is not None:
        config["max_queue_size"] = max_queue_size
    return config


class TrajectoryStoreSink(BaseSink):
    """Writes every run it sees as ``<directory>/<YYYY-MM-DD>-<run uuid>.json``.

    ``config``: ``directory`` (required; relative paths resolve against ``ctx.base_dir``),
    ``retention_days`` (for :func:`~.prune.prune_store`; the sink itself never deletes),
    ``max_queue_size`` (the ATIF writer's queue).
    """

    never_blocks: ClassVar[bool] = True
    """``__call__`` only queues on this sink's own bounded writers (or counts in memory): it is called on
    the publication thread directly (:mod:`hermes_pipeline.export.isolation`)."""

    @classmethod
    def validate_config(cls, config: Mapping[str, Any], vctx: Any) -> None:
        """The section's statement: its keys and their types (``config validate`` and activation)."""
        for key in config:
            if key not in KEYS:
                vctx.unknown_field(key, ", ".join(KEYS))
        if not isinstance(config.get("directory"), str) or not config["directory"].strip():
            vctx.error("directory", "'directory' is required: the trajectory store directory",
                       code="trajectory_store.directory")

    def __init__(self, config: Mapping[str, Any], ctx: SinkContext) -> None:
        directory = config.get("directory")
        if not isinstance(directory, str) or not directory.strip():
            raise ExportConfigError(f"{ctx.name}.directory", "expected the trajectory store directory")
        path = Path(directory).expanduser()
        self.directory = path if path.is_absolute() else ctx.base_dir / path
        queue = config.get("max_queue_size")
        self._atif: Sink = build_sink(
            load_sink("atif"), store_atif_config(self.directory, max_queue_size=queue if isinstance(queue, int)
                                                 else None),
            SinkContext(name="atif", base_dir=ctx.base_dir, default_dir=self.directory,
                        enable_full_payloads=False, content_summary=ctx.content_summary,
                        max_queue_bytes=ctx.max_queue_bytes))

    def __call__(self, event: ScopeEvent) -> None:
        self._atif(event)

    def flush(self, timeout: float) -> bool:
        """Every run that ended before the call is written (``False`` on timeout)."""
        return self._atif.flush(timeout)

    def shutdown(self, deadline: float) -> bool:
        """Write what is queued, open runs as partial trajectories, and close."""
        return self._atif.shutdown(deadline)

    def stats(self) -> Mapping[str, Any]:
        """The ATIF sink's counters."""
        return self._atif.stats()

    def destinations(self) -> list[str]:
        """``trajectory store <directory>``."""
        return [f"trajectory store {self.directory}"]
