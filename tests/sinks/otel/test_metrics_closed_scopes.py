"""The OTel metrics read each end as a closed scope (``end.start``): MetricsRecorder keeps no table of open starts.

BOOK-2 durations (``gen_ai.client.operation.duration`` of LLM calls, tool calls and turns) and token counts
come out the same whether or not the recorder saw the starts of the leaf scopes, because the tracker pairs
each scope once and hands the end with its start (FMT-6). A recorder pairing on its own records no LLM-call or
tool duration from the filtered stream.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from hermes_pipeline.export.events import ScopeEvent
from hermes_pipeline.sinks.otel.metrics_recorder import MetricsRecorder
from tests.export._closed_support import leaf_starts_dropped, recorded_events


def _points(events: list[Any]) -> dict[tuple[str, tuple[tuple[str, Any], ...]], tuple[Any, ...]]:
    reader = InMemoryMetricReader()
    recorder = MetricsRecorder(MeterProvider(metric_readers=[reader]).get_meter("t"))
    for event in events:
        recorder(event)
    out = {}
    for rm in reader.get_metrics_data().resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                for point in metric.data.data_points:
                    key = (metric.name, tuple(sorted(point.attributes.items())))
                    out[key] = (point.count, point.sum) if hasattr(point, "count") else (point.value,)
    return out


def test_durations_come_from_closed_scopes(tmp_path: Path) -> None:
    """BOOK-2, FMT-6: the same instruments from the whole stream and from one whose LLM-call and tool starts
    never reached the recorder."""
    events = recorded_events(tmp_path)
    full = _points(events)
    operations = {dict(attrs).get("gen_ai.operation.name") for name, attrs in full
                  if name == "gen_ai.client.operation.duration"}
    assert {"chat", "execute_tool", "invoke_agent"} <= operations
    tools = [v for (name, attrs), v in full.items() if name == "gen_ai.client.operation.duration"
             and dict(attrs).get("gen_ai.operation.name") == "execute_tool"]
    assert sum(v[0] for v in tools) == 6  # three tool calls in each of two turns
    assert _points(leaf_starts_dropped(events)) == full


def test_no_table_of_starts_while_scopes_are_open(tmp_path: Path) -> None:
    """FMT-6: at no point of a session does the recorder (or its row builder) hold scope events by uuid."""
    recorder = MetricsRecorder(MeterProvider(metric_readers=[InMemoryMetricReader()]).get_meter("t"))
    for event in recorded_events(tmp_path):
        recorder(event)
        for holder in (recorder, recorder.rows):
            assert not [name for name, value in vars(holder).items()
                        if isinstance(value, dict) and any(isinstance(v, ScopeEvent) for v in value.values())]
