"""The private event contract between accounting and subscriber (SM-12..SM-16, SM-97)."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_pipeline.shared_metrics import events as ev
from hermes_pipeline.shared_metrics.subscriber import Subscriber

from .conftest import RESOURCE, T0

RUNTIME = "runtime-a"


def tool_end(**data: Any) -> ev.MetricsEvent:
    base = {"tool_category": "file", "outcome": "success", "approval_outcome": "not_required",
            "latency_bucket": "lt_100ms", "retry_count_bucket": "unknown"}
    return ev.scope_event(ev.TOOL_CALL, "end", "s1", T0, RUNTIME, data={**base, **data})


def test_sm13_valid_events_pass() -> None:
    """SM-13: Valid events pass."""
    assert ev.check_event(tool_end(), RUNTIME) is None
    assert ev.check_event(ev.mark_event(ev.CLIENT_ACTIVE, T0, RUNTIME), RUNTIME) is None
    assert ev.check_event(ev.mark_event(ev.CLIENT_ACTIVE, T0, RUNTIME, {}), RUNTIME) is None
    model_end = ev.scope_event(ev.MODEL_CALL, "end", "s", T0, RUNTIME,
                               data={"model": "gpt-x", "provider": "openai", "duration_ms": 12}, status="OK")
    assert ev.check_event(model_end, RUNTIME) is None
    assert model_end.category == "llm" and model_end.category_profile == {"model_name": "unknown"}


def _with_meta(event: ev.MetricsEvent, meta: dict[str, Any]) -> ev.MetricsEvent:
    return event._replace(metadata=meta)


@pytest.mark.parametrize("meta", [
    {ev.SCHEMA_KEY: ev.EVENT_SCHEMA_VERSION, ev.RUNTIME_KEY: RUNTIME, "hermes.session_id": "s"},  # extra key
    {ev.SCHEMA_KEY: "hermes.metrics.event.v1", ev.RUNTIME_KEY: RUNTIME},  # other version
    {ev.RUNTIME_KEY: RUNTIME},  # missing version
    {ev.SCHEMA_KEY: ev.EVENT_SCHEMA_VERSION},  # missing runtime
    {ev.SCHEMA_KEY: ev.EVENT_SCHEMA_VERSION, ev.RUNTIME_KEY: "runtime-b"},  # foreign runtime (SM-14)
    {ev.SCHEMA_KEY: ev.EVENT_SCHEMA_VERSION, ev.RUNTIME_KEY: RUNTIME, ev.STATUS_KEY: "UNSET"},
])
def test_sm13_sm97_metadata_must_be_exactly_the_allowed_keys(meta: dict[str, Any]) -> None:
    """SM-13 / SM-97: Metadata must be exactly the allowed keys."""
    assert ev.check_event(_with_meta(tool_end(), meta), RUNTIME) is not None


@pytest.mark.parametrize("event", [
    tool_end(tool_name="read_file"),  # extra data key
    tool_end(outcome="exploded"),  # out of vocabulary
    tool_end(tool_category="acme"),
    tool_end(retry_count_bucket=3),
    ev.scope_event(ev.MODEL_CALL, "end", "s", T0, RUNTIME, data={"model": "Has Space", "provider": "p"}),
    ev.scope_event(ev.MODEL_CALL, "end", "s", T0, RUNTIME, data={"model": "m", "provider": "p", "duration_ms": -1}),
    ev.scope_event(ev.MODEL_CALL, "end", "s", T0, RUNTIME, data={"model": "m", "provider": "p", "duration_ms": True}),
    ev.scope_event(ev.TASK_RUN, "start", "s", T0, RUNTIME, data={"entrypoint": "cli", "execution_surface": "cli"}),
    ev.mark_event(ev.CLIENT_ACTIVE, T0, RUNTIME, {"hermes_version": "1"}),  # SM-35
    ev.mark_event(ev.SKILL_LOAD, T0, RUNTIME, {"provenance": "local", "reuse_state": "first_use",
                                              "post_patch_state": "reused_after_patch", "use_count_bucket": "1"}),
    ev.mark_event(ev.SKILL_LIFECYCLE, T0, RUNTIME, {"action": "loaded", "provenance": "local"}),
    ev.mark_event("hermes.new.mark", T0, RUNTIME),  # SM-16
    ev.mark_event(ev.TOOL_APPROVAL, T0, RUNTIME, {"attribution": "tool_call", "outcome": "not_required"}),
    "not an event",
])
def test_sm15_sm16_sm97_out_of_contract_events_are_rejected(event: Any) -> None:
    """SM-15 / SM-16 / SM-97 / SM-35: Out of contract events are rejected (among them a
    ``hermes.client.active`` mark with a dimension: version, OS, architecture and install method are
    package resources, never its dimensions)."""
    assert ev.check_event(event, RUNTIME) is not None


def test_sm13_subscriber_counts_rejections_and_writes_nothing(home: Any) -> None:
    """SM-13: Subscriber counts rejections and writes nothing."""
    from hermes_pipeline.shared_metrics import MetricsStore

    store = MetricsStore(home)
    subscriber = Subscriber(store, RUNTIME, RESOURCE)
    assert not subscriber.submit(tool_end(tool_name="read_file"))
    assert not subscriber.submit(_with_meta(tool_end(), {ev.SCHEMA_KEY: ev.EVENT_SCHEMA_VERSION,
                                                         ev.RUNTIME_KEY: RUNTIME, "extra": 1}))
    end_without_start = ev.scope_event(ev.TASK_RUN, "end", "never-started", T0, RUNTIME, data={
        "outcome": "success", "end_reason": "completed", "termination": "none", "duration_bucket": "lt_1s",
        "model_call_count_bucket": "0", "tool_call_count_bucket": "0", "retry_count_bucket": "0"})
    assert not subscriber.submit(end_without_start)
    assert subscriber.stats.rejected_events == 3
    assert subscriber.flush()
    assert not store.exists()
    assert subscriber.submit(tool_end())
    assert subscriber.close()
    assert store.exists()


def test_sm15_a_cached_valid_shape_does_not_admit_an_extra_duration_key() -> None:
    """SM-15: A cached valid shape does not admit an extra duration key."""
    assert ev.check_event(tool_end(), RUNTIME) is None  # now cached as valid
    assert ev.check_event(tool_end(duration_ms=5), RUNTIME) is not None
    model = {"model": "m", "provider": "p"}
    assert ev.check_event(ev.scope_event(ev.MODEL_CALL, "end", "s", T0, RUNTIME, data={**model, "duration_ms": 1}),
                          RUNTIME) is None
    assert ev.check_event(ev.scope_event(ev.MODEL_CALL, "end", "s", T0, RUNTIME, data={**model, "duration_ms": -1}),
                          RUNTIME) is not None
