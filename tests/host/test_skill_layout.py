"""Which directories are skills, in which order, and which files belong to one: Hermes' own rule (BOOK-18, BOOK-19).

The store and the context snapshot must see the skills Hermes sees, resolve a name to the skill Hermes changes and
count every file Hermes keeps in a skill. Generated profile trees (categories named like build or dependency
folders, hidden and excluded folders, support folders holding a ``SKILL.md``, nested skills, one name in several
categories) are compared with the real Hermes Agent's scan (``agent.skill_utils``) and name lookup
(``tools.skill_manager_tool._find_skill``).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.host.skill_layout import EXCLUDED_DIRS, SUPPORT_DIRS, skill_dirs, skill_files
from hermes_pipeline.sinks.observability_store.skill_tree import all_skills, find_skill, public_name

skill_utils = pytest.importorskip("agent.skill_utils", reason="hermes-agent is not installed: pip install '.[hermes]'")
skill_manager = pytest.importorskip("tools.skill_manager_tool")

_NAMES = st.sampled_from(["build", "dist", "data", "ops", "dup", "a", "b", ".hidden", "team.ops", "scripts",
                          "references", "assets", "templates", "node_modules", ".git", "venv", "x", "y"])


@st.composite
def _trees(draw: st.DrawFn) -> list[tuple[str, ...]]:
    """Paths (tuples of names) of files to create; a path ending in SKILL.md makes its folder a skill."""
    paths: list[tuple[str, ...]] = []
    for _ in range(draw(st.integers(1, 14))):
        folders = tuple(draw(st.lists(_NAMES, min_size=1, max_size=4)))
        leaf = draw(st.sampled_from(["SKILL.md", "SKILL.md", "notes.md", ".env.example"]))
        paths.append((*folders, leaf))
    return paths


def _make(root: Path, paths: list[tuple[str, ...]]) -> None:
    for index, parts in enumerate(paths):
        target = root.joinpath(*parts)
        if any(p.is_file() for p in [root.joinpath(*parts[:i]) for i in range(1, len(parts))]):
            continue  # a folder where a file already is
        if target.is_dir():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"file {index}\n", encoding="utf-8")


def _hermes_order(root: Path) -> list[Path]:
    """The skill directories of ``root`` in the order ``_find_skill`` meets them."""
    return [md.parent for md in root.rglob("SKILL.md") if not skill_utils.is_excluded_skill_path(md)]


@settings(max_examples=150, deadline=None)
@given(paths=_trees())
def test_book_18_19_skills_are_the_ones_hermes_finds_in_its_order(paths: list[tuple[str, ...]]) -> None:
    """Every skill directory Hermes' scan finds, none other, in the order its name lookup walks them; a name shared
    by several skills resolves to the skill Hermes' ``skill_manage`` would change."""
    base = Path(tempfile.mkdtemp())
    try:
        root = base / "skills"
        root.mkdir()
        _make(root, paths)
        ours = list(skill_dirs(root))
        assert ours == _hermes_order(root)
        for name in {p.name for p in ours}:
            found = find_skill(root, name)
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(skill_utils, "get_all_skills_dirs", lambda: [root])
                theirs = skill_manager._find_skill(name)
            assert found is not None and theirs is not None
            assert found.on_disk == theirs["path"]
        first: dict[str, Path] = {}
        for path in ours:
            first.setdefault(public_name(path.name), path)
        assert {name: tree.on_disk for name, tree in all_skills(root).items()} == first
    finally:
        shutil.rmtree(base)


def test_book_18_the_first_of_two_skills_with_one_name_is_tracked(tmp_path: Path) -> None:
    """BOOK-18: of ``alpha/dup`` and ``beta/dup``, the store tracks the one Hermes' lookup returns."""
    root = tmp_path / "skills"
    for category in ("beta", "alpha", "gamma"):
        (root / category / "dup").mkdir(parents=True)
        (root / category / "dup" / "SKILL.md").write_text(f"{category}\n", encoding="utf-8")
    first = _hermes_order(root)[0]
    assert all_skills(root)["dup"].on_disk == first
    assert find_skill(root, "dup") is not None and find_skill(root, "dup").on_disk == first  # type: ignore[union-attr]


def test_book_18_a_skills_files_are_the_ones_hermes_keeps_in_it(tmp_path: Path) -> None:
    """BOOK-18: hidden files and folders named build or dist are files of the skill; the excluded folders, a
    nested skill and an atomic write's temporary file (in flight) are not; a ``SKILL.md`` in a support folder is a
    document of the skill."""
    skill = tmp_path / "skills" / "build" / "make-release"
    files = ["SKILL.md", "scripts/build/make.sh", "assets/dist/app.js", "references/.env.example",
             "references/old/SKILL.md", ".notes.md", "node_modules/x/index.js", ".git/HEAD", "nested/SKILL.md",
             "nested/inner.md", "other/readme.md", ".SKILL.md.tmp.k2j4x9", "scripts/.make.sh.tmp"]
    for rel in files:
        (skill / rel).parent.mkdir(parents=True, exist_ok=True)
        (skill / rel).write_text(rel, encoding="utf-8")
    got = [p.relative_to(skill).as_posix() for p in skill_files(skill, 100)]
    assert got == sorted(["SKILL.md", "scripts/build/make.sh", "assets/dist/app.js", "references/.env.example",
                          "references/old/SKILL.md", ".notes.md", "other/readme.md"])
    assert [p.relative_to(tmp_path / "skills").as_posix() for p in skill_dirs(tmp_path / "skills")] == \
        ["build/make-release", "build/make-release/nested"]
    assert "node_modules" in EXCLUDED_DIRS and "scripts" in SUPPORT_DIRS


def test_book_18_the_excluded_folders_are_hermes_own() -> None:
    """The folders never searched are exactly Hermes' list, and the support folders its list."""
    assert EXCLUDED_DIRS == skill_utils.EXCLUDED_SKILL_DIRS
    assert SUPPORT_DIRS == skill_utils.SKILL_SUPPORT_DIRS
