"""Several processes of one profile: an agent's skill or memory write is never blamed on the user (issue #27).

Each process is a host feeding its own store writer of the same profile; every turn writes memory (single and
batch shapes, one shared file) and patches a skill, and asks for a full rescan right after, so the other
processes' rescans keep landing between a tool's write and its row. The rule of
:mod:`hermes_pipeline.sinks.observability_store.attribution` (a store writer's row wins over a rescan, in any
order) leaves no ``user-direct`` memory row and no session-less skill row; a hand edit made meanwhile is still
the user's (BOOK-19, BOOK-22).
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from tests.sinks.observability_store._support import rows

TURNS = 25
PROCESSES = 3


def _worker(home: str, index: int, turns: int) -> None:
    import os
    from pathlib import Path

    from tests.sinks.observability_store._support import entry_memory_tool, store

    root = Path(home)
    tool = entry_memory_tool(root)
    with store(root) as (host, handle):
        with host.session() as session:
            for k in range(turns):
                with session.turn(f"turn {k}") as turn:
                    turn.call_tool("memory", {"action": "add", "target": "memory",
                                              "content": f"process {index} learned fact {k}"}, tool)
                    if k % 2:
                        turn.call_tool("memory", {"target": "memory", "operations": [
                            {"action": "replace", "old_text": f"process {index} learned fact {k - 1}",
                             "content": f"process {index} revised fact {k - 1}"},
                            {"action": "add", "content": f"process {index} batch note {k}"}]}, tool)
                    skill = root / "skills" / "team" / f"skill-{index}"  # categorised, written atomically as
                    skill.mkdir(parents=True, exist_ok=True)         # Hermes' skill_manage writes
                    (skill / ".SKILL.md.tmp").write_text(f"---\nname: skill-{index}\n---\nversion {k}\n",
                                                         encoding="utf-8")
                    os.replace(skill / ".SKILL.md.tmp", skill / "SKILL.md")
                    host.skill_lifecycle("created" if k == 0 else "patched", f"skill-{index}")
                    handle.sink.request_scan("scan_all")  # a full rescan, not deferred, every turn
                    turn.complete("ok")


def test_no_agent_write_of_any_process_is_blamed_on_the_user(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_worker, args=(str(tmp_path), i, TURNS)) for i in range(PROCESSES)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(240)
        assert p.exitcode == 0
    assert rows(tmp_path, "SELECT COUNT(*) FROM memory_changes WHERE actor = 'user-direct'") == [(0,)]
    singles, batches = TURNS, TURNS // 2
    assert rows(tmp_path, "SELECT actor, COUNT(*) FROM memory_changes GROUP BY actor") == \
        [("agent-reflection", PROCESSES * (singles + 2 * batches))]
    assert rows(tmp_path, "SELECT COUNT(*) FROM memory_changes WHERE trigger_session_id IS NULL") == [(0,)]
    for index in range(PROCESSES):
        history = rows(tmp_path, "SELECT version, hermes_action, trigger_session_id IS NULL FROM skill_history "
                                 "WHERE skill_name = ? ORDER BY version", (f"skill-{index}",))
        assert [h[0] for h in history] == list(range(1, TURNS + 1))
        assert [h[1] for h in history] == ["created"] + ["patched"] * (TURNS - 1)
        assert not any(h[2] for h in history)
        chain = rows(tmp_path, "SELECT before_hash, after_hash, skill_path FROM skill_history WHERE skill_name = ? "
                               "ORDER BY version", (f"skill-{index}",))
        assert all(chain[i][0] == chain[i - 1][1] for i in range(1, len(chain)))  # each starts where one ended
        assert {c[2] for c in chain} == {f"team/skill-{index}"}


def test_a_hand_edit_while_agents_write_is_still_the_users(tmp_path: Path) -> None:
    """The rule only takes over a rescan's row when an agent write produced exactly what the rescan saw; the hand
    edit (one entry appended) is one ``add`` row quoting that entry (BOOK-22)."""
    from tests.sinks.observability_store._support import entry_memory_tool, store

    tool = entry_memory_tool(tmp_path)
    with store(tmp_path) as (host, handle):
        with host.session() as session:
            with session.turn("t") as turn:
                turn.call_tool("memory", {"action": "add", "content": "agent fact"}, tool)
                turn.complete("ok")
            handle.flush()
            path = tmp_path / "memories" / "MEMORY.md"
            path.write_text(path.read_text(encoding="utf-8") + "\n§\nwritten by hand", encoding="utf-8")
            handle.sink.request_scan("scan_all")
            handle.flush()
            with session.turn("t2") as turn:
                turn.call_tool("memory", {"action": "add", "content": "second agent fact"}, tool)
                turn.complete("ok")
    found = rows(tmp_path, "SELECT change_type, actor, after_excerpt FROM memory_changes ORDER BY id")
    assert found == [("add", "agent-reflection", "agent fact"), ("add", "user-direct", "written by hand"),
                     ("add", "agent-reflection", "second agent fact")]


def test_in_flight_marks_of_dead_processes_or_too_old_are_dropped(tmp_path: Path) -> None:
    """A mark only holds a rescan back while its process lives and for at most the attribution window."""
    import json
    import os
    import subprocess
    import sys
    import time

    from hermes_pipeline.sinks.observability_store.attribution import WINDOW
    from hermes_pipeline.sinks.observability_store.inflight import inflight_files

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    now = time.time()
    marks = {"live.json": (os.getpid(), now, ["memories/MEMORY.md"]),
             "dead.json": (int(dead.stdout), now, ["memories/USER.md"]),
             "old.json": (os.getpid(), now - WINDOW - 1, ["memories/OLD.md"])}
    for name, (pid, at, files) in marks.items():
        (tmp_path / name).write_text(json.dumps({"pid": pid, "at": at, "files": files}), encoding="utf-8")
    (tmp_path / "torn.json").write_text("{", encoding="utf-8")
    assert inflight_files(tmp_path, now) == {"memories/MEMORY.md"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["live.json", "torn.json"]
