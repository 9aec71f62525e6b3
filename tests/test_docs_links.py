"""Every relative link of the README and of ``docs/*.md`` resolves (issue 29 item 7: the README is cut to what
the project is and the user guides by link, so a guide that moves or is renamed must not leave a dead link), and
the README stays the short entry point: at most ~300 lines, no dated benchmark figure (those live in
``bench/RESULTS.md``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests._repo import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "bench" / "RESULTS.md"]
LINK = re.compile(r"(?<!\!)\[[^\]\n]*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
"""An inline Markdown link ``[text](target "title")``; its target."""
FENCE = re.compile(r"^\s*(```|~~~)")


def _links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of each inline link outside fenced code blocks and code spans."""
    found: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            found += [(number, m.group(1)) for m in LINK.finditer(re.sub(r"`[^`]*`", "", line))]
    return found


def _anchors(text: str) -> set[str]:
    """The GitHub anchors of a page's headings (lower case, punctuation dropped, spaces to hyphens)."""
    out: set[str] = set()
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


def broken_links(page: Path, root: Path = REPO) -> list[str]:
    """The relative links of ``page`` whose file (or ``#anchor`` in it) does not exist, as ``page:line: target``
    (``page`` named relative to ``root``)."""
    text = page.read_text(encoding="utf-8")
    bad = []
    for number, target in _links(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto: ... not checked offline
            continue
        path_part, _, anchor = target.partition("#")
        destination = (page.parent / path_part).resolve() if path_part else page
        if not destination.exists():
            bad.append(f"{page.relative_to(root)}:{number}: {target} (no such file)")
        elif anchor and destination.suffix == ".md" and anchor not in _anchors(destination.read_text(encoding="utf-8")):
            bad.append(f"{page.relative_to(root)}:{number}: {target} (no such heading)")
    return bad


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_the_checker_finds_a_dead_link_and_a_dead_anchor(tmp_path: Path) -> None:
    """The check itself: a missing file and a missing heading are reported; code is not read as links."""
    (tmp_path / "there.md").write_text("# There\n\n## A section\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("[ok](there.md) [ok](there.md#a-section) [web](https://example.org/x)\n"
                    "[gone](missing.md)\n[bad](there.md#nope)\n`[code](missing.md)`\n"
                    "```\n[fenced](missing.md)\n```\n", encoding="utf-8")
    assert broken_links(page, root=tmp_path) == ["page.md:2: missing.md (no such file)",
                                                 "page.md:3: there.md#nope (no such heading)"]


def test_the_readme_is_short_and_holds_no_benchmark_figures() -> None:
    """~300 lines at most; a dated measurement (``2026-12-02 ... us``) belongs in bench/RESULTS.md."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    figures = [line for line in text.splitlines()
               if re.search(r"\b20\d\d-\d\d-\d\d\b", line) and re.search(r"\d\s*(us|µs|ms|x|%)\b", line)]
    assert figures == []


def test_every_user_guide_is_linked_from_the_readme() -> None:
    """A page in docs/ that the README does not link is a guide nobody finds."""
    linked = {target.partition("#")[0] for _, target in _links((REPO / "README.md").read_text(encoding="utf-8"))}
    unlinked = [f"docs/{p.name}" for p in sorted((REPO / "docs").glob("*.md")) if f"docs/{p.name}" not in linked]
    assert unlinked == [] or set(unlinked) <= {"docs/requirements-not-applicable.md"}, unlinked
