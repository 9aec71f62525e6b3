"""Parsing a memory tool call and replaying it on the file's entries (issue #27, BOOK-22).

Hermes' ``memory`` tool arguments come as a mapping or as JSON text, in the single shape or the batch
``operations`` shape; :func:`parse_operations` never raises and reads both alike. :func:`replay` quotes the
entry an operation really replaced or removed: checked against Hermes' own ``MemoryStore`` on generated files
and batches (what the quotes say happened is what Hermes wrote).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hermes_pipeline.export.memory_changes import (ENTRY_DELIMITER, Change, MemoryOp, entries,
                                                                  parse_operations, replay)

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=12)
ACTIONS = st.sampled_from(["add", "replace", "remove"])
WORDS = st.text(alphabet="abc ", min_size=1, max_size=6).map(str.strip).filter(bool)
OPS = st.lists(st.fixed_dictionaries({"action": ACTIONS}, optional={"content": WORDS, "old_text": WORDS}),
               min_size=1, max_size=5)


@given(st.sampled_from(["memory", "note_write", "forget_fact"]), JSON | st.text(max_size=30))
def test_any_arguments_parse_without_raising(tool: str, args: Any) -> None:
    ops = parse_operations(tool, args)
    assert all(op.change_type in ("add", "modify", "delete") for op in ops)


@given(st.one_of(st.none(), st.sampled_from(["memory", "user"])), OPS)
def test_a_batch_reads_the_same_as_a_mapping_or_json_text(target: str | None, ops: list[dict[str, Any]]) -> None:
    args: dict[str, Any] = {"operations": ops} if target is None else {"target": target, "operations": ops}
    parsed = parse_operations("memory", args)
    assert parsed == parse_operations("memory", json.dumps(args))
    assert parsed == parse_operations("memory", dict(args, operations=json.dumps(ops)))
    assert [op.change_type for op in parsed] == [{"add": "add", "replace": "modify", "remove": "delete"}[o["action"]]
                                                 for o in ops]
    assert {op.file_name for op in parsed} == {"USER.md" if target == "user" else "MEMORY.md"}


@given(ACTIONS, WORDS, WORDS)
def test_the_single_shape_and_a_one_item_batch_agree(action: str, content: str, old: str) -> None:
    single = {"action": action, "target": "user", "content": content, "old_text": old}
    batch = {"target": "user", "operations": [{"action": action, "content": content, "old_text": old}]}
    assert parse_operations("memory", single) == parse_operations("memory", batch)


def test_operations_win_over_the_single_fields_and_bad_items_are_skipped() -> None:
    args = {"action": "remove", "old_text": "x", "operations": [{"action": "add", "content": "a"}, "junk", {},
                                                                 {"action": "explode"}]}
    assert [op.change_type for op in parse_operations("memory", args)] == ["add"]
    assert parse_operations("memory", {"action": "add", "content": "a", "target": "elsewhere"}) == []
    assert parse_operations("memory", {"action": "add", "content": "a", "target": None})[0].file_name == "MEMORY.md"
    assert parse_operations("memory", "not json") == [] and parse_operations("memory", [1, 2]) == []


def _hermes_store(root: Path) -> Any:
    memory_tool = pytest.importorskip("tools.memory_tool")
    store = memory_tool.MemoryStore(memory_char_limit=100_000, user_char_limit=100_000)
    return memory_tool, store


@st.composite
def _file_and_batch(draw: st.DrawFn) -> tuple[list[str], list[dict[str, Any]]]:
    """A memory file of tagged entries and a batch Hermes accepts: replace / remove name a live entry by its
    tag (a short search text), adds bring new tags, content is free text."""
    count = draw(st.integers(0, 4))
    before = [f"<{i}> {draw(WORDS)}" for i in range(count)]
    live, fresh, ops = list(range(count)), count, []
    for _ in range(draw(st.integers(1, 5))):
        action = draw(ACTIONS if live else st.just("add"))
        if action == "add":
            ops.append({"action": "add", "content": f"<{fresh}> {draw(WORDS)}"})
            live.append(fresh)
            fresh += 1
            continue
        tag = draw(st.sampled_from(live))
        if action == "replace":
            ops.append({"action": "replace", "old_text": f"<{tag}>", "content": f"<{tag}> {draw(WORDS)} v2"})
        else:
            ops.append({"action": "remove", "old_text": f"<{tag}>"})
            live.remove(tag)
    return before, ops


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_file_and_batch())
def test_the_quoted_entries_are_what_hermes_changed(case: tuple[list[str], list[dict[str, Any]]]) -> None:
    before, ops = case
    """Replayed on the file as it was, each change's old and new entry, applied in order, give exactly the
    file Hermes' own ``apply_batch`` wrote."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        memory_tool, store = _hermes_store(root)
        path = root / "MEMORY.md"
        text = ENTRY_DELIMITER.join(before)
        path.write_text(text, encoding="utf-8")
        with mock.patch.object(memory_tool, "get_memory_dir", lambda: root):
            store.load_from_disk()
            result = store.apply_batch("memory", ops)
        assume(result.get("success") is True)
        hermes_after = entries(path.read_text(encoding="utf-8"))
    changes = replay(text, parse_operations("memory", {"operations": ops}))
    working = entries(text)
    for change in changes:
        if change.op.change_type == "add":
            assert change.before is None
            working.append(change.after or "")
        else:
            assert change.before in working  # a whole entry of the file, not the search text
            index = working.index(change.before)
            if change.op.change_type == "modify":
                working[index] = change.after or ""
            else:
                working.pop(index)
    assert working == hermes_after


def test_an_unknown_old_text_quotes_the_call_and_an_existing_entry_is_no_change() -> None:
    op = MemoryOp("modify", "new", "old", "MEMORY.md", None, None)
    assert replay(None, [op]) == [Change(op, "old", "new")]
    add = MemoryOp("add", "kept", None, "MEMORY.md", None, None)
    assert replay("kept", [add]) == []
    assert replay("x", [add], entry_file=False) == [Change(add, None, "kept")]
