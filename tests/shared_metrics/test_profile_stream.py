"""Shared metrics is one more listener of the profile's one scope stream (issue #29 item 3; SM-9, SM-14, SM-65,
CFG-85).

With shared metrics and the trajectory store on, a profile's engine carries one scope plugin (the stream) and
no shared-metrics plugin; both consumers hear the same events. With shared metrics off, nothing of it listens
to the stream, so no event reaches shared-metrics code.
"""

from __future__ import annotations

from typing import Any

import pytest

from hermes_pipeline.profile import open_profile
from hermes_pipeline.shared_metrics import MetricsStore
from hermes_pipeline.shared_metrics.accounting import Accounting
from hermes_pipeline.shared_metrics.scope_listener import ScopeListener

from ..config.conftest import Env, env, process  # noqa: F401  (fixtures: isolated HOME / HERMES_HOME, process engine)
from .conftest import rows, totals

TRAJECTORIES = "observability:\n  trajectories:\n    enabled: true\n"


def write_config(env: Env, shared_metrics: bool) -> None:
    env.hermes_home.mkdir(parents=True, exist_ok=True)
    text = TRAJECTORIES + f"telemetry:\n  shared_metrics:\n    enabled: {'true' if shared_metrics else 'false'}\n"
    (env.hermes_home / "config.yaml").write_text(text)


def one_tool_call(profile: Any) -> None:
    with profile.host(model="m", platform="cli").session() as session, session.turn("q") as turn:
        turn.call_tool("read_file", {"path": "x"}, lambda path: "ok", tool_call_id="c1")
        turn.complete("ok")


def test_shared_metrics_listens_to_the_profiles_one_stream(env: Env) -> None:  # noqa: F811
    """CFG-85 / SM-14: one scope plugin on the profile's engine, heard by the trajectory store and shared metrics;
    shared metrics adds no plugin of its own and counts the profile's tool call from the stream."""
    write_config(env, shared_metrics=True)
    profile = open_profile(env.hermes_home)
    try:
        metrics = profile.consumers["shared_metrics"]
        assert metrics.stream is profile.stream
        assert profile.stream.listeners() == 2
        names = profile.engine.plugins.names()
        own = f"hermes.profile.stream.{id(profile.stream):x}"
        assert [n for n in names if n.startswith("hermes.profile.stream.")] == [own]
        assert not [n for n in names if "shared_metrics" in n], names
        one_tool_call(profile)
        assert metrics.flush()
        assert totals(MetricsStore(env.hermes_home), "hermes.tool_call.count") == 1
        assert totals(MetricsStore(env.hermes_home), "hermes.task_run.finished") == 1
    finally:
        profile.close()
    assert profile.stream.listeners() == 0


def test_with_shared_metrics_off_no_event_reaches_its_code(
        env: Env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """SM-6 / SM-65: collection off, the stream runs for the trajectory store alone; no shared-metrics listener,
    no accounting call, no store (nothing of shared metrics runs per event)."""
    write_config(env, shared_metrics=False)
    calls: list[str] = []
    monkeypatch.setattr(ScopeListener, "__call__", lambda self, event: calls.append("listener"))
    monkeypatch.setattr(Accounting, "task_started", lambda *a, **k: calls.append("accounting"))
    profile = open_profile(env.hermes_home)
    try:
        assert profile.consumers.get("shared_metrics") is None
        assert profile.stream.listeners() == 1
        one_tool_call(profile)
        assert profile.stream.flush()
    finally:
        profile.close()
    assert calls == []
    assert not MetricsStore(env.hermes_home).exists()


def test_a_rotated_session_id_keeps_the_task_through_the_profiles_stream(env: Env) -> None:  # noqa: F811
    """SM-19 / SM-21: through the profile's stream, beside the trajectory store: a compaction rotates the session
    id mid-turn, the old id is torn down, and the turn's real end (a timeout the host did not call failed) comes
    under the new id. Shared metrics finishes the task with that end; the stream's other listeners (a consumer's
    sink) never get the first-party notice that carried it."""
    from hermes_pipeline.export.events import FACT

    write_config(env, shared_metrics=True)
    profile = open_profile(env.hermes_home)
    seen: list[Any] = []
    try:
        profile.stream.add_listener(seen.append)
        engine = profile.engine
        engine.dispatch("pre_llm_call", {"session_id": "old", "task_id": "t1", "turn_id": "u1", "platform": "cli",
                                         "user_message": "q", "model": "m"})
        engine.dispatch("on_compaction", {"session_id": "old", "new_session_id": "new", "rotated": True,
                                          "platform": "cli"})
        engine.dispatch("on_session_finalize", {"session_id": "old", "platform": "cli", "reason": "shutdown"})
        engine.dispatch("on_session_end", {"session_id": "new", "task_id": "t1", "turn_id": "u1", "completed": False,
                                           "interrupted": False, "failed": False, "turn_exit_reason": "timeout"})
        metrics = profile.consumers["shared_metrics"]
        assert metrics.flush()
        finished = rows(MetricsStore(env.hermes_home), "hermes.task_run.finished")
        assert [(r["dimensions"]["outcome"], r["dimensions"]["end_reason"], r["value"]) for r in finished] == [
            ("timed_out", "timed_out", 1)]
        assert seen and not [e for e in seen if e.kind == FACT]
    finally:
        profile.close()
