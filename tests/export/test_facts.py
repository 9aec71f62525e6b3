"""First-party facts are never rendered (issue #29 item 9, "outputs identical"; spec 05 SM-19..SM-22, spec 04 FMT-4,
FMT-33a, FMT-46, FMT-55).

The scope kinds put on ``ScopeEvent.facts`` the hook fields shared metrics counts and no rendered field holds (a
provider attempt's ``retry_count``, the ``provider`` of its successful end, how a turn ended, the new id of an
ID-rotating compaction), and hand a turn's real end under a session id the stream no longer holds it in as a
notice of kind ``fact``. No sink may render either: the ATOF lines, the ATIF trajectories, the OTLP spans (three
conventions) and the OTel metrics of a session are the same whatever its events' facts hold, and none shows a
value that only the facts carry. Every carrier of an event keeps them; the scrubber scrubs them.
"""

from __future__ import annotations

import copy
import pickle
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from hermes_pipeline.export.events import END, FACT, START, TURN_SCOPE, ScopeEvent
from hermes_pipeline.export.overlap import with_parallel
from hermes_pipeline.export.scope_hooks import ScopePlugin
from hermes_pipeline.export.worker.protocol import event_fields, event_from_fields
from hermes_pipeline.sinks.atif.config import parse_atif_config
from hermes_pipeline.sinks.atif.trajectory import TrajectoryAssembler, TrajectoryFile
from hermes_pipeline.sinks.atof.encoder import AtofEncoder
from hermes_pipeline.sinks.otel.config import TraceEndpoint
from hermes_pipeline.sinks.otel.metrics_recorder import MetricsRecorder
from hermes_pipeline.sinks.otel.record import SpanRecord, to_readable
from hermes_pipeline.sinks.otel.spans import Route, SpanBuilder
from hermes_pipeline.sinks.otel.state import Options

SECRET = "sk-proj-" + "F" * 40
REDACTED = re.compile(r"<redacted(:[0-9a-f]{4,})?>")
ONLY_IN_FACTS = ("factprovider", "guardrail_tripped", "rotated-session")
"""Values the hooks below give only in fields that become facts: a renderer reading facts would show them."""
_RESPONSE = {"id": "r", "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
                                                   "message": {"role": "assistant", "content": "ok"}}]}


def _drive(plugin: ScopePlugin) -> None:
    """One turn with a retried provider attempt and a tool call, an ID-rotating compaction while it runs, its end
    under the old id (not failed, exit reason a guardrail), then a late end of the same turn under the new id."""
    plugin.on_session_start(session_id="s1", model="m", platform="cli", agent_version=None)
    plugin.pre_llm_call(session_id="s1", task_id="t1", turn_id="u1", user_message="hi", is_first_turn=True,
                        model="m", platform="cli", sender_id=None, agent_version=None)
    request = {"method": "POST", "body": {"model": "m", "messages": [{"role": "user", "content": "hi"}]}}
    for attempt in (0, 3):
        plugin.pre_api_request(session_id="s1", task_id="t1", turn_id="u1", api_request_id=f"r{attempt}",
                               platform="cli", model="m", provider="openrouter", base_url="http://127.0.0.1:9/v1",
                               api_mode="chat_completions", api_call_count=1, started_at=None, middleware_trace=[],
                               request=request, retry_count=attempt)
        plugin.post_api_request(session_id="s1", task_id="t1", turn_id="u1", api_request_id=f"r{attempt}", model="m",
                                provider="factprovider", api_duration=0.1, started_at=None, ended_at=None,
                                finish_reason="stop", response_model="m", usage={"input_tokens": 3, "output_tokens": 1},
                                response={"body": _RESPONSE})
    plugin.pre_tool_call(tool_name="read_file", args={"path": "a"}, task_id="t1", session_id="s1", tool_call_id="c1",
                         turn_id="u1", api_request_id="r3", middleware_trace=[], toolset=None)
    plugin.post_tool_call(tool_name="read_file", args={"path": "a"}, task_id="t1", session_id="s1", tool_call_id="c1",
                          turn_id="u1", api_request_id="r3", result="ok", duration_ms=2, status="ok", error_type=None,
                          error_message=None)
    plugin.on_compaction(session_id="s1", new_session_id="rotated-session", rotated=True)
    plugin.on_session_end(session_id="s1", task_id="t1", turn_id="u1", completed=False, interrupted=False,
                          failed=False, turn_exit_reason="guardrail_tripped", reason=None)
    plugin.on_session_end(session_id="rotated-session", task_id="t1", turn_id="u1", completed=True,
                          interrupted=False, failed=False, turn_exit_reason="completed", reason=f"see {SECRET}")
    plugin.on_session_finalize(session_id="s1", reason="exit")


def _recorded() -> tuple[list[ScopeEvent], list[ScopeEvent]]:
    """``(what a facts listener got, what a sink got)`` from :func:`_drive`."""
    first: list[ScopeEvent] = []
    sink: list[ScopeEvent] = []
    plugin = ScopePlugin()
    plugin.add_listener(first.append, facts=True)
    plugin.add_listener(sink.append)
    _drive(plugin)
    plugin.shutdown(5.0)
    return first, sink


def _with_facts(events: list[ScopeEvent], facts: dict[str, Any] | None) -> list[ScopeEvent]:
    """Copies of ``events`` whose facts are all ``facts``, each end closed with its copied start."""
    out: list[ScopeEvent] = []
    starts: dict[int, ScopeEvent] = {}
    for event in events:
        twin = copy.copy(event)
        twin.facts = facts
        if twin.phase == START:
            starts[twin.uuid] = twin
        elif twin.phase == END:
            twin.start = starts.pop(twin.uuid, None)
        out.append(twin)
    return out


def _atof(events: list[ScopeEvent]) -> list[bytes]:
    encoder = AtofEncoder()
    return [encoder(event) for event in events]


def _atif(events: list[ScopeEvent], directory: Path) -> list[dict[str, Any]]:
    files: list[TrajectoryFile] = []
    assembler = TrajectoryAssembler(parse_atif_config({"enabled": True}, base_dir=directory), files.append,
                                    version="test")
    for event in events:
        assembler.add(event)
    assembler.close()
    return [f.document for f in files]


def _spans(events: list[ScopeEvent], kind: str) -> list[str]:
    spans: list[SpanRecord] = []
    endpoint = TraceEndpoint(index=0, type=kind, url="http://127.0.0.1:1/v1/traces")
    builder = SpanBuilder([Route(endpoint, lambda span: spans.append(span) or True, "0")], Options(), ids="uuid")
    builder.write(events)
    assert builder.counts["failures"] == 0
    return [to_readable(span).to_json() for span in spans]


def _metrics(events: list[ScopeEvent]) -> list[Any]:
    reader = InMemoryMetricReader()
    recorder = MetricsRecorder(MeterProvider(metric_readers=[reader]).get_meter("t"))
    for event in events:
        recorder(event)
    return sorted((metric.name, sorted(point.attributes.items()), getattr(point, "count", None),
                   getattr(point, "sum", getattr(point, "value", None)))
                  for rm in reader.get_metrics_data().resource_metrics for sm in rm.scope_metrics
                  for metric in sm.metrics for point in metric.data.data_points)


def _rendered(events: list[ScopeEvent], directory: Path) -> dict[str, Any]:
    return {"atof": _atof(events), "atif": _atif(events, directory),
            **{f"otlp {kind}": _spans(events, kind) for kind in ("gen_ai", "openinference", "full")},
            "otel metrics": _metrics(events)}


def test_the_kinds_fill_the_facts_shared_metrics_counts() -> None:
    """SM-19, SM-20, SM-21, SM-22: the facts of each event, as the hooks gave them; the notice of the turn's real
    end under the new id is scrubbed (FMT-33a)."""
    first, _ = _recorded()
    llm_starts = [e.facts for e in first if e.name == "llm.call" and e.phase == START]
    assert llm_starts == [{"retry_count": 0}, {"retry_count": 3}]
    llm_ends = [e.facts for e in first if e.name == "llm.call" and e.phase == END]
    assert llm_ends == [{"provider": "factprovider"}] * 2
    (compaction,) = [e for e in first if e.name == "hermes.compaction"]
    assert compaction.facts == {"new_session_id": "rotated-session"}
    (turn_end,) = [e for e in first if e.kind != FACT and e.name == TURN_SCOPE and e.phase == END]
    assert turn_end.facts == {"completed": False, "interrupted": False, "failed": False,
                              "turn_exit_reason": "guardrail_tripped", "reason": None}
    (notice,) = [e for e in first if e.kind == FACT]
    assert notice.name == TURN_SCOPE and notice.facts is not None
    assert (notice.metadata["hermes.session_id"], notice.metadata["hermes.task_id"]) == ("rotated-session", "t1")
    assert notice.facts["completed"] is True and notice.facts["turn_exit_reason"] == "completed"
    assert SECRET not in notice.facts["reason"] and REDACTED.search(notice.facts["reason"])


def test_a_sink_never_gets_a_fact_notice() -> None:
    """A listener added without ``facts`` gets every scope event and mark, the very objects, and no notice."""
    first, sink = _recorded()
    assert sink and all(e.kind != FACT for e in sink)
    assert [e for e in first if e.kind != FACT] == sink
    assert all(a is b for a, b in zip([e for e in first if e.kind != FACT], sink))


def test_no_facts_are_made_without_a_listener_that_reads_them() -> None:
    """A dict is built only for a listener that needs one (issue #29 item 3): sinks alone, no event has facts."""
    sink: list[ScopeEvent] = []
    plugin = ScopePlugin((sink.append,))
    _drive(plugin)
    plugin.shutdown(5.0)
    assert sink and all(e.facts is None for e in sink)


def test_no_renderer_reads_the_facts(tmp_path: Path) -> None:
    """Issue #29 item 9: ATOF, ATIF, OTLP spans (three conventions) and OTel metrics render the same whatever the
    facts hold, and no output shows a value only the facts carry."""
    _, sink = _recorded()
    assert any(e.facts for e in sink)
    rendered = _rendered(sink, tmp_path / "a")
    assert all(rendered.values()), {k: len(v) for k, v in rendered.items()}
    text = repr(rendered)
    for value in ONLY_IN_FACTS:
        assert value not in text, value
    assert "openrouter" in text  # the provider pre_api_request named is rendered, as before
    canary = {"retry_count": 99, "provider": "FACT_CANARY", "new_session_id": "FACT_CANARY"}
    assert _rendered(_with_facts(sink, canary), tmp_path / "b") == rendered
    assert _rendered(_with_facts(sink, None), tmp_path / "c") == rendered


def test_the_carriers_keep_the_facts() -> None:
    """The worker pipe, the overlap hold's flagged copy, a sanitizer's replacement and the value bound keep an
    event's facts; the scrubber scrubs their strings."""
    facts = {"retry_count": 2, "provider": "p"}
    event = ScopeEvent("scope", "start", 1, None, 10, "read_file", "tool", (), None, {"x": 1}, {"m": "v"}, 1, 1,
                       facts=facts)
    crossed = event_from_fields(pickle.loads(pickle.dumps(event_fields(event))))
    assert crossed.facts == facts and crossed.name == event.name and crossed.metadata == event.metadata
    assert with_parallel(event).facts is facts

    seen: list[ScopeEvent] = []
    plugin = ScopePlugin((seen.append,), max_value_chars=1000)
    plugin.add_sanitizer(lambda e: {"metadata": {**e.metadata, "changed": True}} if e.kind == "scope" else None)
    plugin.tracker.add_listener(lambda e: None, facts=True)  # facts are made only for such a listener
    plugin.pre_llm_call(session_id="s1", task_id="t1", turn_id="u1", user_message="x" * 5000, is_first_turn=True,
                        model="m", platform="cli", sender_id=None, agent_version=None)
    plugin.on_session_end(session_id="s1", task_id="t1", turn_id="u1", completed=True, interrupted=False,
                          failed=None, turn_exit_reason=f"completed {SECRET}", reason=None)
    (end,) = [e for e in seen if e.name == TURN_SCOPE and e.phase == END]
    assert end.metadata["changed"] is True and end.facts is not None
    assert SECRET not in end.facts["turn_exit_reason"] and REDACTED.search(end.facts["turn_exit_reason"])
    (start,) = [e for e in seen if e.name == TURN_SCOPE and e.phase == START]
    assert "hermes.truncated_values" in start.metadata  # the bound ran on it


@pytest.mark.parametrize("redact", [True, False])
def test_a_notice_passes_the_value_bound(redact: bool) -> None:
    """A notice's strings are bounded like every event's, with or without the scrubber (FMT-33a's neighbour)."""
    seen: list[ScopeEvent] = []
    plugin = ScopePlugin(redact_credentials=redact, max_value_chars=1000)
    plugin.add_listener(seen.append, facts=True)
    plugin.on_session_end(session_id="gone", task_id="t1", turn_id="u1", completed=True, interrupted=False,
                          failed=None, turn_exit_reason=None, reason="r" * 5000)
    (notice,) = seen
    assert notice.kind == FACT and notice.metadata["hermes.task_id"] == "t1"
    assert notice.facts["reason"].startswith("r" * 1000) and len(notice.facts["reason"]) < 1100
    assert "hermes.truncated_values" not in notice.metadata  # a cut fact is not counted where it would be rendered


@settings(max_examples=60, deadline=None)
@given(before=st.text(max_size=40), after=st.text(max_size=40),
       token=st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", min_size=36,
                     max_size=36))
def test_a_planted_credential_never_survives_in_facts(before: str, after: str, token: str) -> None:
    """FMT-33a: whatever text surrounds a credential in a hook field that becomes a fact (a turn's
    ``turn_exit_reason`` and ``reason``), the fact a listener gets never holds it."""
    secret = "ghp_" + token
    seen: list[ScopeEvent] = []
    plugin = ScopePlugin()
    plugin.add_listener(seen.append, facts=True)
    text = f"{before} {secret} {after}"
    plugin.on_session_end(session_id="gone", task_id="t1", turn_id="u1", completed=False, interrupted=False,
                          failed=True, turn_exit_reason=text, reason=text)
    (notice,) = seen
    assert secret not in repr(notice.facts) and secret not in repr(notice.metadata)
