"""The real Hermes Agent's subagents (``delegate_task``) changing skills and memory, read back from the observability
store (BOOK-18, BOOK-19, BOOK-21, BOOK-22; OBS-50: every hook a child agent emits carries the child's own
session, task and turn, and parent and child are linked only through the subagent hooks).

A change a subagent makes is the agent's (never a hand edit: no ``external_edit`` / ``discovered`` / ``user-direct``
row, at the end of the run or at the next start), in the session, run and turn of the child that made it: the child's
own ``task_runs`` row (platform ``subagent``), whose session Hermes links to the parent's
(``sessions.parent_session_id`` in its ``state.db``), and whose trajectory the parent's trajectory file embeds
(``subagent_trajectories``).

How Hermes 0.19.0 is driven:

- ``hermes -z``, not ``hermes chat -q``: a top-level ``delegate_task`` runs in the background, and ``chat -q`` exits
  (interrupting the child, as tests/hermes/test_bridge_e2e.py shows) before the child got to its writes; ``-z``
  declares a stateless channel (``hermes_cli/oneshot.py``: ``declare_stateless_channel``), so ``delegate_task`` runs
  the children inline, inside the parent's tool call (``tools/delegate_tool.py``, "running the batch synchronously").
- The model is the project's scripted server in this process; each request is answered from the plan of whoever sent
  it (the first user message: the parent's prompt, or the goal the parent gave the child), so parent and children, and
  two children running at once, each get their own steps.
- Hermes refuses the ``memory`` tool to every subagent (``DELEGATE_BLOCKED_TOOLS`` in ``tools/delegate_tool.py``, "no
  writes to shared MEMORY.md"): the tool is not in the child's tool list, and a call of it is answered "Tool 'memory'
  does not exist" by the conversation loop (``agent/conversation_loop.py``) without running it or firing a hook. A
  child changes memory with its file tools instead (``write_file``, ``patch``), which it keeps, like ``skill_manage``.

Helpers come from ``tests/hermes/test_bridge_e2e.py`` and ``tests/hermes/test_self_learning_e2e.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_pipeline.demo.model_server import ScriptedModelServer, ScriptStep, ToolCallSpec
from tests.hermes.test_bridge_e2e import HERMES, _config, pytestmark  # noqa: F401
from tests.hermes.test_self_learning_e2e import OLD_ENTRY, SKILL_V1, _rows, _sha

PARENT = "PARENT-TASK"
AGAIN = "AGAIN-HELLO"
SKILL_V2 = SKILL_V1.replace("2. Write report.csv", "2. Write report.csv with a header row")
NOTES = "---\nname: notes\ndescription: Keep meeting notes\n---\n# Steps\n1. Write the notes\n"
BARRIER_YAML = "name: meet\nversion: 0.1.0\ndescription: test ordering\nkind: standalone\n" \
               "hooks:\n  - pre_tool_call\n  - post_tool_call\n"
BARRIER = '''
import threading

_LOCK = threading.Lock()
_BARRIERS = {}


def _meet(hook, tool_name, args):
    """Two subagents' write_file calls of one kind (a skill, a memory file) meet before the tools run and again
    before either call's end reaches the observability store: each call runs while the other's does, and each one's
    end comes after both files were written."""
    path = str(args.get("path") or "") if isinstance(args, dict) else ""
    kind = "skills" if "/skills/" in path else "memories" if "/memories/" in path else None
    if tool_name != "write_file" or kind is None:
        return
    with _LOCK:
        barrier = _BARRIERS.setdefault((hook, kind), threading.Barrier(2, timeout=60))
    barrier.wait()


def pre(tool_name=None, args=None, **_):
    _meet("pre", tool_name, args)


def post(tool_name=None, args=None, **_):
    _meet("post", tool_name, args)


def register(ctx):
    ctx.register_hook("pre_tool_call", pre)
    ctx.register_hook("post_tool_call", post)
'''

Plan = list[ScriptStep | str]
"""A model's steps: tool calls, or a final text."""


def _sha_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _call(name: str, args: dict[str, Any], call_id: str) -> ScriptStep:
    return ScriptStep(tool_calls=[ToolCallSpec(name, args, call_id)])


def _delegate(call_id: str = "call_delegate", **args: Any) -> ScriptStep:
    return _call("delegate_task", args, call_id)


def _model(plans: dict[str, Plan]) -> Callable[[dict[str, Any]], ScriptStep]:
    """The model of the parent and of every child: the plan whose key is in the request's first user message (the
    parent's prompt or the child's goal), its step numbered by the assistant messages the request already holds."""
    def step(body: dict[str, Any]) -> ScriptStep:
        messages = body.get("messages", [])
        first = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
        done = sum(1 for m in messages if m.get("role") == "assistant")
        for key, plan in plans.items():
            if key in first:
                item = plan[done] if done < len(plan) else f"{key} done"
                return ScriptStep(content=item) if isinstance(item, str) else item
        return ScriptStep(content="nothing to do")

    return step


def _profile(home: Path, port: int, plugins: tuple[str, ...] = ()) -> None:
    _config(home, port, enabled=["hermes_pipeline", *plugins])
    with open(home / "config.yaml", "a", encoding="utf-8") as fh:
        fh.write("observability:\n  audit:\n    enabled: true\n  trajectories:\n    enabled: true\n")


def _oneshot(tmp: Path, home: Path, prompt: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "OTEL_"))}
    env.update(HOME=str(tmp / "user"), HERMES_HOME=str(home), NO_COLOR="1", HERMES_ACCEPT_HOOKS="1")
    (tmp / "user").mkdir(exist_ok=True)
    (tmp / "work").mkdir(exist_ok=True)
    proc = subprocess.run([HERMES or "hermes", "-z", prompt], cwd=tmp / "work", env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]


@dataclass
class Family:
    """One delegating run: the parent's session and each child's (by the key of its plan), as Hermes recorded them,
    and every request the model was sent."""

    parent: str
    children: dict[str, str]
    requests: list[dict[str, Any]]


def _state(home: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with sqlite3.connect(home / "state.db") as db:
        return list(db.execute(sql, params))


def _delegating(tmp: Path, home: Path, parent: Plan, children: dict[str, Plan],
                plugins: dict[str, tuple[str, str]] | None = None) -> Family:
    """``hermes -z`` in the profile ``home``: the parent follows ``parent``, each child the plan of the key its goal
    holds; ``plugins``: Hermes plugins of the profile (name → plugin.yaml, __init__.py). The sessions come from
    Hermes' own record (``state.db``), each child's found by its goal and checked to be a subagent of the parent."""
    server = ScriptedModelServer([_model({PARENT: parent, **children})] * 200)
    try:
        _profile(home, server.port, tuple(plugins or ()))
        for name, (manifest, code) in (plugins or {}).items():
            folder = home / "plugins" / name
            folder.mkdir(parents=True)
            (folder / "plugin.yaml").write_text(manifest, encoding="utf-8")
            (folder / "__init__.py").write_text(code, encoding="utf-8")
        _oneshot(tmp, home, f"{PARENT}: delegate the work.")
        requests = server.requests
        assert not server.errors, server.errors
    finally:
        server.close()
    ((parent_id,),) = _state(home, "SELECT id FROM sessions WHERE parent_session_id IS NULL")
    found: dict[str, str] = {}
    for session, source, parent_of in _state(home, "SELECT id, source, parent_session_id FROM sessions "
                                                   "WHERE parent_session_id IS NOT NULL"):
        assert (source, parent_of) == ("subagent", parent_id)  # Hermes' own link of the child to its parent
        (goal,) = _state(home, "SELECT content FROM messages WHERE session_id = ? AND role = 'user' ORDER BY id "
                               "LIMIT 1", (session,))[0]
        (key,) = [k for k in children if k in goal]
        found[key] = session
    assert sorted(found) == sorted(children)
    return Family(parent_id, found, requests)


def _again(tmp: Path, home: Path) -> None:
    """A later process of the profile: its start rescans the skills and memory files."""
    server = ScriptedModelServer([_model({AGAIN: ["hi"]})] * 20)
    try:
        _profile(home, server.port)
        _oneshot(tmp, home, f"{AGAIN} there.")
    finally:
        server.close()


def _run(home: Path, session: str, platform: str) -> tuple[str, str]:
    """The one run (``trajectory_id``, ``turn_id``) of ``session`` in ``task_runs``, of that platform."""
    ((trajectory_id, turn_id, found),) = _rows(home, "SELECT trajectory_id, turn_id, platform FROM task_runs "
                                                     "WHERE session_id = ?", (session,))
    assert found == platform
    return str(trajectory_id), str(turn_id)


def _embedded(home: Path, parent: str, child: str) -> dict[str, Any]:
    """The child's trajectory, embedded in the trajectory file of the parent's run (BOOK-27: named by its id)."""
    run, _ = _run(home, parent, "cli")
    (path,) = (home / "trajectories").glob(f"*-{run}.json")
    doc = json.loads(path.read_text(encoding="utf-8"))
    (sub,) = [s for s in doc.get("subagent_trajectories") or [] if s["extra"]["hermes"].get("session_id") == child]
    assert sub["extra"]["hermes"]["subagent"]["status"] == "completed"
    return dict(sub)


def _called(trajectory: dict[str, Any]) -> list[tuple[str, str]]:
    """``(tool, call id)`` of every tool call the trajectory's steps asked for, in order."""
    return [(c["function_name"], c["tool_call_id"]) for s in trajectory["steps"] for c in s.get("tool_calls") or ()]


def _nothing_unexplained(home: Path) -> None:
    assert _rows(home, "SELECT COUNT(*) FROM skill_history WHERE trigger_session_id IS NULL") == [(0,)]
    assert _rows(home, "SELECT COUNT(*) FROM memory_changes WHERE actor IS NOT 'agent-reflection' "
                       "OR trigger_session_id IS NULL") == [(0,)]


def test_skill_created_and_patched_by_a_subagent_with_skill_manage_is_the_subagents(tmp_path: Path) -> None:
    """BOOK-18/BOOK-19, OBS-50: a subagent's ``skill_manage`` create (category, reason) and patch are versions 1 and 2
    of the skill, ``created`` / ``patched`` with the reason given, in the child's session, run and turn (not the
    parent's), with the SKILL.md hashes of the exact texts written, chained; the parent's trajectory embeds the
    child's with both calls; a later start adds nothing."""
    home = tmp_path / "hermes"
    family = _delegating(tmp_path, home, [_delegate(goal="CHILD-SKILL: make the csv-report skill"), "done"], {
        "CHILD-SKILL": [
            _call("skill_manage", {"action": "create", "name": "csv-report", "category": "data", "content": SKILL_V1,
                                   "reason": "the parent asked for weekly reports"}, "call_create"),
            _call("skill_manage", {"action": "patch", "name": "csv-report", "old_string": "2. Write report.csv",
                                   "new_string": "2. Write report.csv with a header row"}, "call_patch"),
            ScriptStep(content="skill ready")]})
    child = family.children["CHILD-SKILL"]
    skill_md = home / "skills" / "data" / "csv-report" / "SKILL.md"
    assert skill_md.read_text(encoding="utf-8") == SKILL_V2
    v1, v2 = _sha_text(SKILL_V1), _sha_text(SKILL_V2)
    assert v2 == _sha(skill_md)
    child_run, parent_run = _run(home, child, "subagent"), _run(home, family.parent, "cli")
    assert child_run != parent_run
    query = "SELECT skill_name, version, change_type, hermes_action, reason, trigger_session_id, skill_path, " \
            "changed_files, provenance, before_hash, after_hash, trajectory_id, turn_id FROM skill_history ORDER BY id"
    expected = [
        ("csv-report", 1, "create", "created", "the parent asked for weekly reports", child, "data/csv-report",
         '["SKILL.md"]', "agent_created", None, v1, *child_run),
        ("csv-report", 2, "refine", "patched", None, child, "data/csv-report", '["SKILL.md"]', "agent_created", v1, v2,
         *child_run)]
    assert _rows(home, query) == expected
    assert _called(_embedded(home, family.parent, child)) == [("skill_manage", "call_create"),
                                                              ("skill_manage", "call_patch")]
    _again(tmp_path, home)
    assert _rows(home, query) == expected
    _nothing_unexplained(home)


def test_skill_written_by_a_subagent_with_write_file_and_patch_is_the_subagents(tmp_path: Path) -> None:
    """BOOK-19, OBS-50: a subagent's ``write_file`` of a new skill's SKILL.md, ``patch`` of it and ``write_file`` of a
    supporting file are versions ``created``, ``edited``, ``file_written`` of that skill, each naming the file it
    changed, in the child's session, run and turn, hashes chained to the files on disk; a later start adds nothing."""
    home = tmp_path / "hermes"
    skill = home / "skills" / "notes"
    notes_v2 = NOTES.replace("1. Write the notes", "1. Write the notes\n2. Send them")
    family = _delegating(tmp_path, home, [_delegate(goal="CHILD-FILES: write the notes skill"), "done"], {
        "CHILD-FILES": [
            _call("write_file", {"path": str(skill / "SKILL.md"), "content": NOTES}, "call_write"),
            _call("patch", {"mode": "replace", "path": str(skill / "SKILL.md"), "old_string": "1. Write the notes",
                            "new_string": "1. Write the notes\n2. Send them"}, "call_patch"),
            _call("write_file", {"path": str(skill / "references" / "template.md"), "content": "# Minutes\n"},
                  "call_reference"),
            ScriptStep(content="notes ready")]})
    child = family.children["CHILD-FILES"]
    assert (skill / "SKILL.md").read_text(encoding="utf-8") == notes_v2
    v1, v2 = _sha_text(NOTES), _sha(skill / "SKILL.md")
    child_run = _run(home, child, "subagent")
    query = "SELECT skill_name, version, change_type, hermes_action, trigger_session_id, skill_path, changed_files, " \
            "before_hash, after_hash, files, trajectory_id, turn_id FROM skill_history ORDER BY id"
    expected = [
        ("notes", 1, "create", "created", child, "notes", '["SKILL.md"]', None, v1, json.dumps({"SKILL.md": v1}),
         *child_run),
        ("notes", 2, "refine", "edited", child, "notes", '["SKILL.md"]', v1, v2, json.dumps({"SKILL.md": v2}),
         *child_run),
        ("notes", 3, "refine", "file_written", child, "notes", '["references/template.md"]', v2, v2,
         json.dumps({"SKILL.md": v2, "references/template.md": _sha(skill / "references" / "template.md")}),
         *child_run)]
    assert _rows(home, query) == expected
    assert _called(_embedded(home, family.parent, child)) == [("write_file", "call_write"), ("patch", "call_patch"),
                                                              ("write_file", "call_reference")]
    _again(tmp_path, home)
    assert _rows(home, query) == expected
    _nothing_unexplained(home)


def test_memory_tool_is_refused_to_a_subagent_and_nothing_is_recorded_as_its_change(tmp_path: Path) -> None:
    """BOOK-22 with a subagent's ``memory`` add and replace: Hermes does not offer the tool to the child (its requests
    list no ``memory`` tool, the parent's do) and answers both calls "Tool 'memory' does not exist" without running
    them; MEMORY.md keeps its entry, no ``memory_changes`` row names the child, and the child's run counts no tool
    call. The trajectory shows the refused calls and Hermes' answer. The parent's own ``memory`` add after the
    delegation is its row, in its session, run and turn; a later start adds nothing."""
    home = tmp_path / "hermes"
    memory = home / "memories" / "MEMORY.md"
    memory.parent.mkdir(parents=True)
    memory.write_text(OLD_ENTRY, encoding="utf-8")
    family = _delegating(tmp_path, home, [
        _delegate(goal="CHILD-MEMORY: remember the build setup"),
        _call("memory", {"action": "add", "target": "memory", "content": "Reports go out on Mondays"}, "call_parent"),
        "done"], {
        "CHILD-MEMORY": [
            _call("memory", {"action": "add", "target": "memory", "content": "Builds run in CI"}, "call_add"),
            _call("memory", {"action": "replace", "target": "memory", "old_text": "Python 3.10",
                             "content": "The user's build runs on Python 3.12 with uv"}, "call_replace"),
            ScriptStep(content="could not remember")]})
    child = family.children["CHILD-MEMORY"]
    refused = _state(home, "SELECT tool_call_id, content FROM messages WHERE session_id = ? AND role = 'tool' "
                           "ORDER BY id", (child,))
    assert [r[0] for r in refused] == ["call_add", "call_replace"]
    assert all(r[1].startswith("Tool 'memory' does not exist.") for r in refused)

    def tools(request: dict[str, Any]) -> set[str]:
        return {t["function"]["name"] for t in request.get("tools") or ()}

    def first_user(request: dict[str, Any]) -> str:
        return next(str(m.get("content")) for m in request["messages"] if m.get("role") == "user")

    child_requests = [r for r in family.requests if "CHILD-MEMORY" in first_user(r)]
    parent_requests = [r for r in family.requests if PARENT in first_user(r)]
    assert len(child_requests) == 3 and all("memory" not in tools(r) for r in child_requests)
    assert parent_requests and all("memory" in tools(r) for r in parent_requests)
    assert memory.read_text(encoding="utf-8").startswith(OLD_ENTRY)
    assert "Builds run in CI" not in memory.read_text(encoding="utf-8")
    assert "Python 3.12" not in memory.read_text(encoding="utf-8")

    parent_run = _run(home, family.parent, "cli")
    assert _rows(home, "SELECT tool_calls FROM task_runs WHERE session_id = ?", (child,)) == [(0,)]
    query = "SELECT file_path, change_type, actor, trigger_session_id, before_excerpt, after_excerpt, file_hash, " \
            "trajectory_id, turn_id FROM memory_changes ORDER BY id"
    expected = [("memories/MEMORY.md", "add", "agent-reflection", family.parent, None, "Reports go out on Mondays",
                 _sha(memory), *parent_run)]
    assert _rows(home, query) == expected

    sub = _embedded(home, family.parent, child)
    assert _called(sub) == [("memory", "call_add"), ("memory", "call_replace")]
    answers = {m["tool_call_id"]: m["content"] for s in sub["steps"]
               for m in s["extra"]["hermes"].get("llm_request", {}).get("body", {}).get("messages", ())
               if m.get("role") == "tool"}
    assert sorted(answers) == ["call_add", "call_replace"]
    assert all(a.startswith("Tool 'memory' does not exist.") for a in answers.values())
    _again(tmp_path, home)
    assert _rows(home, query) == expected
    _nothing_unexplained(home)


def test_memory_entry_added_and_replaced_by_a_subagent_with_file_tools_is_the_subagents(tmp_path: Path) -> None:
    """BOOK-21/BOOK-22, OBS-50, what a subagent does instead of the refused ``memory`` tool: its ``write_file`` of
    MEMORY.md adding an entry and its ``patch`` replacing that entry are an ``add`` and a ``modify`` row of actor
    ``agent-reflection``, quoting the exact entries, in the child's session, run and turn, with the hash of the file
    each call left; no ``user-direct`` row, at the end of the run or at the next start."""
    home = tmp_path / "hermes"
    memory = home / "memories" / "MEMORY.md"
    memory.parent.mkdir(parents=True)
    memory.write_text("The user likes tea", encoding="utf-8")
    added = "The user likes tea\n§\nThe user lives in Oslo"
    family = _delegating(tmp_path, home, [_delegate(goal="CHILD-NOTES: note where the user lives"), "done"], {
        "CHILD-NOTES": [
            _call("write_file", {"path": str(memory), "content": added}, "call_write"),
            _call("patch", {"mode": "replace", "path": str(memory), "old_string": "lives in Oslo",
                            "new_string": "lives in Bergen"}, "call_patch"),
            ScriptStep(content="noted")]})
    child = family.children["CHILD-NOTES"]
    assert memory.read_text(encoding="utf-8") == "The user likes tea\n§\nThe user lives in Bergen"
    child_run = _run(home, child, "subagent")
    query = "SELECT file_path, change_type, actor, trigger_session_id, before_excerpt, after_excerpt, file_hash, " \
            "trajectory_id, turn_id FROM memory_changes ORDER BY id"
    expected = [
        ("memories/MEMORY.md", "add", "agent-reflection", child, None, "The user lives in Oslo", _sha_text(added),
         *child_run),
        ("memories/MEMORY.md", "modify", "agent-reflection", child, "The user lives in Oslo",
         "The user lives in Bergen", _sha(memory), *child_run)]
    assert _rows(home, query) == expected
    assert _called(_embedded(home, family.parent, child)) == [("write_file", "call_write"), ("patch", "call_patch")]
    _again(tmp_path, home)
    assert _rows(home, query) == expected
    _nothing_unexplained(home)


def test_two_subagents_writing_at_once_each_get_only_their_own_changes(tmp_path: Path) -> None:
    """BOOK-19/BOOK-22, OBS-50 with a batch ``delegate_task`` (Hermes runs the two children at once): each child
    writes a new skill's SKILL.md and a memory file with ``write_file``, both calls of a kind running at the same time
    and each one's end coming after both files were written (a plugin of the profile makes the calls meet). Each skill
    is one ``created`` version and each memory file one ``add`` row, in the session, run and turn of the child that
    wrote it: never the other child's, never twice, never a ``user-direct`` row."""
    home = tmp_path / "hermes"
    memories = home / "memories"
    memories.mkdir(parents=True)
    (memories / "MEMORY.md").write_text("The user likes tea", encoding="utf-8")

    def plan(name: str, memory_file: str, content: str) -> Plan:
        return [_call("write_file", {"path": str(home / "skills" / name / "SKILL.md"),
                                     "content": NOTES.replace("notes", name)}, f"call_{name}_skill"),
                _call("write_file", {"path": str(memories / memory_file), "content": content}, f"call_{name}_memory"),
                ScriptStep(content=f"{name} done")]

    family = _delegating(tmp_path, home, [
        _delegate(tasks=[{"goal": "CHILD-ALPHA: write alpha"}, {"goal": "CHILD-BETA: write beta"}]), "done"], {
        "CHILD-ALPHA": plan("alpha", "MEMORY.md", "The user likes tea\n§\nAlpha learned this"),
        "CHILD-BETA": plan("beta", "USER.md", "Beta learned that")}, plugins={"meet": (BARRIER_YAML, BARRIER)})
    alpha, beta = family.children["CHILD-ALPHA"], family.children["CHILD-BETA"]
    assert alpha != beta
    alpha_run, beta_run = _run(home, alpha, "subagent"), _run(home, beta, "subagent")
    skills = "SELECT skill_name, version, hermes_action, trigger_session_id, after_hash, trajectory_id, turn_id " \
             "FROM skill_history ORDER BY skill_name, version"
    expected_skills = [("alpha", 1, "created", alpha, _sha(home / "skills" / "alpha" / "SKILL.md"), *alpha_run),
                       ("beta", 1, "created", beta, _sha(home / "skills" / "beta" / "SKILL.md"), *beta_run)]
    memory = "SELECT file_path, change_type, actor, trigger_session_id, before_excerpt, after_excerpt, file_hash, " \
             "trajectory_id, turn_id FROM memory_changes ORDER BY file_path, id"
    expected_memory = [
        ("memories/MEMORY.md", "add", "agent-reflection", alpha, None, "Alpha learned this",
         _sha(memories / "MEMORY.md"), *alpha_run),
        ("memories/USER.md", "add", "agent-reflection", beta, None, "Beta learned that", _sha(memories / "USER.md"),
         *beta_run)]
    assert _rows(home, skills) == expected_skills
    assert _rows(home, memory) == expected_memory
    _again(tmp_path, home)
    assert _rows(home, skills) == expected_skills
    assert _rows(home, memory) == expected_memory
    _nothing_unexplained(home)
