"""Skills reached through symbolic links to folders are the ones Hermes lists and loads (BOOK-18, BOOK-19).

Hermes' skill index walks each skills directory with ``os.walk(followlinks=True)``
(``agent.skill_utils.iter_skill_index_files``), so a skill repository linked into ``skills/`` is listed and loaded.
The store and the context snapshot follow directory links too, but walk every folder once: a link to an ancestor, a
loop of links or a second link to one folder neither hangs nor repeats a skill. Generated profile trees with links
(into the tree, to its ancestors, outside it, dangling) are compared with Hermes' own scan; a file of a skill that
is a link (``assets/passwd -> /etc/passwd``) is still never one of its files.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hermes_pipeline.host.skill_layout import skill_dirs, skill_files
from hermes_pipeline.host.snapshot import context_snapshot
from hermes_pipeline.sinks.observability_store.skill_tree import SkillRoots, all_skills, find_skill

skill_utils = pytest.importorskip("agent.skill_utils", reason="hermes-agent is not installed: pip install '.[hermes]'")

_NAMES = st.sampled_from(["data", "ops", "a", "b", ".hidden", "scripts", "references", "assets", "node_modules",
                          ".git", "x"])
_WALK_LIMIT = 20_000


class _TooLong(Exception):
    pass


def _hermes_skill_dirs(root: Path) -> list[str]:
    """The real paths of the skill folders Hermes' index finds under ``root`` (each as often as Hermes finds it);
    a walk that a loop of links makes explode is given up (:class:`_TooLong`)."""
    real_walk = os.walk
    steps = [0]

    def bounded(*args: Any, **kwargs: Any) -> Iterator[Any]:
        for item in real_walk(*args, **kwargs):
            steps[0] += 1
            if steps[0] > _WALK_LIMIT:
                raise _TooLong
            yield item

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(skill_utils.os, "walk", bounded)
        found = list(skill_utils.iter_skill_index_files(root, "SKILL.md"))
    return [os.path.realpath(p.parent) for p in found]


def _make(root: Path, paths: list[tuple[str, ...]]) -> None:
    for index, parts in enumerate(paths):
        target = root.joinpath(*parts)
        if any(p.is_file() for p in [root.joinpath(*parts[:i]) for i in range(1, len(parts))]) or target.is_dir():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"file {index}\n", encoding="utf-8")


_PATHS = st.lists(st.tuples(st.lists(_NAMES, min_size=1, max_size=3), st.sampled_from(["SKILL.md", "n.md"])),
                  min_size=1, max_size=8)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(inside=_PATHS, outside=_PATHS, data=st.data())
def test_book_18_19_linked_skills_are_the_ones_hermes_finds_each_once(inside: Any, outside: Any,
                                                                     data: st.DataObject) -> None:
    """BOOK-18/19: with links to folders anywhere in the tree (to a folder of it, an ancestor, a folder outside,
    nowhere), the skills found are exactly those Hermes' index finds (compared by real path), each once; the ones
    of the real tree come first, in the order of the tree without its links."""
    base = Path(tempfile.mkdtemp())
    try:
        root, far = base / "skills", base / "outside"
        root.mkdir()
        far.mkdir()
        _make(root, [(*folders, leaf) for folders, leaf in inside])
        _make(far, [(*folders, leaf) for folders, leaf in outside])
        real_dirs = sorted({p for p in [root, *root.rglob("*"), far, *far.rglob("*")] if p.is_dir()})
        plain = list(skill_dirs(root))
        for index in range(data.draw(st.integers(0, 3), label="links")):
            where = data.draw(st.sampled_from([d for d in real_dirs if d == root or root in d.parents]))
            name = data.draw(_NAMES, label=f"name {index}") + "-lnk"
            target = data.draw(st.sampled_from([*real_dirs, base / "missing"]), label=f"target {index}")
            if not (where / name).exists() and not (where / name).is_symlink():
                os.symlink(target, where / name)
        try:
            theirs = _hermes_skill_dirs(root)
        except _TooLong:
            assume(False)  # several loops: Hermes' own walk explodes (up to the 40 links a path may hold)
            return
        ours = list(skill_dirs(root))
        real = [os.path.realpath(p) for p in ours]
        assert len(real) == len(set(real))
        assert set(real) == set(theirs)
        assert ours[:len(plain)] == plain
    finally:
        shutil.rmtree(base)


def _skill(path: Path, text: str = "---\nname: s\ndescription: d\n---\nbody\n") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(text, encoding="utf-8")
    return path


def test_book_18_a_linked_skill_repository_is_tracked_by_the_links_path(tmp_path: Path) -> None:
    """BOOK-18: a skill folder linked into ``skills/`` and a category folder linked there (a repository of
    skills) are skills named by the link's path; their hashes are those of the files where the links point."""
    root = tmp_path / "skills"
    _skill(root / "own")
    repo = _skill(tmp_path / "repo" / "linked")
    (repo / "references").mkdir()
    (repo / "references" / "r.md").write_text("r\n", encoding="utf-8")
    _skill(tmp_path / "pack" / "one")
    (root / "linked").symlink_to(repo)
    (root / "pack").symlink_to(tmp_path / "pack")
    assert [p.relative_to(root).as_posix() for p in skill_dirs(root)] == ["own", "linked", "pack/one"]
    skills = all_skills(root)
    assert {name: tree.path for name, tree in skills.items()} == {"own": "own", "linked": "linked",
                                                                  "one": "pack/one"}
    assert sorted(skills["linked"].files) == ["SKILL.md", "references/r.md"]
    found = find_skill(root, "linked")
    assert found is not None and found.on_disk == root / "linked"


def test_book_18_links_to_ancestors_loops_and_repeats_are_walked_once(tmp_path: Path) -> None:
    """BOOK-18: a link to the skills directory, to the profile, a loop of two links and a second link to one
    skill neither hang nor repeat a skill."""
    root = tmp_path / "skills"
    _skill(root / "good")
    (root / "good" / "extra-loop").symlink_to("../..")
    (root / "up").symlink_to(tmp_path)
    first, second = tmp_path / "first", tmp_path / "second"
    _skill(first / "in-first")
    _skill(second / "in-second")
    (first / "to-second").symlink_to(second)
    (second / "to-first").symlink_to(first)
    (root / "cycle").symlink_to(first)
    (root / "again").symlink_to(root / "good")
    found = list(skill_dirs(root))
    assert found[0] == root / "good"  # the real folders first
    assert sorted(os.path.realpath(p) for p in found) == sorted(os.path.realpath(p) for p in (
        root / "good", first / "in-first", second / "in-second"))
    assert sorted(all_skills(root)) == ["good", "in-first", "in-second"]


def test_book_18_a_link_inside_a_skill_is_never_one_of_its_files(tmp_path: Path) -> None:
    """BOOK-18: in a linked skill, a file that is a link (to ``/etc/passwd``, to a file outside), a FIFO and a link
    to a folder are not files of the skill: never read, never hashed, never kept."""
    repo = _skill(tmp_path / "repo" / "linked")
    (repo / "assets").mkdir()
    (repo / "assets" / "passwd").symlink_to("/etc/passwd")
    (tmp_path / "secret.txt").write_text("secret\n", encoding="utf-8")
    (repo / "assets" / "secret").symlink_to(tmp_path / "secret.txt")
    (repo / "assets" / "dir").symlink_to(tmp_path)
    os.mkfifo(repo / "assets" / "pipe")
    (repo / "assets" / "real.txt").write_text("real\n", encoding="utf-8")
    root = tmp_path / "skills"
    root.mkdir()
    (root / "linked").symlink_to(repo)
    assert [p.relative_to(root / "linked").as_posix() for p in skill_files(root / "linked", 100)] == \
        ["SKILL.md", "assets/real.txt"]
    assert sorted(all_skills(root)["linked"].files) == ["SKILL.md", "assets/real.txt"]
    (snapshot,) = context_snapshot(tmp_path)["skills"]
    assert snapshot["name"] == "linked" and snapshot["linked"] is True
    assert sorted(snapshot["files"]) == ["SKILL.md", "assets/real.txt"]


def test_book_18_19_linked_skills_of_an_external_dir_are_tracked(tmp_path: Path) -> None:
    """BOOK-18/19: a skill linked into a ``skills.external_dirs`` directory is found there as Hermes finds it,
    known by its absolute path like the external dir's other skills."""
    home = tmp_path / "home"
    (home / "skills").mkdir(parents=True)
    ext = tmp_path / "ext"
    _skill(ext / "plain")
    repo = _skill(tmp_path / "repo" / "linked-ext")
    (ext / "linked-ext").symlink_to(repo)
    (home / "config.yaml").write_text(f"skills:\n  external_dirs:\n    - {ext}\n", encoding="utf-8")
    skills = all_skills(SkillRoots(home))
    assert {name: tree.path for name, tree in skills.items()} == {"plain": (ext / "plain").as_posix(),
                                                                  "linked-ext": (ext / "linked-ext").as_posix()}
