"""A third-party-style sink for the worker-process tests: a module-level class the child can import, with
only the sink shape (no ``counters``, no ``max_queue_size``): one ``phase name category`` line per event."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_pipeline.export.events import ScopeEvent
from hermes_pipeline.export.sink import BaseSink, SinkContext


class LineSink(BaseSink):
    """Writes ``phase name category`` of every scope event to ``config["path"]`` (built by ``BaseSink.from_config``)."""

    def __init__(self, config: Mapping[str, Any], ctx: SinkContext) -> None:
        self.out = open(config["path"], "w", encoding="utf-8")  # noqa: SIM115 - closed by shutdown
        self.section = ctx.name
        self.seen = 0

    def __call__(self, event: ScopeEvent) -> None:
        self.seen += 1
        self.out.write(f"{event.phase} {event.name} {event.category}\n")

    def flush(self, timeout: float) -> bool:
        self.out.flush()
        return True

    def shutdown(self, deadline: float) -> bool:
        self.out.close()
        return True

    def stats(self) -> Mapping[str, Any]:
        return {"seen": self.seen, "section": self.section}
