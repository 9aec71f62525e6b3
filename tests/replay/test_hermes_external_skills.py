"""A Hermes replay rebuilds the skills of ``skills.external_dirs`` and the skills linked into ``skills/`` as the run
saw them (spec 06 BOOK-29, BOOK-31a, BOOK-33).

The run's context snapshot names every skill Hermes loads: the profile's own, one reached through a symbolic link
(``linked``) and those of each external directory (``external_skills``, with the directory it came from), and their
texts are kept; ``hermes-pipeline replay`` rebuilds them in its isolated home (the external ones in a folder of it
that the copied ``config.yaml``'s ``external_dirs`` points to) instead of loading the live directories, so a run
replays ``identical`` after they changed; a file whose text was not kept is named in a warning. Real ``hermes chat``
runs against the scripted model server; skipped without ``hermes-agent``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.demo.model_script import parse_script
from hermes_pipeline.demo.model_server import ScriptedModelServer
from hermes_pipeline.export.blobs import BLOB_DIR, read_blob
from hermes_pipeline.host.snapshot import file_sha256

from ..trajectories._support import only_file
from ._hermes import HERMES, Recorded, hermes_env, replay, tree_digest

pytestmark = pytest.mark.skipif(HERMES is None, reason="hermes-agent is not installed")


def _skill(path: Path, name: str, description: str) -> Path:
    path.mkdir(parents=True)
    (path / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n1. x\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def linked_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A run viewing a skill linked into ``skills/``, one of an absolute external dir (with a supporting file)
    and one of a relative external dir."""
    base = tmp_path_factory.mktemp("external")
    work, home, user = base / "work", base / "hermes", base / "user"
    for d in (work, home, user):
        d.mkdir()
    _skill(home / "skills" / "own", "own", "The profile's own skill.")
    _skill(base / "outside" / "linked", "linked", "A skill repository linked in.")
    os.symlink(base / "outside" / "linked", home / "skills" / "linked")
    ext = _skill(base / "ext" / "tools" / "extskill", "extskill", "A shared team skill.")
    (ext / "references").mkdir()
    (ext / "references" / "guide.md").write_text("Follow the guide.\n", encoding="utf-8")
    _skill(base / "ext2" / "rel-skill", "rel-skill", "A skill of a relative external dir.")
    steps = [{"tool_calls": [{"name": "skill_view", "arguments": {"name": name}, "id": f"call_{i}"}]}
             for i, name in enumerate(["linked", "extskill", "rel-skill"])] + ["Viewed."]
    server = ScriptedModelServer(parse_script({"steps": steps})[0])
    try:
        (home / "config.yaml").write_text(textwrap.dedent(f"""\
            model: {{provider: custom, default: hermes-demo-1, base_url: "{server.base_url}", api_key: unused}}
            auxiliary: {{title_generation: {{enabled: false}}}}
            observability: {{trajectories: {{enabled: true}}}}
            plugins: {{enabled: [hermes_pipeline]}}
            skills: {{external_dirs: ["{base / 'ext'}", ../ext2]}}
            """), encoding="utf-8")
        done = subprocess.run([HERMES or "hermes", "chat", "-Q", "-q", "View the skills."], cwd=work,
                              env=hermes_env(home), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=180)
        assert done.returncode == 0, done.stderr[-2000:]
        yield Recorded(home, work, only_file(home / "trajectories"), server)
    finally:
        server.close()


def _context(path: Path) -> dict[str, Any]:
    context = json.loads(path.read_text(encoding="utf-8"))["extra"]["hermes"]["context"]
    assert isinstance(context, dict)
    return context


def test_book_29_the_snapshot_names_linked_and_external_skills_and_keeps_their_texts(linked_run: Recorded) -> None:
    """BOOK-29: the linked skill is among the profile's skills (marked ``linked``), each external skill is named
    with the directory it came from (in Hermes' order), every file by hash, and each text is kept."""
    base = linked_run.home.parent
    context = _context(linked_run.path)
    skills = {s["name"]: s for s in context["skills"]}
    assert sorted(skills) == ["linked", "own"] and skills["linked"].get("linked") is True
    assert "linked" not in skills["own"]
    external = [(s["root"], s["name"], s["files"]) for s in context["external_skills"]]
    ext = base / "ext" / "tools" / "extskill"
    assert external == [
        (str((base / "ext").resolve()), "tools/extskill", {"SKILL.md": file_sha256(ext / "SKILL.md"),
                                                          "references/guide.md": file_sha256(ext / "references"
                                                                                             / "guide.md")}),
        (str((base / "ext2").resolve()), "rel-skill", {"SKILL.md": file_sha256(base / "ext2/rel-skill/SKILL.md")})]
    assert "files_not_kept" not in context
    for sha in [*skills["linked"]["files"].values(), *(sha for _, _, files in external for sha in files.values())]:
        assert read_blob(linked_run.home, sha) is not None


def test_book_31a_33_linked_and_external_skills_changed_since_are_rebuilt_and_replay_identical(
        linked_run: Recorded, tmp_path: Path) -> None:
    """BOOK-31a / BOOK-33: after the recording the user edits the external skill (and its guide), the linked
    skill, deletes the relative dir's skill and adds an external one; the replay rebuilds the recorded ones in its
    isolated home, so Hermes' system prompt (which lists them) is the recorded one: ``identical`` (exit 0), no
    warning, the profile and the external dirs left as they were. The replayed run's own snapshot names the
    external skills with the recorded hashes, in the isolated home."""
    base = linked_run.home.parent
    ext = base / "ext" / "tools" / "extskill"
    (ext / "SKILL.md").write_text("---\nname: extskill\ndescription: Rewritten since.\n---\n1. y\n", encoding="utf-8")
    (ext / "references" / "guide.md").write_text("Another guide.\n", encoding="utf-8")
    (base / "outside" / "linked" / "SKILL.md").write_text("---\nname: linked\ndescription: Changed.\n---\n",
                                                          encoding="utf-8")
    shutil.rmtree(base / "ext2" / "rel-skill")
    _skill(base / "ext" / "later", "later", "Added after the run.")
    before = tree_digest(base)
    done = replay([str(linked_run.path), "--home", str(linked_run.home), "--output", str(tmp_path / "n.json")],
                  tmp_path)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "identical", done.stdout + done.stderr
    assert "warning" not in done.stderr, done.stderr
    assert tree_digest(base) == before
    recorded, replayed = _context(linked_run.path), _context(tmp_path / "n.json")
    assert [(s["name"], s["files"]) for s in replayed["external_skills"]] == \
        [(s["name"], s["files"]) for s in recorded["external_skills"]]
    assert all("/external-skills/" in s["root"] and str(base) not in s["root"] for s in replayed["external_skills"])
    assert {s["name"]: s["files"] for s in replayed["skills"]} == {s["name"]: s["files"] for s in recorded["skills"]}


def test_book_31a_an_external_skill_file_not_kept_is_named_in_a_warning(linked_run: Recorded,
                                                                         tmp_path: Path) -> None:
    """BOOK-31a: when the kept text of an external skill's file is gone and the live file changed, the replay says
    which file it could not restore (by where it was), rather than loading the live one."""
    base = linked_run.home.parent
    home = tmp_path / "copy"
    shutil.copytree(linked_run.home, home, symlinks=True)
    (skill,) = [s for s in _context(linked_run.path)["external_skills"] if s["name"] == "tools/extskill"]
    sha = skill["files"]["references/guide.md"]
    (home / BLOB_DIR / sha[:2] / sha).unlink()
    guide = base / "ext" / "tools" / "extskill" / "references" / "guide.md"
    guide.write_text("Yet another guide.\n", encoding="utf-8")
    done = replay([str(linked_run.path), "--home", str(home), "--output", str(tmp_path / "n.json")], tmp_path)
    assert "not kept" in done.stderr and guide.as_posix().replace(str(base), "") in done.stderr, done.stderr


def test_book_31a_the_isolated_home_points_external_dirs_at_the_rebuilt_skills(linked_run: Recorded,
                                                                               tmp_path: Path) -> None:
    """BOOK-31a: the isolated home's ``config.yaml`` names only the rebuilt external directories, in the recorded
    order (a relative entry of the profile included); a recording that does not name its external skills keeps
    the profile's ``external_dirs`` and says the replay loads them as they are now."""
    import yaml

    from hermes_pipeline.replay import Recording, load_trajectory
    from hermes_pipeline.replay.hermes_home import isolated_home

    doc = load_trajectory(linked_run.path)
    isolated_home(tmp_path / "new", Recording.from_document(doc), linked_run.home, 9)
    config = yaml.safe_load((tmp_path / "new" / "config.yaml").read_text(encoding="utf-8"))
    assert config["skills"]["external_dirs"] == [str(tmp_path / "new" / "external-skills" / "0"),
                                                 str(tmp_path / "new" / "external-skills" / "1")]
    assert (tmp_path / "new" / "external-skills" / "1" / "rel-skill" / "SKILL.md").is_file()
    assert (tmp_path / "new" / "external-skills" / "0" / "tools" / "extskill" / "references" / "guide.md").is_file()
    linked = tmp_path / "new" / "skills" / "linked"
    assert (linked / "SKILL.md").is_file() and not linked.is_symlink()
    del doc["extra"]["hermes"]["context"]["external_skills"]
    warnings = isolated_home(tmp_path / "old", Recording.from_document(doc), linked_run.home, 9)
    assert any("skills.external_dirs" in w and "as they are now" in w for w in warnings), warnings
    config = yaml.safe_load((tmp_path / "old" / "config.yaml").read_text(encoding="utf-8"))
    assert config["skills"]["external_dirs"][1] == "../ext2"
