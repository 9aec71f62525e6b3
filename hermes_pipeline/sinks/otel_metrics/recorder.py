"""Scope events → the BOOK-2 instruments, on any OpenTelemetry ``Meter``.

The rows the observability store would write are derived with the store's own
:class:`~hermes_pipeline.sinks.observability_store.rows.RowBuilder` (so the store and the metrics
agree on what a task, a failed call or a memory write is), but nothing is stored: each row only
adds to an instrument.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.metrics import Meter

from ...export.events import ScopeEvent
from ..observability_store.memory_ops import parse_operations
from ..observability_store.rows import MemoryWrite, RowBuilder, SkillChange


class MetricsRecorder:
    """Feeds events to the seven instruments (see the package docstring)."""

    def __init__(self, meter: Meter, include_skill_names: bool = False) -> None:
        self.include_skill_names = include_skill_names
        self.rows = RowBuilder()
        self._llm_starts: dict[int, int] = {}
        self.tasks = meter.create_counter("hermes.agent.tasks", unit="{task}", description="Finished agent runs")
        self.tokens = meter.create_histogram("gen_ai.client.token.usage", unit="{token}",
                                             description="Input and output tokens per LLM call")
        self.duration = meter.create_histogram("gen_ai.client.operation.duration", unit="s",
                                               description="LLM call duration")
        self.cost = meter.create_counter("hermes.agent.cost", unit="USD", description="Known LLM cost")
        self.memory_writes = meter.create_counter("hermes.agent.memory.writes", unit="{write}",
                                                  description="Memory file writes")
        self.skill_changes = meter.create_counter("hermes.agent.skill.changes", unit="{change}",
                                                  description="Skill create/refine/deprecate/restore")
        self.skill_runs = meter.create_counter("hermes.agent.skill.runs", unit="{run}", description="Skill runs")

    def __call__(self, event: ScopeEvent) -> None:
        """Count one event."""
        if event.name == "llm.call" and event.kind == "scope":
            if event.phase == "start":
                self._llm_starts[event.uuid] = event.timestamp_us
        started_us = self._llm_starts.pop(event.uuid, None) if event.phase == "end" else None
        for item in self.rows.feed(event):
            if isinstance(item, SkillChange):
                self.skill_changes.add(1, {"change_type": item.change_type})
            elif isinstance(item, MemoryWrite):
                if item.succeeded:  # one count per operation of the call (a batch holds several)
                    for op in parse_operations(item.tool, item.arguments):
                        self.memory_writes.add(1, {"actor": item.actor, "change_type": op.change_type})
            elif isinstance(item, tuple):
                self._row(item[0], item[1], event, started_us)

    def _row(self, table: str, row: dict[str, Any], end: ScopeEvent, started_us: int | None) -> None:
        if table == "task_runs":
            self.tasks.add(1, {"outcome": str(row.get("outcome") or "unknown")})
        elif table == "skill_runs":
            attrs = {"outcome": str(row.get("outcome") or "unknown")}
            if self.include_skill_names and row.get("skill_name"):
                attrs["hermes.skill.name"] = str(row["skill_name"])
            self.skill_runs.add(1, attrs)
        elif table == "llm_calls":
            attrs = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": str(row.get("provider") or "unknown"),
                     "gen_ai.request.model": str(row.get("model") or "unknown")}
            for kind in ("input", "output"):
                value = row.get(f"{kind}_tokens")
                if isinstance(value, int) and not isinstance(value, bool):
                    self.tokens.record(value, {**attrs, "gen_ai.token.type": kind})
            if started_us is not None:
                status = {"error.type": str(row.get("error_type") or "error")} if row.get("status") == "error" else {}
                self.duration.record(max(0, end.timestamp_us - started_us) / 1e6, {**attrs, **status})
            cost = row.get("cost_usd")
            if isinstance(cost, int | float) and not isinstance(cost, bool) and cost > 0:
                self.cost.add(float(cost), {"gen_ai.provider.name": attrs["gen_ai.provider.name"],
                                            "gen_ai.request.model": attrs["gen_ai.request.model"]})
