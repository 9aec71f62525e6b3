"""Session segmentation at turn boundaries (spec 03 §14, CFG-70..CFG-77) through the host API."""

from __future__ import annotations

import logging
from typing import Any

from hermes_pipeline import Engine, Host
from hermes_pipeline.host import SegmentPolicy
from hermes_pipeline.testing import Recorder


def make_host(engine: Engine, **policy: Any) -> Host:
    return Host(engine, model="m", platform="gateway", segments=SegmentPolicy(**policy))


def run_turns(session: Any, n: int) -> None:
    for i in range(n):
        with session.turn(f"t{i}") as turn:
            turn.complete("ok")


def segment_events(rec: Recorder) -> list[tuple[int, str]]:
    return [(e["segment"], e["segment_reason"]) for e in rec.of("on_session_segment")]


def test_cfg_70_defaults_keep_one_session_scope(engine: Engine, rec: Recorder) -> None:
    """CFG-70 / CFG-71: with both defaults there is never a rotation."""
    with make_host(engine).session() as session:
        run_turns(session, 25)
        session.report_compaction()
        run_turns(session, 2)
    assert rec.of("on_session_segment") == []
    assert [e["rotated"] for e in rec.of("on_compaction")] == [False]


def test_cfg_71_max_turns_rotates_at_turn_start_before_pre_llm_call(engine: Engine, rec: Recorder) -> None:
    """CFG-70 / CFG-71 / CFG-72: rotation after max_turns completed turns, at the next turn start."""
    with make_host(engine, max_turns=2).session("s1") as session:
        run_turns(session, 5)
    assert segment_events(rec) == [(1, "max_turns"), (2, "max_turns")]
    names = rec.names()
    first = names.index("on_session_segment")
    assert names[first - 1] == "on_session_end" and names[first + 1] == "pre_llm_call"
    seg = rec.of("on_session_segment")[0]
    assert seg["session_id"] == "s1" and seg["turn_id"] == rec.of("pre_llm_call")[2]["turn_id"]
    assert len(rec.of("on_session_start")) == 1  # the same session continues


def test_cfg_73_failed_and_interrupted_turns_count(engine: Engine, rec: Recorder) -> None:
    """CFG-73: the completed-turn counter advances whatever the turn's outcome."""
    with make_host(engine, max_turns=2).session() as session:
        try:
            with session.turn("boom"):
                raise ValueError("x")
        except ValueError:
            pass
        with session.turn("interrupted") as turn:
            turn.interrupt()
        run_turns(session, 1)
    assert segment_events(rec) == [(1, "max_turns")]


def test_cfg_75_in_place_compaction_rotates_next_turn_and_wins_over_max_turns(engine: Engine,
                                                                               rec: Recorder) -> None:
    """CFG-71 / CFG-75: compaction sets a pending flag; if both triggers hold the reason is compaction."""
    with make_host(engine, on_compaction=True, max_turns=2).session() as session:
        run_turns(session, 2)  # 2 completed: max_turns holds at the next start
        assert session.report_compaction() is session
        run_turns(session, 1)  # both triggers hold → one rotation, reason compaction
        run_turns(session, 2)  # 2 completed in segment 1 → max_turns at the start of the second
    assert segment_events(rec) == [(1, "compaction"), (2, "max_turns")]


def test_cfg_75_compaction_ignored_without_on_compaction(engine: Engine, rec: Recorder) -> None:
    """CFG-75: an in-place compaction only sets the flag when on_compaction is true."""
    with make_host(engine, max_turns=10).session() as session:
        session.report_compaction()
        run_turns(session, 3)
    assert rec.of("on_session_segment") == []


def test_cfg_75_id_rotating_compaction_deferred_until_live_turn_ends(engine: Engine, rec: Recorder) -> None:
    """CFG-75: an ID-rotating compaction during a live turn is reported when that turn ends."""
    host = make_host(engine, on_compaction=True)
    with host.session("old") as session:
        with session.turn("long turn") as turn:
            new = session.report_compaction("new-id")
            assert rec.of("on_compaction") == []
            turn.complete("done")
        compaction = rec.last("on_compaction")
        assert (compaction["session_id"], compaction["new_session_id"], compaction["rotated"]) == (
            "old", "new-id", True)
        assert new.session_id == "new-id"
        run_turns(new, 1)
    assert rec.of("pre_llm_call")[-1]["session_id"] == "new-id"
    assert rec.of("on_session_start")[0]["session_id"] == "old" and len(rec.of("on_session_start")) == 1


def test_cfg_76_concurrent_turn_does_not_rotate_and_warns_once(engine: Engine, rec: Recorder,
                                                               caplog: Any) -> None:
    """CFG-76: a second turn started while one is live is not segmented, with a WARNING."""
    with make_host(engine, max_turns=1).session() as session:
        run_turns(session, 1)
        with caplog.at_level(logging.WARNING):
            with session.turn("a") as a:  # rotates (1 completed)
                with session.turn("b") as b:  # concurrent: no evaluation
                    b.complete("b")
                a.complete("a")
    assert segment_events(rec) == [(1, "max_turns")]
    assert "second turn started" in caplog.text


def test_segment_hook_has_a_hookspec() -> None:
    """CFG-77: the rotation is visible to sinks through a declared hook with segment fields."""
    from hermes_pipeline.contract.hooks import OBSERVER_HOOKS

    assert OBSERVER_HOOKS["on_session_segment"].fields == ("session_id", "segment", "segment_reason", "platform",
                                                            "model", "turn_id")
