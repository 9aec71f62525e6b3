"""``/skills/<name>``: the text diff between two versions of a skill (issue #31 item 3), from the skill's kept texts
(``hermes_pipeline.readers.skill_versions.skill_files(home, name, version)``, imported when first needed), else
the comparison of what the store's rows say (spec 06 BOOK-18, BOOK-38). The reader is replaced here by a stand-in
module, so the rendering is tested whatever the reader's state: present, absent, failing, or without the version.
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.dashboard import Dashboard, load_sources

from ._profile import PLANT, FixtureProfile, build_profile

pytest.importorskip("hermes_state", reason="hermes-agent 0.19 is not installed: the fixture's state.db uses its DDL")

V2 = {"SKILL.md": "---\nname: flaky-skill\n---\nStep one.\nStep two.\n", "scripts/run.sh": "echo old\n"}
V3 = {"SKILL.md": "---\nname: flaky-skill\n---\nStep one.\nStep two, carefully " + PLANT + "\n",
      "notes.md": "a new file\n"}
MODULE = "hermes_pipeline.readers.skill_versions"


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> FixtureProfile:
    return build_profile(tmp_path_factory.mktemp("skill-diff"))


def _reader(monkeypatch: pytest.MonkeyPatch, skill_files: Callable[..., Any] | None) -> list[tuple[Any, ...]]:
    """Install a stand-in reader module (``None``: the module cannot be imported); return its calls."""
    calls: list[tuple[Any, ...]] = []
    if skill_files is None:
        monkeypatch.setitem(sys.modules, MODULE, None)  # type: ignore[arg-type]
        return calls
    module = types.ModuleType(MODULE)

    def recorded(home: Path, name: str, version: int) -> Any:
        calls.append((Path(home), name, version))
        return skill_files(home, name, version)

    module.skill_files = recorded  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, MODULE, module)
    return calls


def _page(profile: FixtureProfile, route: str = "/skills/flaky-skill") -> str:
    response = Dashboard(load_sources(profile.home)).respond(route)
    assert response.status == 200
    return response.body.decode()


def test_two_versions_are_compared_as_text(profile: FixtureProfile, monkeypatch: pytest.MonkeyPatch) -> None:
    """The two latest versions by default: each changed, added or deleted file with its removed and added lines,
    every line escaped."""
    calls = _reader(monkeypatch, lambda home, name, version: {2: V2, 3: V3}.get(version))
    page = _page(profile)
    assert sorted(c[2] for c in calls) == [2, 3] and all(c[0] == profile.home and c[1] == "flaky-skill" for c in calls)
    assert "Text diff v2 → v3" in page
    assert "<h4>SKILL.md (changed)</h4>" in page and "<h4>notes.md (added)</h4>" in page
    assert "<h4>scripts/run.sh (deleted)</h4>" in page
    assert '<div class="dr">- Step two.</div>' in page
    assert re.search(r'<div class="da">\+ Step two, carefully &lt;script&gt;', page)
    assert '<div class="dk">  Step one.</div>' in page and "<script>document" not in page
    assert "the text diff is of the files kept for each version" in page


def test_other_versions_are_asked_for_by_the_compare_links(profile: FixtureProfile,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _reader(monkeypatch, lambda home, name, version: {1: {"SKILL.md": "v1\n"}, 2: V2}.get(version))
    page = _page(profile, "/skills/flaky-skill?a=1&b=2")
    assert sorted(c[2] for c in calls) == [1, 2] and "Text diff v1 → v2" in page and '<div class="dr">- v1</div>' in page


@pytest.mark.parametrize("reader", [None, lambda home, name, version: None,
                                    lambda home, name, version: (_ for _ in ()).throw(OSError("store locked"))],
                         ids=["not installed", "version unknown", "reader fails"])
def test_without_texts_the_page_compares_what_the_store_says(profile: FixtureProfile, monkeypatch: pytest.MonkeyPatch,
                                                              reader: Callable[..., Any] | None) -> None:
    """No reader, no text for a version, or a failing reader: the metadata comparison, said as such, no error."""
    _reader(monkeypatch, reader)
    page = _page(profile)
    assert "Text diff" not in page and "v2 compared with v3" in page
    assert "this store keeps each version&#x27;s hashes, reason and changed files, not its text" in page


def test_same_text_is_said(profile: FixtureProfile, monkeypatch: pytest.MonkeyPatch) -> None:
    _reader(monkeypatch, lambda home, name, version: dict(V2))
    assert "the files of v2 and v3 have the same text" in _page(profile)
