"""The real Hermes Agent's skill and memory changes when someone else writes the same files at the same time, read
back from the observability store (BOOK-18, BOOK-19, BOOK-21, BOOK-22).

- A hand edit made while Hermes runs (a long turn, as in a gateway) is the user's row, written before the
  agent's next change of that skill or memory file, whose row then holds only the agent's change.
- Two ``hermes chat`` processes, or two sessions of one ``hermes gateway run``, writing files of one skill at
  once: each version names the file its own call wrote and carries its own session, the versions are 1..n and
  chain (each starts where the previous ended), and no version holds or drops the other writer's files. A small
  Hermes plugin of the test profile forces the worst interleaving every time: the other writer's file lands
  after this call's write and before this call's ``post_tool_call`` reaches the store's probe.
- A skill archived and restored with ``hermes curator`` (within minutes of the agent's write) is a ``restore``
  row at its new path, never silently live after a row that says it is gone.
- A ``write_file`` of ``<name>/SKILL.md`` or ``sub/SKILL.md`` (nested skills Hermes accepts) names that path, and
  the skill ``sub`` made that way is ``created`` by the agent's session, not an unknown ``discovered``.

Helpers come from ``tests/hermes/test_self_learning_e2e.py``.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from hermes_pipeline.demo.model_server import ScriptedModelServer, ScriptStep, ToolCallSpec
from tests.hermes.test_bridge_e2e import HERMES, _config, pytestmark  # noqa: F401
from tests.hermes.test_self_learning_e2e import (_free_port, _post_chat, _stop_gateway, _rows, _session_with, _sha,
                                                 _wait_healthy)

SKILL = "---\nname: {name}\ndescription: d\n---\n1. one\n"
INTERLEAVE_YAML = "name: interleave\nversion: 0.1.0\ndescription: test ordering\nkind: standalone\n" \
                  "hooks:\n  - pre_tool_call\n  - post_tool_call\n"
INTERLEAVE = '''
import os
import time
from pathlib import Path


def _written(args):
    if not isinstance(args, dict) or args.get("action") != "write_file":
        return None
    return str(args.get("file_path") or "")


def _wait(path):
    end = time.monotonic() + 30
    while not path.exists() and time.monotonic() < end:
        time.sleep(0.01)


def _skill():
    return Path(os.environ["HERMES_HOME"]) / "skills" / "team" / "shared"


def pre(tool_name=None, args=None, **_):  # B writes its k-th file only after A wrote its k-th
    rel = _written(args)
    if tool_name == "skill_manage" and rel and "/b" in rel:
        _wait(_skill() / rel.replace("/b", "/a"))


def post(tool_name=None, args=None, **_):  # A's call reaches the store only after B wrote its k-th file
    rel = _written(args)
    if tool_name == "skill_manage" and rel and "/a" in rel:
        _wait(_skill() / rel.replace("/a", "/b"))


def register(ctx):
    ctx.register_hook("pre_tool_call", pre)
    ctx.register_hook("post_tool_call", post)
'''
FILES = 4


def _env(tmp: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "OTEL_", "API_SERVER"))}
    env.update(HOME=str(tmp / "user"), HERMES_HOME=str(home), NO_COLOR="1", HERMES_ACCEPT_HOOKS="1")
    (tmp / "user").mkdir(exist_ok=True)
    (tmp / "work").mkdir(exist_ok=True)
    return env


def _interleaving_profile(home: Path, port: int) -> None:
    _config(home, port, enabled=["hermes_pipeline", "interleave"])
    with open(home / "config.yaml", "a", encoding="utf-8") as fh:
        fh.write("observability:\n  audit:\n    enabled: true\n")
    plugin = home / "plugins" / "interleave"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text(INTERLEAVE_YAML, encoding="utf-8")
    (plugin / "__init__.py").write_text(INTERLEAVE, encoding="utf-8")


def _plan(tag: str) -> list[dict[str, Any]]:
    """Writer ``tag`` (``a`` or ``b``) writes ``references/<tag><k>.md`` and patches every second one."""
    out: list[dict[str, Any]] = []
    for k in range(FILES):
        out.append({"action": "write_file", "name": "shared", "file_path": f"references/{tag}{k}.md",
                    "file_content": f"{tag} file {k}\n"})
        if k % 2:
            out.append({"action": "patch", "name": "shared", "file_path": f"references/{tag}{k}.md",
                        "old_string": f"{tag} file {k}", "new_string": f"{tag} file {k} patched"})
    return out


def _writers_step(body: dict[str, Any]) -> ScriptStep:
    """The model of every writer: the prompt says which (``INIT`` creates the skill; ``WRITER a`` / ``WRITER b``);
    the steps of the current request are counted from its last user message."""
    messages = body.get("messages", [])
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
    text = str(messages[last_user].get("content")) if messages else ""
    done = sum(1 for m in messages[last_user:] if m.get("role") == "assistant")
    if "INIT" in text:
        if done == 0:
            return ScriptStep(tool_calls=[ToolCallSpec("skill_manage", {
                "action": "create", "name": "shared", "category": "team", "content": SKILL.format(name="shared")},
                "call_init")])
        return ScriptStep(content="created")
    match = re.search(r"WRITER (\w)", text)
    if match is None:
        return ScriptStep(content="ok")
    plan = _plan(match.group(1))
    if done < len(plan):
        return ScriptStep(tool_calls=[ToolCallSpec("skill_manage", plan[done], f"call_{match.group(1)}_{done}")])
    return ScriptStep(content=f"{match.group(1)} done")


def _assert_each_version_is_its_writers(home: Path, sessions: dict[str, str]) -> None:
    """Versions 1..n chained; each later version names exactly the file its call wrote, carries the session of
    the writer whose file that is, and its files are the previous version's with that one change."""
    versions = _rows(home, "SELECT version, trigger_session_id, changed_files, files, before_hash, after_hash "
                           "FROM skill_history WHERE skill_name = 'shared' ORDER BY version")
    assert [v[0] for v in versions] == list(range(1, 2 + 2 * len(_plan("a")))), versions
    previous: dict[str, str] = json.loads(versions[0][3])
    for version, session, changed, files, before, after in versions[1:]:
        named = json.loads(changed)
        assert len(named) == 1, (version, named)
        writer = named[0].split("/")[1][0]
        assert session == sessions[writer], (version, session, named)
        current = json.loads(files)
        assert sorted(k for k in current.keys() | previous.keys() if current.get(k) != previous.get(k)) == named, \
            (version, named)
        assert before == previous["SKILL.md"] == after
        previous = current
    skill = home / "skills" / "team" / "shared"
    assert previous == {p.relative_to(skill).as_posix(): _sha(p) for p in skill.rglob("*") if p.is_file()}
    assert _rows(home, "SELECT COUNT(*) FROM skill_history WHERE trigger_session_id IS NULL") == [(0,)]


def test_hand_edits_while_hermes_runs_are_the_users_rows_before_the_agents(tmp_path: Path) -> None:
    """BOOK-19/BOOK-22 within one long turn: the user appends to ``SKILL.md``, adds ``references/user.md`` and
    appends a memory entry while the agent sleeps in ``terminal``; the agent then writes ``references/agent.md`` and
    adds a memory entry. The user's change is an ``external_edit`` version (no session) naming the user's files,
    before the agent's version naming only its own file; the hand entry is a ``user-direct`` add before the agent's
    add. A later start finds nothing more."""
    home = tmp_path / "hermes"
    session = _session_with(tmp_path, home, [
        ("skill_manage", {"action": "create", "name": "live", "content": SKILL.format(name="live")}),
        ("memory", {"action": "add", "target": "memory", "content": "Agent fact one"})], "Set up.")
    started = tmp_path / "sleeping"
    skill = home / "skills" / "live"
    hand_md = SKILL.format(name="live") + "2. added by the user\n"

    def hand() -> None:
        end = time.monotonic() + 120
        while not started.exists() and time.monotonic() < end:
            time.sleep(0.02)
        (skill / "SKILL.md").write_text(hand_md, encoding="utf-8")
        (skill / "references").mkdir(exist_ok=True)
        (skill / "references" / "user.md").write_text("user notes\n", encoding="utf-8")
        memory = home / "memories" / "MEMORY.md"
        memory.write_text(memory.read_text(encoding="utf-8") + "\n§\nUser hand fact", encoding="utf-8")

    editor = threading.Thread(target=hand)
    editor.start()
    try:
        _session_with(tmp_path, home, [
            ("terminal", {"command": f"touch {started} && sleep 4"}),
            ("skill_manage", {"action": "write_file", "name": "live", "file_path": "references/agent.md",
                              "file_content": "agent notes\n"}),
            ("memory", {"action": "add", "target": "memory", "content": "Agent fact two"})],
            "Work.", "--resume", session)
    finally:
        editor.join()
    expected_skill = [
        (1, "created", session, None, '["SKILL.md"]'),
        (2, "external_edit", None, None, '["SKILL.md", "references/user.md"]'),
        (3, "file_written", session, None, '["references/agent.md"]')]
    query = "SELECT version, hermes_action, trigger_session_id, reason, changed_files FROM skill_history " \
            "WHERE skill_name = 'live' ORDER BY version"
    assert _rows(home, query) == expected_skill
    chain = _rows(home, "SELECT before_hash, after_hash FROM skill_history WHERE skill_name = 'live' ORDER BY version")
    assert chain[1] == (chain[0][1], _sha(skill / "SKILL.md")) and chain[2] == (chain[1][1], chain[1][1])
    memory_query = "SELECT change_type, actor, trigger_session_id, after_excerpt FROM memory_changes ORDER BY id"
    expected_memory = [("add", "agent-reflection", session, "Agent fact one"), ("add", "user-direct", None,
                                                                                 "User hand fact"),
                       ("add", "agent-reflection", session, "Agent fact two")]
    assert _rows(home, memory_query) == expected_memory
    _session_with(tmp_path, home, [], "Hello again.", "--resume", session)
    assert _rows(home, query) == expected_skill and _rows(home, memory_query) == expected_memory


def test_two_hermes_processes_writing_one_skill_each_get_their_own_versions(tmp_path: Path) -> None:
    """BOOK-18 with two ``hermes chat`` processes at once, each writing and patching its own files of the skill
    ``shared`` (every write of one lands inside the other's call): versions 1..n, each naming only its call's file,
    with its own session, chained, the last one equal to the disk; no session-less row, even after a later start."""
    home = tmp_path / "hermes"
    server = ScriptedModelServer([_writers_step] * 200)
    try:
        _interleaving_profile(home, server.port)
        env = _env(tmp_path, home)
        init = subprocess.run([HERMES or "hermes", "chat", "-Q", "-q", "INIT"], check=False, cwd=tmp_path / "work",
                              env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
        assert init.returncode == 0, init.stderr[-2000:]
        procs = {tag: subprocess.Popen([HERMES or "hermes", "chat", "-Q", "-q", f"WRITER {tag}"], cwd=tmp_path / "work",
                                       env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True) for tag in ("a", "b")}
        sessions: dict[str, str] = {}
        for tag, proc in procs.items():
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err[-2000:]
            match = re.search(r"session_id:\s*(\S+)", out + err)
            assert match, out[-2000:]
            sessions[tag] = match.group(1)
        _assert_each_version_is_its_writers(home, sessions)
        later = subprocess.run([HERMES or "hermes", "chat", "-Q", "-q", "bye"], check=False, cwd=tmp_path / "work",
                               env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
        assert later.returncode == 0, later.stderr[-2000:]
    finally:
        server.close()
    _assert_each_version_is_its_writers(home, sessions)


def test_two_gateway_sessions_writing_one_skill_each_get_their_own_versions(tmp_path: Path) -> None:
    """BOOK-18 with one ``hermes gateway run`` and two API sessions posting at once (two threads of one process,
    one store writer), each writing and patching its own files of ``shared`` inside the other's calls: each version
    names only its call's file and carries its own session; versions 1..n, chained, the last one equal to the
    disk."""
    home = tmp_path / "hermes"
    server = ScriptedModelServer([_writers_step] * 200)
    key, port = secrets.token_hex(24), _free_port()
    try:
        _interleaving_profile(home, server.port)
        env = _env(tmp_path, home)
        env.update(API_SERVER_ENABLED="true", API_SERVER_KEY=key, API_SERVER_PORT=str(port),
                   API_SERVER_HOST="127.0.0.1")
        log = open(tmp_path / "gateway.log", "w", encoding="utf-8")  # noqa: SIM115 - closed below
        gateway = subprocess.Popen([HERMES or "hermes", "gateway", "run"], cwd=tmp_path / "work", env=env,
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, text=True)
        try:
            _wait_healthy(gateway, port, time.monotonic() + 90)
            assert _post_chat(port, key, "sess-init", "INIT")["choices"][0]["message"]["content"] == "created"
            replies: dict[str, str] = {}

            def post(tag: str) -> None:
                replies[tag] = _post_chat(port, key, f"sess-{tag}", f"WRITER {tag}")["choices"][0]["message"]["content"]

            threads = [threading.Thread(target=post, args=(tag,)) for tag in ("a", "b")]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(300)
            assert replies == {"a": "a done", "b": "b done"}
        finally:
            _stop_gateway(gateway, log)
    finally:
        server.close()
    _assert_each_version_is_its_writers(home, {"a": "sess-a", "b": "sess-b"})


def test_a_skill_restored_by_the_curator_right_after_the_agent_wrote_it_is_a_restore_row(tmp_path: Path) -> None:
    """BOOK-19 with ``hermes curator archive`` then ``restore`` a minute after the agent created the skill: the
    archive is a ``deprecate`` row, the restore a ``restore`` row (``external_restore``, no session) at the path the
    curator put it back to, with its hash and the skill's provenance; a later start adds nothing."""
    home = tmp_path / "hermes"
    text = SKILL.format(name="arch")
    session = _session_with(tmp_path, home, [
        ("skill_manage", {"action": "create", "name": "arch", "category": "ops", "content": text, "reason": "made"})],
        "Make it.")
    env = _env(tmp_path, home)

    def curator(*args: str) -> None:
        proc = subprocess.run([HERMES or "hermes", "curator", *args], check=False, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]

    curator("archive", "arch")
    _session_with(tmp_path, home, [], "Hello.")
    curator("restore", "arch")
    _session_with(tmp_path, home, [], "Hello again.")
    query = "SELECT version, change_type, hermes_action, trigger_session_id, skill_path, before_hash, after_hash, " \
            "provenance FROM skill_history WHERE skill_name = 'arch' ORDER BY version"
    digest = _sha(home / "skills" / "arch" / "SKILL.md")
    expected = [(1, "create", "created", session, "ops/arch", None, digest, "agent_created"),
                (2, "deprecate", "external_delete", None, "ops/arch", digest, None, "agent_created"),
                (3, "restore", "external_restore", None, "arch", None, digest, "agent_created")]
    assert _rows(home, query) == expected
    _session_with(tmp_path, home, [], "Once more.")
    assert _rows(home, query) == expected


def test_skill_md_written_below_a_skill_names_the_path_and_creates_the_nested_skill(tmp_path: Path) -> None:
    """BOOK-18 with the paths ``write_file`` accepts for a ``SKILL.md``: ``kit/SKILL.md`` (Hermes' second spelling
    of the skill's own file, which writes ``kit/kit/SKILL.md``) and ``sub/SKILL.md``; and a ``patch`` of
    ``kit/SKILL.md``. Each version names the path it wrote; ``sub`` (the skill Hermes now resolves by that name) is
    ``created`` by the session; a later start finds nothing unknown."""
    home = tmp_path / "hermes"
    kit = SKILL.format(name="kit")
    session = _session_with(tmp_path, home, [
        ("skill_manage", {"action": "create", "name": "kit", "content": kit}),
        ("skill_manage", {"action": "write_file", "name": "kit", "file_path": "kit/SKILL.md",
                          "file_content": kit + "2. y\n"}),
        ("skill_manage", {"action": "write_file", "name": "kit", "file_path": "sub/SKILL.md",
                          "file_content": SKILL.format(name="sub")}),
        ("skill_manage", {"action": "patch", "name": "kit", "file_path": "kit/SKILL.md", "old_string": "2. y",
                          "new_string": "2. z"})], "Nest.")
    assert (home / "skills" / "kit" / "sub" / "SKILL.md").is_file()
    query = "SELECT skill_name, version, change_type, hermes_action, trigger_session_id, skill_path, changed_files, " \
            "after_hash FROM skill_history ORDER BY id"
    top, sub = _sha(home / "skills" / "kit" / "SKILL.md"), _sha(home / "skills" / "kit" / "sub" / "SKILL.md")
    expected = [("kit", 1, "create", "created", session, "kit", '["SKILL.md"]', top),
                ("kit", 2, "refine", "file_written", session, "kit", '["kit/SKILL.md"]', top),
                ("kit", 3, "refine", "file_written", session, "kit", '["sub/SKILL.md"]', top),
                ("sub", 1, "create", "created", session, "kit/sub", '["SKILL.md"]', sub),
                ("kit", 4, "refine", "patched", session, "kit", '["kit/SKILL.md"]', top)]
    assert _rows(home, query) == expected
    assert _rows(home, "SELECT provenance FROM skill_history WHERE skill_name = 'sub'") == [("agent_created",)]
    _session_with(tmp_path, home, [], "Hello.", "--resume", session)
    assert _rows(home, query) == expected
