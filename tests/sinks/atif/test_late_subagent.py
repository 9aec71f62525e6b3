"""ATIF: a background subagent that ends after its parent trajectory was written (spec 04 FMT-43, FMT-44,
FMT-49, FMT-52).

The scope plugin reopens such a child as a *continuation* (an ``agent`` scope with
``data.continued = true`` under the same delegating call). The continuation is part of the embedded
subagent trajectory of the earlier part: the parent's file is written again, never a file of the
child's own (FMT-43). Hand-made event streams feed the racy orders straight to the ATIF sink; the
bridge scenario runs the real normaliser, scope plugin and local trajectory directory.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.export import MemoryDestination, ScopeEvent
from hermes_pipeline.sinks.atif import AtifSink, build_atif_sink

from tests.sinks.atif._support import Stream, assistant, check_document, documents, results, uuid_str
from tests.hermes.test_subagent_race import (CHILD, CHILD_BEGIN, CHILD_FINISH, PARENT, PARENT_CLOSE, PARENT_OPEN,
                                        SUBAGENT_START, SUBAGENT_STOP, TURN, attempt, delegate, on_thread, run)


class Tree:
    """One parent session delegating to one background child, fed as hand-made scope events."""

    def __init__(self, sink: AtifSink, name: str, ts: int) -> None:
        self.stream = Stream(sink, session_id=f"parent-{name}")
        self.child_id = f"child-{name}"
        self.ts = ts
        s = self.stream
        self.session = s.start("hermes.session", "agent", None, self.tick(), data={"model": "m-1"})
        self.turn = s.start("agent.run", "function", self.session.uuid, self.tick(), data={"user_message": "go"})
        llm = s.start("llm.call", "llm", self.turn.uuid, self.tick())
        s.end(llm, self.tick(), data=assistant(None, [("call_d", "delegate_task", "{}")]))
        self.tool = s.start("delegate_task", "tool", self.turn.uuid, self.tick(), profile={"tool_call_id": "call_d"})
        self.child = self.child_start({"child_role": "leaf", "child_goal": "count"})
        child_turn = s.start("agent.run", "function", self.child.uuid, self.tick(), data={"user_message": "count"},
                             meta=self.child_meta())
        self.child_llm(child_turn.uuid, "first")
        s.end(child_turn, self.tick(), meta=self.child_meta())
        s.end(self.tool, self.tick(), data={"result": "dispatched"})
        s.end(self.child, self.tick(), data={"child_status": "running"}, meta=self.child_meta())  # detached

    def tick(self) -> int:
        self.ts += 10
        return self.ts

    def child_meta(self) -> dict[str, Any]:
        return {"hermes.session_id": self.child_id, "hermes.scope_role": "subagent"}

    def child_start(self, data: dict[str, Any]) -> ScopeEvent:
        return self.stream.start("hermes.session", "agent", self.tool.uuid, self.tick(), data=data,
                                 meta=self.child_meta())

    def child_llm(self, parent: int, text: str) -> None:
        llm = self.stream.start("llm.call", "llm", parent, self.tick(), meta=self.child_meta())
        self.stream.end(llm, self.tick(), data=assistant(text), meta=self.child_meta())

    def close_parent(self) -> None:
        self.stream.end(self.turn, self.tick())
        self.stream.end(self.session, self.tick(), data={"reason": "closed"})

    def continuation(self, text: str = "second", status: str | None = "completed") -> ScopeEvent:
        """The rest of the child's run, reopened under the delegating call (``continued = true``)."""
        rest = self.child_start({"child_role": "leaf", "continued": True})
        self.child_llm(rest.uuid, text)
        if status is not None:
            self.stream.end(rest, self.tick(), data={"child_status": status, "child_summary": "3 files"},
                            meta=self.child_meta())
        return rest


def sink_with(dest: MemoryDestination, **atif: Any) -> AtifSink:
    sink = build_atif_sink({"enabled": True, **atif}, destinations={"local": dest})
    assert isinstance(sink, AtifSink)
    return sink


def trajectory_stats(sink: AtifSink) -> dict[str, int]:
    stats: dict[str, int] = sink.stats()["trajectories"]
    return stats


def messages(doc: dict[str, Any]) -> list[Any]:
    return [(s["source"], s["message"]) for s in doc["steps"]]


def test_fmt_43_late_continuation_is_merged_into_the_written_parent_file() -> None:
    """FMT-43: the child's continuation, which starts and ends after the parent's trajectory was written, is
    not a file of its own: the parent's file (same name) is written again with the continuation merged into
    the one embedded subagent trajectory (the earlier part's trajectory_id, steps in order, consecutive ids),
    whose status is the real stop's; FMT-44: the parent's ref still names that trajectory."""
    dest = MemoryDestination()
    sink = sink_with(dest)
    tree = Tree(sink, "a", 1_000_000)
    tree.close_parent()
    assert sink.flush(10.0)
    assert len(dest.items) == 1  # the parent was written when its root ended (FMT-49)
    tree.continuation()
    assert sink.flush(10.0) and sink.shutdown(10.0)
    docs = documents(dest)  # each write is schema-valid
    assert {item.name for item in dest.items} == {dest.items[0].name}  # exactly one file: rewritten in place
    assert len(dest.items) == 2
    before, after = docs
    parent_id = uuid_str(tree.turn.uuid)  # a session file takes its first run's id (issue #27)
    assert before["trajectory_id"] == after["trajectory_id"] == parent_id
    [earlier] = before["subagent_trajectories"]
    assert earlier["extra"]["hermes"]["subagent"]["status"] == "running"
    [child] = after["subagent_trajectories"]
    child_id = uuid_str(tree.child.uuid)
    assert child["trajectory_id"] == child["session_id"] == child_id
    assert messages(child) == [("user", "count"), ("agent", "first"), ("agent", "second")]
    assert [s["step_id"] for s in child["steps"]] == [1, 2, 3]
    stamps = [s["timestamp"] for s in child["steps"]]
    assert stamps == sorted(stamps)
    assert child["extra"]["hermes"]["subagent"] == {"role": "leaf", "status": "completed"}
    assert child["extra"]["hermes"]["session_id"] == tree.child_id and "notes" not in child
    assert child["final_metrics"]["total_steps"] == 3
    refs = [r["subagent_trajectory_ref"] for s in after["steps"] for r in results(s) if "subagent_trajectory_ref" in r]
    assert refs == [[{"trajectory_id": child_id, "session_id": child_id}]]
    assert after["steps"] == before["steps"]  # the parent's own steps are unchanged
    stats = trajectory_stats(sink)
    assert stats["trajectories_written"] == 1 and stats["trajectories_rewritten"] == 1
    assert stats["continuations_unmerged"] == 0 and stats["unrouted_events"] == 0


def test_fmt_43_continuation_while_the_parent_is_still_open_joins_the_child() -> None:
    """FMT-43: a continuation under a delegating call that already returned, while the parent session is
    still open, joins the child's embedded trajectory; one file, written once (FMT-49)."""
    dest = MemoryDestination()
    sink = sink_with(dest)
    tree = Tree(sink, "b", 2_000_000)
    tree.continuation()
    tree.close_parent()
    assert sink.shutdown(10.0)
    [doc] = documents(dest)
    [child] = doc["subagent_trajectories"]
    assert child["trajectory_id"] == uuid_str(tree.child.uuid)
    assert messages(child) == [("user", "count"), ("agent", "first"), ("agent", "second")]
    assert child["extra"]["hermes"]["subagent"]["status"] == "completed"
    assert trajectory_stats(sink)["trajectories_rewritten"] == 0


def test_fmt_43_repeated_continuations_stay_one_subagent_trajectory() -> None:
    """FMT-43: a child detached twice (each part ends ``running``) and then stopped is one embedded trajectory
    with the steps of every part in order; the parent file is the only file; status from the last end."""
    dest = MemoryDestination()
    sink = sink_with(dest)
    tree = Tree(sink, "c", 3_000_000)
    tree.close_parent()
    tree.continuation("second", status="running")
    tree.continuation("third", status="failed")
    assert sink.shutdown(10.0)
    docs = documents(dest)
    assert len({item.name for item in dest.items}) == 1 and len(docs) == 3
    [child] = docs[-1]["subagent_trajectories"]
    assert messages(child) == [("user", "count"), ("agent", "first"), ("agent", "second"), ("agent", "third")]
    assert child["extra"]["hermes"]["subagent"]["status"] == "failed"


def test_fmt_49_continuation_open_at_shutdown_is_written_into_the_parent_as_partial() -> None:
    """FMT-49 with FMT-43: a continuation still open when the output closes is written into the parent's
    file as it is (the embedded trajectory carries the partial note), not as a file of its own."""
    dest = MemoryDestination()
    sink = sink_with(dest)
    tree = Tree(sink, "d", 4_000_000)
    tree.close_parent()
    tree.continuation(status=None)
    assert sink.shutdown(10.0)
    docs = documents(dest)
    assert len({item.name for item in dest.items}) == 1 and len(docs) == 2
    [child] = docs[-1]["subagent_trajectories"]
    assert messages(child)[-1] == ("agent", "second")
    assert child["notes"] == "partial: written at teardown before the root scope closed"
    assert "notes" not in docs[-1]


def test_fmt_43_fallback_when_the_parent_is_no_longer_remembered(caplog: pytest.LogCaptureFixture) -> None:
    """FMT-43 fallback: only the most recent written roots with subagents are remembered; a continuation of
    an older one becomes a trajectory of its own (as before), counted and warned once, while a remembered
    parent still gets its continuation merged."""
    dest = MemoryDestination()
    sink = sink_with(dest)
    sink.assembler.recent_roots = 1
    old = Tree(sink, "old", 5_000_000)
    old.close_parent()
    older = Tree(sink, "older", 6_000_000)
    older.close_parent()
    recent = Tree(sink, "new", 7_000_000)
    recent.close_parent()  # remembering it forgets the two before
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.sinks.atif"):
        old_rest = old.continuation()
        older_rest = older.continuation()
        recent.continuation()
        assert sink.shutdown(10.0)
    docs = documents(dest)
    by_id: dict[str, list[dict[str, Any]]] = {}
    for doc in docs:
        by_id.setdefault(doc["trajectory_id"], []).append(doc)
    for forgotten, rest in ((old, old_rest), (older, older_rest)):
        [own] = by_id[uuid_str(rest.uuid)]  # today's behaviour: a file of its own
        assert messages(own) == [("agent", "second")]
        [parent] = by_id[uuid_str(forgotten.turn.uuid)]
        assert parent["subagent_trajectories"][0]["extra"]["hermes"]["subagent"]["status"] == "running"
    merged = by_id[uuid_str(recent.turn.uuid)]
    assert len(merged) == 2
    assert merged[-1]["subagent_trajectories"][0]["extra"]["hermes"]["subagent"]["status"] == "completed"
    stats = trajectory_stats(sink)
    assert stats["continuations_unmerged"] == 2 and stats["trajectories_rewritten"] == 1
    warnings = [r for r in caplog.records if "continued after its parent trajectory" in r.getMessage()]
    assert len(warnings) == 1


def test_fmt_43_bridge_child_outliving_its_parent_session_is_inside_the_parent_file(tmp_path: Path) -> None:
    """FMT-43, FMT-52: the order measured with Hermes (the child's attempt, turn end and stop arrive after the
    parent session was finalized) leaves exactly one trajectory file on disk: the parent's, rewritten, whose
    one embedded subagent trajectory holds the child's whole run (its one session scope, issue #27), with the
    real stop status."""
    capture = run(tmp_path, PARENT_OPEN, [SUBAGENT_START], on_thread(CHILD_BEGIN),
                  [delegate("post_tool_call"), attempt("pre_api_request", PARENT, TURN, "cli", 2),
                   attempt("post_api_request", PARENT, TURN, "cli", 2)],
                  PARENT_CLOSE, on_thread(CHILD_FINISH + [SUBAGENT_STOP]))
    files = [path for path in capture.files if path.endswith(".json")]
    assert len(files) == 1
    [doc] = capture.documents(".json")
    check_document(doc)
    sessions = [e for e in capture.events if e.phase == "start" and e.name == "hermes.session"]
    root = next(s for s in sessions if s.parent_uuid is None)
    (first,) = [s for s in sessions if s.metadata.get("hermes.session_id") == CHILD]
    run_start = next(e for e in capture.events if e.phase == "start" and e.name == "agent.run"
                     and e.parent_uuid == root.uuid)
    assert doc["trajectory_id"] == capture.uuid(run_start) and files[0].endswith(f"{doc['trajectory_id']}.json")
    [child] = doc["subagent_trajectories"]
    assert child["trajectory_id"] == capture.uuid(first)
    assert child["extra"]["hermes"]["session_id"] == CHILD
    assert child["extra"]["hermes"]["subagent"] == {"role": "leaf", "status": "completed"}
    sources = [s["source"] for s in child["steps"]]
    assert sources == ["user", "agent"]  # the turn started before the parent ended, the answer came after
    stamps = [s["timestamp"] for s in child["steps"]]
    assert stamps == sorted(stamps)
    stats = capture.stats["atif"]["trajectories"]
    assert stats["trajectories_written"] == 1 and stats["trajectories_rewritten"] == 1
    assert stats["unrouted_events"] == 0


def test_fmt_49_open_continuation_of_a_forgotten_parent_is_written_before_it_is_forgotten() -> None:
    """FMT-49 with FMT-43: when a parent whose child's continuation is still open has to be forgotten (newer
    roots), its file is written once more with the continuation as it is (partial), and nothing of the child
    ever becomes a file of its own."""
    dest = MemoryDestination()
    sink = sink_with(dest)
    sink.assembler.recent_roots = 1
    old = Tree(sink, "e", 8_000_000)
    old.close_parent()
    rest = old.continuation(status=None)
    Tree(sink, "f", 9_000_000).close_parent()  # forgets the first parent
    old.stream.end(rest, old.tick(), data={"child_status": "completed"}, meta=old.child_meta())
    assert sink.shutdown(10.0)
    docs = [d for d in documents(dest) if d["trajectory_id"] == uuid_str(old.turn.uuid)]
    assert len(docs) == 2 and len({i.name for i in dest.items}) == 2  # two parents, two files
    [child] = docs[-1]["subagent_trajectories"]
    assert messages(child)[-1] == ("agent", "second") and "notes" in child
    assert uuid_str(rest.uuid) not in {d["trajectory_id"] for d in documents(dest)}
