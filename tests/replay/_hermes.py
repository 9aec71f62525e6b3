"""Helpers of the real-Hermes replay tests: record a ``hermes chat`` run against the scripted model server in
a Hermes home under the test's directory, and run ``hermes-pipeline replay`` in a fresh process (in a network
namespace without any network where the machine allows one: ``unshare -rn``)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.demo.model_script import parse_script
from hermes_pipeline.demo.model_server import ScriptedModelServer

from ..trajectories._support import only_file

HERMES = shutil.which("hermes")
ROOT = Path(__file__).resolve().parents[2]
SOUL_END = "The end of the long persona file."
MEMORY_TEXT = "The user prefers answers in one sentence."
SKILL_TEXT = ("---\nname: notes-helper\ndescription: Read the user's notes.txt and answer from it.\n---\n"
              "# Notes helper\nRead notes.txt with read_file.\n")


def netns() -> list[str]:
    """``unshare -rn`` (a user and network namespace: no interface but a downed loopback) when it works here."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode == 0:
        return [unshare, "-rn"]
    return []


@dataclass
class Recorded:
    home: Path
    work: Path
    path: Path
    server: ScriptedModelServer


def tree_digest(root: Path) -> str:
    """One hash of every path, mode and file content under ``root`` (a change anywhere changes it)."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        stat = path.lstat()
        digest.update(f"{path.relative_to(root)}\0{stat.st_mode}\0".encode())
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def hermes_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OPENAI_", "OTEL_"))}
    env.update(HOME=str(home.parent / "user"), HERMES_HOME=str(home), NO_COLOR="1", HERMES_ACCEPT_HOOKS="1")
    return env


def record(base: Path, script: list[Any], prompt: str, *, then: str | None = None, config: str = "") -> Recorded:
    """Record ``prompt`` (and, with ``then``, a second turn of the same session resumed) in a home with a long
    persona file, a skill and a memory file."""
    work, home, user = base / "work", base / "hermes", base / "user"
    for d in (work, home, user):
        d.mkdir(parents=True)
    (work / "notes.txt").write_text("buy milk\n", encoding="utf-8")
    # a persona file long enough that the system prompt passes the old cap of the sanitizer
    (home / "SOUL.md").write_text("You are a careful assistant.\n" + "Be precise and brief. " * 500 + SOUL_END,
                                  encoding="utf-8")
    # a skill of the user's: Hermes lists it (and its guidance on skills) in the system prompt
    skill = home / "skills" / "notes-helper"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_TEXT, encoding="utf-8")
    (skill / "references").mkdir()
    (skill / "references" / "format.md").write_text("One line per note.\n", encoding="utf-8")
    (home / "memories").mkdir()
    (home / "memories" / "MEMORY.md").write_text(MEMORY_TEXT + "\n", encoding="utf-8")
    server = ScriptedModelServer(parse_script({"steps": script})[0])
    try:
        (home / "config.yaml").write_text(textwrap.dedent(f"""\
            model: {{provider: custom, default: hermes-demo-1, base_url: "{server.base_url}", api_key: unused}}
            auxiliary: {{title_generation: {{enabled: false}}}}
            observability: {{trajectories: {{enabled: true}}}}
            plugins: {{enabled: [hermes_pipeline]}}
            """) + config, encoding="utf-8")
        done = subprocess.run([HERMES or "hermes", "chat", "-Q", "-q", prompt], cwd=work, env=hermes_env(home),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr[-2000:]
        if then is not None:
            session = re.search(r"session_id:\s*(\S+)", done.stdout + done.stderr)
            assert session is not None, done.stdout + done.stderr
            first = only_file(home / "trajectories")
            done = subprocess.run([HERMES or "hermes", "chat", "-Q", "--resume", session.group(1), "-q", then],
                                  cwd=work, env=hermes_env(home), stdin=subprocess.DEVNULL, capture_output=True,
                                  text=True, timeout=180)
            assert done.returncode == 0, done.stderr[-2000:]
            (second,) = [p for p in (home / "trajectories").glob("*.json") if p != first]
            return Recorded(home, work, second, server)
    except BaseException:
        server.close()
        raise
    return Recorded(home, work, only_file(home / "trajectories"), server)


def replay(args: list[str], cwd: Path, *, network: bool = False) -> subprocess.CompletedProcess[str]:
    """``hermes-pipeline replay ARGS`` in a fresh process; in a network namespace unless ``network`` (a live
    what-if reaches the scripted model server on this machine's loopback)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([*([] if network else netns()), sys.executable, "-m", "hermes_pipeline.cli.main", "replay",
                           *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=300)


def record_more(recorded: Recorded, script: list[Any], prompt: str) -> Path:
    """Record one more run of ``prompt`` in the same home (the model server answers from ``script``); its file."""
    before = set((recorded.home / "trajectories").glob("*.json"))
    recorded.server.extend(parse_script({"steps": script})[0])
    done = subprocess.run([HERMES or "hermes", "chat", "-Q", "-q", prompt], cwd=recorded.work,
                          env=hermes_env(recorded.home), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    (new,) = set((recorded.home / "trajectories").glob("*.json")) - before
    return new


@pytest.fixture(scope="module")
def resumed_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The second turn of a session resumed in a second process: a read, then the answer (the first turn is its
    history)."""
    base = tmp_path_factory.mktemp("resumed")
    recorded = record(base, [
        "Hello! How can I help?",
        {"tool_calls": [{"name": "read_file", "arguments": {"path": str(base / "work" / "notes.txt")},
                         "id": "call_read2"}]},
        "Your notes say: buy milk."], "hello", then="and what do my notes say?")
    yield recorded
    recorded.server.close()
