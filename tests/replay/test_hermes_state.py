"""A Hermes replay rebuilds the skills, memory and persona file the recorded run started with (spec 06 BOOK-29,
BOOK-31, BOOK-31a, BOOK-33), whatever the profile holds now; ``--skill`` / ``--memory`` put other versions in
their place. Real ``hermes chat`` runs against the scripted model server; skipped without ``hermes-agent``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.export.blobs import BLOB_DIR, read_blob
from hermes_pipeline.host.snapshot import file_sha256
from hermes_pipeline.replay import load_trajectory

from ._hermes import HERMES, MEMORY_TEXT, SKILL_TEXT, SOUL_END, Recorded, record, replay, tree_digest

pytestmark = pytest.mark.skipif(HERMES is None, reason="hermes-agent is not installed")


@pytest.fixture(scope="module")
def notes_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A run reading the notes, then answering."""
    base = tmp_path_factory.mktemp("state")
    recorded = record(base, [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": str(base / "work" / "notes.txt")},
                         "id": "call_read"}]},
        "Your notes say: buy milk."], "What do my notes say?")
    yield recorded
    recorded.server.close()


def _system_prompt(path: Path) -> str:
    from hermes_pipeline.replay import Recording

    prompt = Recording.from_file(path).system_prompt
    assert prompt is not None
    return prompt


def test_book_29_the_recording_names_each_skill_memory_and_persona_file_and_their_texts_are_kept(
        notes_run: Recorded) -> None:
    """BOOK-29: the recorded run's context names every file of each skill (supporting files too), the memory
    files and ``SOUL.md`` by SHA-256, and the text of each is kept once under ``observability/blobs``."""
    doc = json.loads(notes_run.path.read_text(encoding="utf-8"))
    context = doc["extra"]["hermes"]["context"]
    (skill,) = [s for s in context["skills"] if s["name"] == "notes-helper"]
    home = notes_run.home
    assert skill["files"] == {"SKILL.md": file_sha256(home / "skills/notes-helper/SKILL.md"),
                              "references/format.md": file_sha256(home / "skills/notes-helper/references/format.md")}
    assert {m["path"] for m in context["memory"]} == {"memories/MEMORY.md"}
    assert context["persona"]["path"] == "SOUL.md"
    assert read_blob(home, skill["files"]["SKILL.md"]) == SKILL_TEXT
    assert read_blob(home, context["memory"][0]["sha256"]) == MEMORY_TEXT + "\n"
    assert read_blob(home, context["persona"]["sha256"]).endswith(SOUL_END)
    assert MEMORY_TEXT in _system_prompt(notes_run.path)  # the memory shapes what the model sees


def test_book_31a_33_the_profile_changed_after_the_recording_still_replays_identical(notes_run: Recorded,
                                                                                     tmp_path: Path) -> None:
    """BOOK-31a / BOOK-33: after the recording, the user edits the skill (and its supporting file), the memory
    and the persona file, and adds a skill; the replay rebuilds the recorded ones, so it is ``identical`` (exit
    0), and the profile is left exactly as the user made it."""
    home = notes_run.home
    skill = home / "skills" / "notes-helper" / "SKILL.md"
    skill.write_text(SKILL_TEXT.replace("answer from it", "summarise it in French"), encoding="utf-8")
    (skill.parent / "references" / "format.md").write_text("Two lines per note.\n", encoding="utf-8")
    (home / "memories" / "MEMORY.md").write_text("The user prefers long answers.\n", encoding="utf-8")
    (home / "SOUL.md").write_text("You are a terse assistant.", encoding="utf-8")
    extra = home / "skills" / "new-skill"
    extra.mkdir()
    (extra / "SKILL.md").write_text("---\nname: new-skill\ndescription: Added later.\n---\nbody\n", encoding="utf-8")
    before = tree_digest(home)
    done = replay([str(notes_run.path), "--home", str(home), "--output", str(tmp_path / "n.json")], tmp_path)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "identical", done.stdout + done.stderr
    assert "warning" not in done.stderr, done.stderr
    assert tree_digest(home) == before
    assert MEMORY_TEXT in _system_prompt(tmp_path / "n.json")


def test_book_31a_a_recorded_text_that_was_not_kept_is_named_in_a_warning(notes_run: Recorded,
                                                                            tmp_path: Path) -> None:
    """BOOK-31a: when a kept text is gone (and the profile's file changed), the replay says which file it could
    not restore, rather than silently using the profile's current one."""
    import shutil

    home = tmp_path / "copy"
    shutil.copytree(notes_run.home, home, symlinks=True)
    doc = json.loads(notes_run.path.read_text(encoding="utf-8"))
    sha = doc["extra"]["hermes"]["context"]["memory"][0]["sha256"]
    (home / BLOB_DIR / sha[:2] / sha).unlink()
    (home / "memories" / "MEMORY.md").write_text("changed\n", encoding="utf-8")
    done = replay([str(notes_run.path), "--home", str(home), "--output", str(tmp_path / "n.json")], tmp_path)
    assert "memories/MEMORY.md" in done.stderr and "not kept" in done.stderr, done.stderr
    assert done.returncode == 1  # the memory is part of the system prompt: the replay now differs


@pytest.mark.parametrize("option", ["--skill", "--memory"])
def test_book_31a_a_skill_or_memory_given_to_the_replay_is_evaluated_by_hermes(notes_run: Recorded,
                                                                              tmp_path: Path, option: str) -> None:
    """BOOK-31a: ``--skill NAME=PATH`` / ``--memory FILE=PATH`` put another version in place of the recorded
    one; Hermes rebuilds its system prompt from it, so an offline replay diverges at the first LLM call, naming
    the system message (exit 1); the profile is not touched."""
    changed = tmp_path / "changed.md"
    if option == "--skill":
        changed.write_text(SKILL_TEXT.replace("answer from it", "summarise it"), encoding="utf-8")
        value = f"notes-helper={changed}"
    else:
        changed.write_text("The user prefers long answers.\n", encoding="utf-8")
        value = f"MEMORY.md={changed}"
    before = tree_digest(notes_run.home)
    done = replay([str(notes_run.path), option, value, "--home", str(notes_run.home), "--output",
                   str(tmp_path / "n.json")], tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "divergence at agent step 1" in done.stderr and "message 0 (system)" in done.stderr, done.stderr
    assert tree_digest(notes_run.home) == before


@pytest.mark.parametrize(("args", "needle"), [
    (["--skill", "notes-helper"], "NAME=PATH"),
    (["--skill", "notes-helper=/nonexistent/SKILL.md"], "no such file"),
    (["--memory", "../escape.md=/etc/hostname"], "inside the profile"),
    (["--set", "model=other"], "--live-from"),
    (["--live-from", "1", "--set", "max_iterations=3", "--set", "base_url=http://127.0.0.1:9/v1"],
     "not a setting of a Hermes replay"),
    (["--live-from", "1"], "base_url"),
])
def test_book_31a_bad_what_if_options_are_one_line_errors(notes_run: Recorded, tmp_path: Path, args: list[str],
                                                          needle: str) -> None:
    """BOOK-31a: a malformed ``--skill`` / ``--memory``, ``--set`` without ``--live-from``, a ``--set`` key a
    Hermes replay has not, ``--live-from`` without an endpoint: exit 2, one line naming it, nothing written."""
    done = replay([str(notes_run.path), *args, "--home", str(notes_run.home), "--output", str(tmp_path / "n.json")],
                  tmp_path)
    assert done.returncode == 2 and needle in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "n.json").exists()


def test_book_31a_the_recorded_environment_probe_line_is_replayed(notes_run: Recorded, tmp_path: Path) -> None:
    """BOOK-31a: Hermes' Python-toolchain probe line (present or not depending on the machine and its load: the
    probe has a short wait) is given as the recording had it, so the replay's system prompt does not depend on
    the machine: a recording whose prompt says another toolchain still replays ``identical``."""
    import re

    doc = load_trajectory(notes_run.path)  # the store keeps system prompts once, in its definitions/ sidecar
    fake = "Python toolchain: python3=0.0 (replayed), pip=missing."
    edited = 0
    for key, value in doc["extra"]["hermes"]["definitions"].items():
        if isinstance(value, str) and "Active Hermes profile:" in value:
            value = re.sub(r"Python toolchain: [^\n]*\n\n", "", value)
            doc["extra"]["hermes"]["definitions"][key] = value.replace(
                "Active Hermes profile:", f"{fake}\n\nActive Hermes profile:", 1)
            edited += 1
    assert edited == 1
    copy = tmp_path / "recording.json"
    copy.write_text(json.dumps(doc), encoding="utf-8")
    done = replay([str(copy), "--home", str(notes_run.home), "--output", str(tmp_path / "n.json")], tmp_path)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "identical", done.stdout + done.stderr
    assert fake in _system_prompt(tmp_path / "n.json")
