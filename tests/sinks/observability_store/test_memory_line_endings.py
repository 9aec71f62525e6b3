"""Memory files read as Hermes reads them, whatever their line endings (BOOK-21, BOOK-22).

Hermes reads ``MEMORY.md`` / ``USER.md`` with ``Path.read_text`` (universal newlines: CRLF and a lone CR are LF)
and splits them on ``\\n§\\n`` (``tools.memory_tool.MemoryStore._read_file``). The store's decoder
(:func:`~hermes_pipeline.export.memory_changes.memory_text`) and its entries must give what that reader gives, for
any entries joined with LF, CRLF or CR endings; the rescan must see a file converted to CRLF as unchanged, and an
entry added in a CRLF file as one ``add``. Hashes stay those of the bytes on disk.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.export.memory_changes import ENTRY_DELIMITER, entries, memory_text
from hermes_pipeline.sinks.observability_store.scan import ScanState, diff_memory, file_diff, read_memory

memory_tool = pytest.importorskip("tools.memory_tool", reason="hermes-agent is not installed: pip install '.[hermes]'")

_ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])
_ENTRY = st.text(alphabet=st.sampled_from(["a", "b", " ", "\t", "\n", "\r", "§", "é", "\u2028"]), max_size=12)


def _hermes_entries(data: bytes) -> list[str]:
    """What Hermes' own reader makes of a memory file holding ``data`` (deduplicated as Hermes loads it)."""
    base = Path(tempfile.mkdtemp())
    try:
        path = base / "MEMORY.md"
        path.write_bytes(data)
        return list(dict.fromkeys(memory_tool.MemoryStore._read_file(path)))
    finally:
        shutil.rmtree(base)


@settings(max_examples=300, deadline=None)
@given(items=st.lists(_ENTRY, max_size=6), ending=_ENDINGS, mixed=st.lists(_ENDINGS, max_size=20),
       tail=st.sampled_from(["", "\n", "\r\n", "\r"]))
def test_book_22_the_decoder_reads_the_entries_hermes_reads(items: list[str], ending: str, mixed: list[str],
                                                            tail: str) -> None:
    """BOOK-22: entries joined by the delimiter, the file's line endings all LF, CRLF or CR (or mixed), give the
    entries Hermes' reader gives; the file's hash is of its bytes."""
    text = ENTRY_DELIMITER.join(items) + tail
    uniform = text.replace("\n", ending)
    pieces = text.split("\n")
    endings = mixed + ["\n"] * len(pieces)
    mixed_text = "".join(p + endings[i] for i, p in enumerate(pieces[:-1])) + pieces[-1]
    for written in (uniform, mixed_text):
        data = written.encode("utf-8")
        assert entries(memory_text(data)) == _hermes_entries(data)
        base = Path(tempfile.mkdtemp())
        try:
            (base / "M.md").write_bytes(data)
            digest, decoded = read_memory(base / "M.md")
        finally:
            shutil.rmtree(base)
        assert digest == hashlib.sha256(data).hexdigest()
        assert decoded is not None and entries(decoded) == _hermes_entries(data)
    assert entries(uniform) == _hermes_entries(uniform.encode("utf-8"))  # a text decoded elsewhere


def _state(home: Path) -> ScanState:
    state = ScanState(initialised=True)
    _, state.memory = diff_memory(state, {"memories/MEMORY.md": home / "MEMORY.md"})
    return state


@pytest.mark.parametrize("agent_state", [False, True])
def test_book_22_a_file_converted_to_crlf_is_no_change_and_a_crlf_entry_is_an_add(tmp_path: Path,
                                                                                  agent_state: bool) -> None:
    """BOOK-22: a memory file whose line endings were converted (CRLF, CR) has the same entries for Hermes: no
    change; an entry appended in CRLF is one ``add`` quoting it. ``agent_state``: the state as a tool write leaves
    it (hash and text only) rather than as a rescan does."""
    path = tmp_path / "MEMORY.md"
    lf = b"Alpha fact\n\xc2\xa7\nBeta fact\nsecond line of beta\n\xc2\xa7\nGamma fact"
    path.write_bytes(lf)
    state = _state(tmp_path)
    if agent_state:
        state.memory["memories/MEMORY.md"] = {"sha256": hashlib.sha256(lf).hexdigest(), "text": lf.decode()}
    for converted in (lf.replace(b"\n", b"\r\n"), lf.replace(b"\n", b"\r"), lf.replace(b"\n", b"\r\n") + b"\r\n"):
        path.write_bytes(converted)
        diffs, new = diff_memory(state, {"memories/MEMORY.md": path})
        assert diffs == []
        assert new["memories/MEMORY.md"]["sha256"] == hashlib.sha256(converted).hexdigest()
    path.write_bytes(lf.replace(b"\n", b"\r\n") + b"\r\n\xc2\xa7\r\nTimezone: CET")
    diffs, _ = diff_memory(state, {"memories/MEMORY.md": path})
    assert [(c.change_type, c.before, c.after) for d in diffs for c in d.changes] == [("add", None, "Timezone: CET")]


def test_book_22_entries_the_scrubber_hides_are_compared_by_their_hash() -> None:
    """BOOK-22: two sides whose kept (scrubbed) texts are equal but whose entries differ for Hermes are one change
    without excerpts; sides Hermes reads the same are none, whatever their kept texts."""
    text = "Deploy key: <redacted>"
    assert [(c.change_type, c.before, c.after) for c in file_diff("m", "modify", text, text, same_entries=False)
            .changes] == [("modify", None, None)]  # type: ignore[union-attr]
    assert file_diff("m", "modify", "a\r\n§\r\nb", "a\n§\nb c", same_entries=True) is None
    assert file_diff("m", "modify", "a\r\n§\r\nb", "a\n§\nb") is None
