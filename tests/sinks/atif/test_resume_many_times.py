"""A Hermes session resumed any number of times, in one process or many, interleaved with other sessions and with
rewrites of a part (a late subagent), keeps every turn in its one ATIF file, each once (issue #27; FMT-42, FMT-43,
FMT-52). A candidate file that cannot be read (a FIFO, a directory) is skipped and counted, never blocks.

"Processes" of the generated sequences are separate :class:`TrajectoryDirectory` instances (what each process
has); the concurrency tests use real processes and real ``flock``, ordered by events and pipes, never sleeps."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.export.jsonenc import indented
from hermes_pipeline.export.locks import FileLockTimeout
from hermes_pipeline.sinks.atif import resume
from hermes_pipeline.sinks.atif.files import TrajectoryDirectory
from hermes_pipeline.sinks.atif.filenames import FilenameTemplate

from ._support import check_document

TEMPLATE = "hermes-atif-{session_id}.json"


def _doc(tid: str, session: str, messages: list[str], *, resumed: bool) -> dict[str, Any]:
    steps = [{"step_id": i, "source": "user", "message": m, "timestamp": "2026-12-03T10:00:00.000000Z"}
             for i, m in enumerate(messages, start=1)]
    hermes: dict[str, Any] = {"session_id": session, "trajectory_date": "2026-12-03", "content": "full",
                              "llm_payloads": False}
    if resumed:
        hermes["resumed"] = True
    return {"schema_version": "ATIF-v1.7", "session_id": tid, "trajectory_id": tid,
            "agent": {"name": "hermes", "version": "1", "model_name": "m"}, "steps": steps,
            "extra": {"hermes": hermes}}


def _item(doc: dict[str, Any]) -> SimpleNamespace:
    return SimpleNamespace(name=f"hermes-atif-{doc['trajectory_id']}.json", content=indented(doc), document=doc,
                           definitions=None)


def _output(directory: Path) -> TrajectoryDirectory:
    return TrajectoryDirectory(directory, FilenameTemplate.parse(TEMPLATE), merge_sessions=True)


def _messages_by_session(directory: Path) -> dict[str, list[list[str]]]:
    """Session id → the user messages of each file holding that session."""
    out: dict[str, list[list[str]]] = {}
    for path in sorted(directory.glob("hermes-atif-*.json")):
        if not path.is_file():
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        check_document(doc)  # a merged file is a valid ATIF v1.7 trajectory
        messages = [s["message"] for s in doc["steps"]]
        assert [s["step_id"] for s in doc["steps"]] == list(range(1, len(messages) + 1))
        out.setdefault(doc["extra"]["hermes"]["session_id"], []).append(messages)
    return out


OPS = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.sampled_from(["turn", "turn", "rewrite", "exit"])),
               min_size=1, max_size=25)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_every_turn_of_every_resume_is_kept_once(tmp_path_factory: pytest.TempPathFactory,
                                                 ops: list[tuple[int, int, str]]) -> None:
    """Any sequence of turns (a new part: the session's first, or a resume), rewrites of a process's last part
    (more steps, same trajectory id) and process exits (a new process takes the slot) over three processes and
    three sessions: each session has one file holding the latest steps of all its parts, each once, in the order
    the parts were first written (fails without the fix: a second resume in one process dropped the first)."""
    directory = tmp_path_factory.mktemp("atif")
    processes = [_output(directory) for _ in range(3)]
    parts: dict[str, list[str]] = {}  # trajectory id → its latest messages
    order: dict[str, list[str]] = {}  # session → its parts' ids, in first-write order
    last: dict[tuple[int, str], str] = {}  # (process, session) → the part that process wrote last
    counter = 0
    for process, session_index, op in ops:
        session = f"session-{session_index}"
        if op == "exit":
            processes[process] = _output(directory)
            last = {k: v for k, v in last.items() if k[0] != process}
            continue
        counter += 1
        if op == "rewrite" and (process, session) in last:
            tid = last[process, session]
            parts[tid] = [*parts[tid], f"{session} late step {counter}"]
        else:
            tid = str(uuid.UUID(int=counter))
            parts[tid] = [f"{session} turn {counter}"]
            order.setdefault(session, []).append(tid)
            last[process, session] = tid
        first = order[session][0] == tid
        processes[process].write([_item(_doc(tid, session, parts[tid], resumed=not first))])
    found = _messages_by_session(directory)
    for session, tids in order.items():
        assert found[session] == [[m for tid in tids for m in parts[tid]]]
    assert set(found) == set(order)


STALL_AND_WRITE = r'''
import json, sys, uuid
from pathlib import Path
from types import SimpleNamespace
from hermes_pipeline.export.jsonenc import indented
from hermes_pipeline.sinks.atif.files import TrajectoryDirectory
from hermes_pipeline.sinks.atif.filenames import FilenameTemplate

directory, name, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
output = TrajectoryDirectory(directory, FilenameTemplate.parse("hermes-atif-{session_id}.json"), merge_sessions=True)
sys.stdin.readline()  # all processes start together
for n in range(count):
    tid = str(uuid.uuid4())
    doc = {"schema_version": "ATIF-v1.7", "session_id": tid, "trajectory_id": tid,
           "agent": {"name": "hermes", "version": "1", "model_name": "m"},
           "steps": [{"step_id": 1, "source": "user", "message": f"{name} {n}",
                      "timestamp": "2026-12-03T10:00:00.000000Z"}],
           "extra": {"hermes": {"session_id": "shared", "resumed": True}}}
    output.write([SimpleNamespace(name=f"hermes-atif-{tid}.json", content=indented(doc), document=doc,
                                  definitions=None)])
print("done", flush=True)
'''


def test_processes_resuming_one_session_at_once_keep_each_others_parts(tmp_path: Path) -> None:
    """Three real processes resume the same session concurrently, ten times each: the session's one file ends
    with every part (the merges are serialised by the directory's lock, each reading the file anew)."""
    _output(tmp_path).write([_item(_doc(str(uuid.UUID(int=1)), "shared", ["first"], resumed=False))])
    children = [subprocess.Popen([sys.executable, "-c", STALL_AND_WRITE, str(tmp_path), name, "10"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for name in ("P", "Q", "R")]
    try:
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        for child in children:
            out, err = child.communicate(timeout=120)
            assert child.returncode == 0 and out.strip() == "done", err
    finally:
        for child in children:
            child.kill()
            child.wait()
    [messages] = _messages_by_session(tmp_path)["shared"]
    assert messages[0] == "first"
    assert sorted(messages[1:]) == sorted(f"{name} {n}" for name in "PQR" for n in range(10))


def test_a_merge_waits_for_another_merge_of_the_directory_boundedly(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Two writers (separate open directories, as two processes have) merge into one session's file: while the
    first is between its read and its write, the second waits for it, at most ``LOCK_TIMEOUT`` (then it raises
    :class:`FileLockTimeout`, counted, nothing written); after it, the second merge holds both parts."""
    base = _doc(str(uuid.UUID(int=1)), "s", ["one"], resumed=False)
    _output(tmp_path).write([_item(base)])
    first, second = _output(tmp_path), _output(tmp_path)
    inside, leave = threading.Event(), threading.Event()
    real = first._write_named

    def stalled(name: str, content: bytes) -> None:  # the first merge has read the file and not written it yet
        inside.set()
        assert leave.wait(30)
        real(name, content)

    monkeypatch.setattr(first, "_write_named", stalled)
    part_two = _doc(str(uuid.UUID(int=2)), "s", ["two"], resumed=True)
    thread = threading.Thread(target=first.write, args=([_item(part_two)],))
    thread.start()
    try:
        assert inside.wait(30)
        monkeypatch.setattr(resume, "LOCK_TIMEOUT", 0.2)
        part_three = _doc(str(uuid.UUID(int=3)), "s", ["three"], resumed=True)
        with pytest.raises(FileLockTimeout):
            second.write([_item(part_three)])
        assert second.sessions is not None and second.sessions.lock_timeouts == 1
    finally:
        leave.set()
        thread.join(30)
    second.write([_item(part_three)])  # the writer's retry, after the first merge is in
    assert _messages_by_session(tmp_path) == {"s": [["one", "two", "three"]]}


def test_a_fifo_or_directory_named_like_a_trajectory_is_skipped_and_counted(tmp_path: Path) -> None:
    """A FIFO (an NFS-like hang) or a directory among the candidates never blocks the writer: it is counted in
    ``unreadable`` and skipped, and the resumed part is merged into the session's real file."""
    output = _output(tmp_path)
    output.write([_item(_doc(str(uuid.UUID(int=1)), "s", ["one"], resumed=False))])
    fifo = tmp_path / f"hermes-atif-{uuid.UUID(int=9)}.json"
    os.mkfifo(fifo)
    os.utime(fifo, (4_000_000_000, 4_000_000_000))  # the newest candidate: read first
    (tmp_path / f"hermes-atif-{uuid.UUID(int=8)}.json").mkdir()
    done = threading.Event()

    def resumed() -> None:
        output.write([_item(_doc(str(uuid.UUID(int=2)), "s", ["two"], resumed=True))])
        done.set()

    thread = threading.Thread(target=resumed, daemon=True)  # a blocked read must not hang the test run
    thread.start()
    assert done.wait(30), "the writer blocked on a FIFO in the output directory"
    assert output.sessions is not None and output.sessions.unreadable >= 1
    assert _messages_by_session(tmp_path) == {"s": [["one", "two"]]}
