"""Scope events → the BOOK-2 instruments, on any OpenTelemetry ``Meter``.

The rows the observability store would write are derived with the store's own
:class:`~hermes_pipeline.export.task_runs.RowBuilder` (so the store and the metrics
agree on what a task, a failed call or a memory write is), but nothing is stored: each row only
adds to an instrument.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from opentelemetry.metrics import Meter

from ...export.events import ScopeEvent
from ...export.memory_changes import parse_operations
from ...export.task_runs import MemoryWrite, RowBuilder, SkillChange


DURATION_BUCKETS: Final = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
"""The GenAI semantic conventions' advised boundaries of ``gen_ai.client.operation.duration`` (seconds); also used
for ``gen_ai.client.operation.time_to_first_chunk``."""
TOKEN_BUCKETS: Final = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)
"""The advised boundaries of ``gen_ai.client.token.usage``."""
_STREAMING_LIMIT: Final = 4096
"""At most this many LLM calls streaming at once are timed to their first chunk (a bound on memory)."""
_TEXT_COMPLETION_MODES: Final = frozenset({"completions", "text_completion", "text_completions", "legacy_completions"})


def operation_name(api_mode: Any) -> str:
    """``gen_ai.operation.name`` of an LLM call from ``hermes.api_mode`` (the trace projection's rule)."""
    mode = api_mode.lower() if isinstance(api_mode, str) else ""
    if "gemini" in mode or "generate_content" in mode:
        return "generate_content"
    return "text_completion" if mode in _TEXT_COMPLETION_MODES else "chat"


def server_attributes(base_url: Any) -> dict[str, Any]:
    """``server.address`` / ``server.port`` (port made explicit) of the provider's base URL."""
    if not isinstance(base_url, str) or not base_url:
        return {}
    try:
        parts = urlsplit(base_url)
        host, port = parts.hostname, parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return {}
    if not host:
        return {}
    return {"server.address": host, **({"server.port": port} if port is not None else {})}


class MetricsRecorder:
    """Feeds events to the seven instruments (see the package docstring).

    No table of open scopes: a duration is read from the closed scope an end brings (``end.start``).
    The one thing kept beyond a pair is the first ``llm.chunk`` mark of each LLM call still streaming,
    keyed by that call (the mark's parent): its time to first chunk is recorded when the call ends.
    """

    def __init__(self, meter: Meter, include_skill_names: bool = False) -> None:
        self.include_skill_names = include_skill_names
        self.rows = RowBuilder()
        self._first_chunk: dict[int, int] = {}
        """Uuid of a streamed LLM call → the time of its first ``llm.chunk`` (µs), until the call ends."""
        self.tasks = meter.create_counter("hermes.agent.tasks", unit="{task}", description="Finished agent runs")
        self.tokens = meter.create_histogram("gen_ai.client.token.usage", unit="{token}",
                                             description="Input and output tokens per LLM call",
                                             explicit_bucket_boundaries_advisory=list(TOKEN_BUCKETS))
        self.duration = meter.create_histogram("gen_ai.client.operation.duration", unit="s",
                                               description="GenAI operation duration (LLM calls, tool calls, agent "
                                                           "invocations)",
                                               explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS))
        self.first_chunk = meter.create_histogram("gen_ai.client.operation.time_to_first_chunk", unit="s",
                                                  description="Time to the first chunk of a streamed LLM call",
                                                  explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS))
        self.cost = meter.create_counter("hermes.agent.cost", unit="USD", description="Known LLM cost")
        self.memory_writes = meter.create_counter("hermes.agent.memory.writes", unit="{write}",
                                                  description="Memory file writes")
        self.skill_changes = meter.create_counter("hermes.agent.skill.changes", unit="{change}",
                                                  description="Skill create/refine/deprecate/restore")
        self.skill_runs = meter.create_counter("hermes.agent.skill.runs", unit="{run}", description="Skill runs")

    def __call__(self, event: ScopeEvent) -> None:
        """Count one event."""
        start: ScopeEvent | None = None
        if event.kind == "scope":
            if event.phase != "start":
                start = event.start
                first = self._first_chunk.pop(event.uuid, None) if self._first_chunk else None
                if start is not None:
                    if start.name == "llm.call":
                        if first is not None:
                            self.first_chunk.record(max(0, first - start.timestamp_us) / 1e6,
                                                    self._llm_attrs(start, None))
                    else:
                        if start.category == "tool" or start.name == "agent.run":
                            self._operation(start, event)
                        start = None
        elif event.name == "llm.chunk" and event.parent_uuid is not None \
                and event.parent_uuid not in self._first_chunk and len(self._first_chunk) < _STREAMING_LIMIT:
            self._first_chunk[event.parent_uuid] = event.timestamp_us
        started_us = start.timestamp_us if start is not None else None
        self._pending_llm = start
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
            start = self._llm_start_for(end)
            attrs = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": str(row.get("provider") or "unknown"),
                     "gen_ai.request.model": str(row.get("model") or "unknown")}
            if start is not None:
                attrs.update(self._llm_attrs(start, end))
                attrs["gen_ai.provider.name"] = str(row.get("provider") or "unknown")
                attrs["gen_ai.request.model"] = str(row.get("model") or "unknown")
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

    _pending_llm: ScopeEvent | None = None

    def _llm_start_for(self, end: ScopeEvent) -> ScopeEvent | None:
        return self._pending_llm if self._pending_llm is not None and self._pending_llm.uuid == end.uuid else None

    @staticmethod
    def _llm_attrs(start: ScopeEvent, end: ScopeEvent | None) -> dict[str, Any]:
        """Operation, provider, request and response model, server address and port of an LLM call."""
        meta = start.metadata
        attrs: dict[str, Any] = {"gen_ai.operation.name": operation_name(meta.get("hermes.api_mode")),
                                 "gen_ai.provider.name": str(meta.get("hermes.provider") or "unknown"),
                                 "gen_ai.request.model": str((start.profile or {}).get("model_name") or "unknown")}
        attrs.update(server_attributes(meta.get("hermes.base_url")))
        response = (end.data or {}).get("response") if end is not None else None
        model = response.get("model") if isinstance(response, Mapping) else None
        if isinstance(model, str) and model:
            attrs["gen_ai.response.model"] = model
        return attrs

    def _operation(self, start: ScopeEvent, end: ScopeEvent) -> None:
        """``gen_ai.client.operation.duration`` of a tool call (``execute_tool``) or a turn (``invoke_agent``)."""
        attrs: dict[str, Any]
        if start.name == "agent.run":
            attrs = {"gen_ai.operation.name": "invoke_agent"}
            provider = start.metadata.get("hermes.provider")
            if isinstance(provider, str) and provider:
                attrs["gen_ai.provider.name"] = provider
        else:
            attrs = {"gen_ai.operation.name": "execute_tool"}  # no tool name: the conventions list none (cardinality)
        if end.metadata.get("otel.status_code") == "ERROR":
            attrs["error.type"] = str(end.metadata.get("error.type") or "error")
        self.duration.record(max(0, end.timestamp_us - start.timestamp_us) / 1e6, attrs)
