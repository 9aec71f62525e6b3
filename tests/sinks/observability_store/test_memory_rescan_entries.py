"""A hand edit of a memory file is recorded entry by entry, as the agent's memory writes are (BOOK-21, BOOK-22).

Hermes keeps ``MEMORY.md`` / ``USER.md`` as entries joined by ``\\n§\\n``. A rescan that finds a file changed
without a recorded tool write gives one ``user-direct`` row per entry that appeared (``add``), disappeared
(``delete``) or changed in place (``modify``), quoting whole entries without the delimiter, as the agent's
rows quote them (:func:`~hermes_pipeline.export.memory_changes.entry_diff`); a change that leaves the entries
as they were is no row, for the agent's writes too (a ``replace`` by the entry's own text).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from hermes_pipeline.export.memory_changes import ENTRY_DELIMITER, EntryChange, MemoryOp, entries, entry_diff, replay
from hermes_pipeline.export.task_runs import MemoryWrite
from hermes_pipeline.sinks.observability_store.scan import MAX_TEXT
from hermes_pipeline.sinks.observability_store.store_writer import SCAN_FINAL, StoreWriter

from ._support import entry_memory_tool, rows, store

PIECES = st.sampled_from([*"ab §\n\té漢🙂", "§\n", "\n§", "\n§ x"])
ENTRY = st.one_of(st.lists(PIECES, min_size=1, max_size=8).map("".join),
                  st.text(min_size=1, max_size=8)).map(str.strip).filter(bool)
"""Entry texts: unicode, newlines inside, ``§`` inside (a generated file is kept only when Hermes reads its
entries back as written, :func:`_file`)."""
ROWS = "SELECT file_path, change_type, actor, before_excerpt, after_excerpt FROM memory_changes ORDER BY id"


def _file(items: list[str]) -> str:
    """The text Hermes writes for ``items``; the case is dropped when Hermes would read other entries back."""
    text = ENTRY_DELIMITER.join(items)
    assume(entries(text) == items)
    return text


def _apply(before: list[str], changes: list[EntryChange]) -> tuple[list[str], list[str]]:
    """``changes`` applied to ``before``: modifies in place and deletes, and the added entries in row order."""
    working, added = list(before), []
    for change in changes:
        if change.change_type == "add":
            assert change.before is None and change.after is not None
            added.append(change.after)
        elif change.change_type == "modify":
            assert change.before is not None and change.after is not None
            working[working.index(change.before)] = change.after
        else:
            assert change.change_type == "delete" and change.after is None and change.before is not None
            working.remove(change.before)
    return working, added


def _check(old: list[str], new: list[str], changes: list[EntryChange]) -> list[str]:
    """The properties of any entry diff; returns the entries it leaves after modifies and deletes."""
    removed, came = [e for e in old if e not in new], [e for e in new if e not in old]
    quoted_old = [c.before for c in changes if c.change_type != "add"]
    quoted_new = [c.after for c in changes if c.change_type != "delete"]
    assert quoted_old == removed  # every entry gone once, in the file's order, none that stayed
    assert quoted_new == came  # every entry new once, in the file's order, none that was there
    working, added = _apply(old, changes)
    assert sorted(working + added) == sorted(new)
    return working


@st.composite
def _two_files(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """Two entry lists; the second holds some of the first's entries, in any order, and new ones."""
    old = draw(st.lists(ENTRY, unique=True, max_size=6))
    kept = draw(st.permutations(old))[:draw(st.integers(0, len(old)))]
    return old, draw(st.lists(ENTRY, unique=True, max_size=4).flatmap(
        lambda extra: st.permutations(list(dict.fromkeys(kept + extra)))))


@given(_two_files())
def test_book_22_any_two_files_differ_by_exactly_their_changed_entries(case: tuple[list[str], list[str]]) -> None:
    """BOOK-22: for any two entry lists, the rows name each entry that appeared or disappeared once (modifies
    pair one of each), none that stayed (moved or not); applied to the old entries they give the new ones;
    identical files and files that differ only in blank space around entries give no row."""
    old, new = case
    before, after = _file(old), _file(new)
    _check(old, new, entry_diff(before, after))
    assert entry_diff(before, before) == [] and entry_diff(after, after) == []
    spaced = " " + after.replace(ENTRY_DELIMITER, " \n§\n ") + " \t"
    assert entries(spaced) == new and entry_diff(after, spaced) == []
    assert (entry_diff(before, after) == []) == (set(old) == set(new))


@st.composite
def _edited(draw: st.DrawFn, *, only_changes: bool = False) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """Entries, the same entries edited by hand in place (kept, changed, removed, new ones inserted anywhere:
    no entry moves; with ``only_changes`` only kept or changed), and the changed pairs."""
    old = draw(st.lists(ENTRY, unique=True, max_size=6))
    fresh = iter(draw(st.lists(ENTRY.filter(lambda e: e not in old), unique=True, min_size=13, max_size=13)))
    new: list[str] = []
    modified: list[tuple[str, str]] = []
    for entry in old:
        for _ in range(0 if only_changes else draw(st.integers(0, 1))):
            new.append(next(fresh))
        action = draw(st.sampled_from(["keep", "change"] if only_changes else ["keep", "change", "remove"]))
        if action == "keep":
            new.append(entry)
        elif action == "change":
            new.append(next(fresh))
            modified.append((entry, new[-1]))
    if not only_changes and draw(st.booleans()):
        new.append(next(fresh))
    return old, new, modified


@given(_edited())
def test_book_22_a_hand_edit_in_place_is_replayed_in_order(case: tuple[list[str], list[str], Any]) -> None:
    """BOOK-22: entries changed, removed and inserted anywhere by hand: modifies and deletes applied in place to
    the old entries leave the new entries but the added ones, in order; the added ones come in file order."""
    old, new, _ = case
    changes = entry_diff(_file(old), _file(new))
    working = _check(old, new, changes)
    added = [c.after for c in changes if c.change_type == "add"]
    assert working == [e for e in new if e not in added]


@given(_edited(only_changes=True))
def test_book_22_entries_changed_in_place_pair_up_as_modifies(case: tuple[list[str], list[str], Any]) -> None:
    """BOOK-22: when every change is an entry's text changed where it stands, the rows are exactly those
    ``modify`` pairs (old entry, new entry), in file order."""
    old, new, modified = case
    assert entry_diff(_file(old), _file(new)) == [EntryChange("modify", a, b) for a, b in modified]


def test_book_22_a_changed_last_entry_and_an_appended_one_are_a_modify_and_an_add() -> None:
    """BOOK-22: alike entries pair up even where a run of changed entries grew: the changed entry is a
    ``modify``, the new one an ``add`` (whichever side of it it stands)."""
    before = "Builds use uv\n§\nName: Ana"
    assert entry_diff(before, "Builds use uv\n§\nName: Ana Maria\n§\nHand added entry") == [
        EntryChange("modify", "Name: Ana", "Name: Ana Maria"), EntryChange("add", None, "Hand added entry")]
    assert entry_diff(before, "Builds use uv\n§\nTimezone: CET\n§\nName: Ana Maria") == [
        EntryChange("add", None, "Timezone: CET"), EntryChange("modify", "Name: Ana", "Name: Ana Maria")]
    assert entry_diff(before, "Builds use uv") == [EntryChange("delete", "Name: Ana", None)]
    assert entry_diff("free text\nsecond line\n", "free text\nline two\n") == [
        EntryChange("modify", "free text\nsecond line", "free text\nline two")]  # not Hermes' format: one entry


def _scan(writer: StoreWriter) -> None:
    writer.add([SCAN_FINAL])
    assert writer.commit()


def test_book_22_hand_edits_seen_with_hermes_are_one_row_per_entry(tmp_path: Path) -> None:
    """BOOK-22, as observed with Hermes 0.19.0: one entry changed and one appended are a ``modify`` and an
    ``add`` (the appended entry was in no row); two entries written into an emptied ``USER.md`` are two
    ``add`` rows; one entry appended is an ``add`` quoting that entry alone; entries without delimiter or
    trailing newline (BOOK-21)."""
    mem = tmp_path / "memories"
    mem.mkdir()
    (mem / "MEMORY.md").write_text("The build runs on Python 3.10\n§\nDeploys go through staging", encoding="utf-8")
    (mem / "USER.md").write_text("", encoding="utf-8")
    writer = StoreWriter(tmp_path)
    try:
        _scan(writer)  # the baseline
        (mem / "MEMORY.md").write_text("The build runs on Python 3.12\n§\nDeploys go through staging\n§\n"
                                       "Hand added entry\n", encoding="utf-8")
        (mem / "USER.md").write_text("Name: Ana Maria\n§\nTimezone: CET", encoding="utf-8")
        _scan(writer)
        (mem / "USER.md").write_text("Name: Ana Maria\n§\nTimezone: CET\n§\nHand edit during runs", encoding="utf-8")
        _scan(writer)
    finally:
        writer.close()
    assert rows(tmp_path, ROWS) == [
        ("memories/MEMORY.md", "modify", "user-direct", "The build runs on Python 3.10",
         "The build runs on Python 3.12"),
        ("memories/MEMORY.md", "add", "user-direct", None, "Hand added entry"),
        ("memories/USER.md", "add", "user-direct", None, "Name: Ana Maria"),
        ("memories/USER.md", "add", "user-direct", None, "Timezone: CET"),
        ("memories/USER.md", "add", "user-direct", None, "Hand edit during runs")]


def test_book_22_whole_files_are_their_entries_and_a_too_large_file_one_row(tmp_path: Path) -> None:
    """BOOK-22: a memory file that appears is an ``add`` per entry, one that is removed a ``delete`` per entry
    (an empty one: no row); a file too large to keep its text stays one row without excerpts, as does one whose
    bytes changed where its kept text cannot show it (BOOK-21)."""
    mem = tmp_path / "memories"
    mem.mkdir()
    (mem / "GONE.md").write_text("old one\n§\nold two\n", encoding="utf-8")
    (mem / "EMPTY.md").write_text("", encoding="utf-8")
    (mem / "BIG.md").write_text("x", encoding="utf-8")
    (mem / "BYTES.md").write_bytes(b"entry \xff")
    writer = StoreWriter(tmp_path)
    try:
        _scan(writer)
        (mem / "GONE.md").unlink()
        (mem / "EMPTY.md").unlink()
        (mem / "NEW.md").write_text("new one\n§\nnew two", encoding="utf-8")
        (mem / "BIG.md").write_text("y" * (MAX_TEXT + 1), encoding="utf-8")
        (mem / "BYTES.md").write_bytes(b"entry \xfe")  # not UTF-8: both read as "entry \ufffd"
        _scan(writer)
    finally:
        writer.close()
    assert sorted(rows(tmp_path, ROWS)) == [
        ("memories/BIG.md", "modify", "user-direct", None, None),
        ("memories/BYTES.md", "modify", "user-direct", None, None),
        ("memories/GONE.md", "delete", "user-direct", "old one", None),
        ("memories/GONE.md", "delete", "user-direct", "old two", None),
        ("memories/NEW.md", "add", "user-direct", None, "new one"),
        ("memories/NEW.md", "add", "user-direct", None, "new two")]
    assert rows(tmp_path, "SELECT DISTINCT file_hash FROM memory_changes WHERE file_path = 'memories/GONE.md'") \
        == [(None,)]


def test_book_22_a_change_that_leaves_the_entries_is_no_row(tmp_path: Path) -> None:
    """BOOK-22: blank space added around entries, or an entry moved, leaves Hermes' entries as they were: no
    row; the next real change is compared with the file as it is then."""
    path = tmp_path / "memories" / "MEMORY.md"
    path.parent.mkdir()
    path.write_text("a\n§\nb\n§\nc", encoding="utf-8")
    writer = StoreWriter(tmp_path)
    try:
        _scan(writer)
        path.write_text("a \n§\nb\n§\nc\n\n", encoding="utf-8")
        _scan(writer)
        path.write_text("c\n§\na\n§\nb", encoding="utf-8")
        _scan(writer)
        assert rows(tmp_path, ROWS) == []
        path.write_text("c\n§\na\n§\nb changed", encoding="utf-8")
        _scan(writer)
    finally:
        writer.close()
    assert rows(tmp_path, ROWS) == [("memories/MEMORY.md", "modify", "user-direct", "b", "b changed")]


def test_book_21_per_entry_excerpts_are_scrubbed_and_cut(tmp_path: Path) -> None:
    """BOOK-21: each entry's excerpt is scrubbed of credentials and cut to ``excerpt_chars`` with ``…``."""
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    path = tmp_path / "memories" / "MEMORY.md"
    path.parent.mkdir()
    path.write_text("short", encoding="utf-8")
    writer = StoreWriter(tmp_path, excerpt_chars=20)
    try:
        _scan(writer)
        path.write_text(f"short\n§\nCI token {token}\n§\n{'z' * 40}", encoding="utf-8")
        _scan(writer)
    finally:
        writer.close()
    found = rows(tmp_path, ROWS)
    assert token not in str(found) and token not in (tmp_path / "observability" / "scan-state.json").read_text()
    assert [(r[1], r[4]) for r in found] == [("add", "CI token …"), ("add", "z" * 19 + "…")]  # no half marker


def test_book_22_an_agent_write_takes_over_every_entry_row_a_rescan_blamed_on_the_user(tmp_path: Path) -> None:
    """BOOK-22 (the attribution rule): a rescan that saw an agent's batch write before its row arrived wrote a
    ``user-direct`` row per entry; the agent's write of that content replaces all of them by its own rows."""
    path = tmp_path / "memories" / "MEMORY.md"
    path.parent.mkdir()
    path.write_text("kept", encoding="utf-8")
    writer = StoreWriter(tmp_path)
    try:
        _scan(writer)
        path.write_text("kept\n§\nfirst fact\n§\nsecond fact", encoding="utf-8")  # the agent's write lands
        _scan(writer)  # a rescan runs before the tool's end reaches the store
        assert [r[1:3] for r in rows(tmp_path, ROWS)] == [("add", "user-direct"), ("add", "user-direct")]
        writer.add([MemoryWrite("memory", {"operations": [{"action": "add", "content": "first fact"},
                                                          {"action": "add", "content": "second fact"}]},
                                "agent-reflection", "s1", "call-1", "2026-01-01 00:00:00")])
        assert writer.commit()
        _scan(writer)
    finally:
        writer.close()
    assert rows(tmp_path, ROWS) == [("memories/MEMORY.md", "add", "agent-reflection", None, "first fact"),
                                    ("memories/MEMORY.md", "add", "agent-reflection", None, "second fact")]


def test_book_22_a_replace_by_the_same_text_is_no_change_in_hermes_and_no_row(tmp_path: Path) -> None:
    """BOOK-22: Hermes' ``replace`` of an entry by its own text writes the same entries back (the file's bytes
    do not change), so the agent's call is no row; a real replace still is one."""
    memory_tool = pytest.importorskip("tools.memory_tool")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "MEMORY.md").write_text("Name: Ana\n§\nLikes tea", encoding="utf-8")
        hermes = memory_tool.MemoryStore(memory_char_limit=100_000, user_char_limit=100_000)
        with mock.patch.object(memory_tool, "get_memory_dir", lambda: root):
            hermes.load_from_disk()
            assert hermes.replace("memory", "tea", "Likes tea")["success"] is True
        assert (root / "MEMORY.md").read_text(encoding="utf-8") == "Name: Ana\n§\nLikes tea"
    same = MemoryOp("modify", "Likes tea", "tea", "MEMORY.md", None, None)
    assert replay("Name: Ana\n§\nLikes tea", [same]) == []
    tool = entry_memory_tool(tmp_path)
    with store(tmp_path) as (host, _), host.session() as session, session.turn("t") as turn:
        turn.call_tool("memory", {"action": "add", "content": "Likes tea"}, tool)
        turn.call_tool("memory", {"action": "replace", "old_text": "tea", "content": "Likes tea"}, tool)
        turn.call_tool("memory", {"action": "replace", "old_text": "tea", "content": "Likes green tea"}, tool)
        turn.complete("ok")
    assert [r[1:] for r in rows(tmp_path, ROWS)] == [("add", "agent-reflection", None, "Likes tea"),
                                                     ("modify", "agent-reflection", "Likes tea", "Likes green tea")]


def test_book_22_an_agent_call_that_changes_nothing_never_takes_a_hand_edit_over(tmp_path: Path) -> None:
    """BOOK-22 (the attribution rule): the agent's ``replace`` of an entry by its own text leaves the file as it
    was, so it explains no change: a hand edit a rescan already recorded stays the user's row, and one no rescan
    has seen yet is still found by the next rescan (the call is no row either way)."""
    path = tmp_path / "memories" / "MEMORY.md"
    path.parent.mkdir()
    path.write_text("Likes tea", encoding="utf-8")
    tool = entry_memory_tool(tmp_path)
    same = {"action": "replace", "old_text": "tea", "content": "Likes tea"}
    with store(tmp_path) as (_, handle):
        handle.flush()  # the baseline
    path.write_text("Likes tea\n§\nName: Ana Maria", encoding="utf-8")  # while the agent was stopped
    with store(tmp_path) as (host, handle):
        handle.flush()  # the rescan at start records it
        with host.session() as session, session.turn("t") as turn:
            turn.call_tool("memory", same, tool)  # writes the very bytes the rescan saw
            turn.complete("ok")
        handle.flush()
        path.write_text("Likes tea\n§\nName: Ana Maria\n§\nTimezone: CET", encoding="utf-8")  # during a run
        with host.session() as session, session.turn("t") as turn:
            turn.call_tool("memory", same, tool)  # before any rescan saw the edit
            turn.complete("ok")
    with store(tmp_path) as (_, handle):
        handle.flush()  # the next rescan (the scans of that run left the file alone while the call was in flight)
    assert [r[1:] for r in rows(tmp_path, ROWS)] == [("add", "user-direct", None, "Name: Ana Maria"),
                                                     ("add", "user-direct", None, "Timezone: CET")]
