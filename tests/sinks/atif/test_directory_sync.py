"""Durable renames at one directory ``fsync`` per batch (spec 04 FMT-52, FMT-84; issue #29).

Each trajectory file is written to a temporary file, synced and renamed over its name (FMT-52); the directory it
was renamed into is synced so that the rename survives a power loss. A writer batch that ends several sessions
syncs each directory once, after the batch's last rename and before the batch is acknowledged (a flush returns).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.sinks.atif import build_atif_sink
from hermes_pipeline.sinks.atif import files
from hermes_pipeline.sinks.atif.filenames import FilenameTemplate
from hermes_pipeline.sinks.atif.files import TrajectoryDirectory

from tests.sinks.atif._support import Stream

T0 = 1_788_257_700_000_000


@pytest.fixture
def io_log(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Every atomic file write (its directory, whether it synced the directory itself) and every directory sync
    (the directory, the names it held then), in order."""
    log: list[tuple[Any, ...]] = []
    write, sync = files.write_atomically, files.sync_directory_of

    def logged_write(path: Path, data: bytes, **options: Any) -> None:
        write(path, data, **options)
        log.append(("file", path.parent, options.get("sync_directory", True), path.name))

    def logged_sync(directory: Path) -> None:
        log.append(("sync", directory, sorted(p.name for p in directory.iterdir())))
        sync(directory)

    monkeypatch.setattr(files, "write_atomically", logged_write)
    monkeypatch.setattr(files, "sync_directory_of", logged_sync)
    return log


def test_fmt_52_84_a_batch_ending_sessions_syncs_their_directory_once_after_the_last_rename(
        tmp_path: Path, io_log: list[tuple[Any, ...]]) -> None:
    """FMT-52/84: three sessions ending in one writer batch: three files renamed without a directory sync each,
    then one sync of their directory holding all three, before the flush returns."""
    out = tmp_path / "out"
    sink = build_atif_sink({"enabled": True, "output_directory": str(out)})
    events: list[Any] = []
    for n in range(3):
        stream = Stream(events.append, f"session-{n}")
        session = stream.start("hermes.session", "agent", None, T0 + 10 * n)
        stream.end(session, T0 + 10 * n + 1)
    sink.take_many(events)  # one hand-over: the writer takes them as one batch
    assert sink.flush(10.0)
    written = [entry for entry in io_log if entry[0] == "file"]
    syncs = [entry for entry in io_log if entry[0] == "sync"]
    assert len(written) == 3 and not any(entry[2] for entry in written)
    assert len(syncs) == 1 and io_log[-1][0] == "sync" and syncs[0][1] == out
    assert syncs[0][2] == sorted(entry[3] for entry in written)
    assert sink.stats()["trajectories"]["trajectories_written"] == 3
    assert sink.shutdown(10.0)


def test_fmt_52_each_session_ending_in_its_own_batch_is_synced_before_its_flush(
        tmp_path: Path, io_log: list[tuple[Any, ...]]) -> None:
    """FMT-52/84: sessions ending one flush apart: each flush returns after its file's directory was synced."""
    sink = build_atif_sink({"enabled": True, "output_directory": str(tmp_path)})
    for n in range(2):
        stream = Stream(sink, f"session-{n}")
        session = stream.start("hermes.session", "agent", None, T0 + 10 * n)
        stream.end(session, T0 + 10 * n + 1)
        assert sink.flush(10.0)
        assert [entry[0] for entry in io_log] == ["file", "sync"] * (n + 1)
    assert sink.shutdown(10.0)


@dataclass
class _Item:
    name: str
    content: Any


def test_fmt_52_a_failed_write_still_syncs_the_renames_before_it(tmp_path: Path,
                                                                   io_log: list[tuple[Any, ...]]) -> None:
    """FMT-52: a batch whose second file fails raises, and the directory of the first one is synced all the same."""
    directory = TrajectoryDirectory(tmp_path, FilenameTemplate.parse("{session_id}.json"))
    with pytest.raises(TypeError):
        directory.write([_Item("a.json", b"{}\n"), _Item("b.json", "not bytes")])
    assert [entry[0] for entry in io_log] == ["file", "sync"] and io_log[1][2] == ["a.json"]
    assert json.loads((tmp_path / "a.json").read_text()) == {} and not (tmp_path / "b.json").exists()


def test_fmt_52_holding_defers_the_syncs_to_the_end_of_the_block(tmp_path: Path,
                                                                 io_log: list[tuple[Any, ...]]) -> None:
    """Writes made while holding sync each directory once, when the (outermost) hold ends."""
    directory = TrajectoryDirectory(tmp_path, FilenameTemplate.parse("{date}/{session_id}.json"))
    with directory.holding():
        directory.write([_Item("d1/a.json", b"1")])
        with directory.holding():
            directory.write([_Item("d1/b.json", b"2"), _Item("d2/c.json", b"3")])
        assert [entry[0] for entry in io_log] == ["file"] * 3
    syncs = sorted((entry[1].name, tuple(entry[2])) for entry in io_log if entry[0] == "sync")
    assert syncs == [("d1", ("a.json", "b.json")), ("d2", ("c.json",))]


def test_fmt_52_a_directory_removed_between_writes_is_made_again(tmp_path: Path) -> None:
    """The directories made once are not looked at for every file; one removed meanwhile is made again (0700)."""
    directory = TrajectoryDirectory(tmp_path, FilenameTemplate.parse("{date}/{session_id}.json"))
    directory.write([_Item("day/a.json", b"1")])
    (tmp_path / "day" / "a.json").unlink()
    (tmp_path / "day").rmdir()
    directory.write([_Item("day/b.json", b"2")])
    assert (tmp_path / "day" / "b.json").read_bytes() == b"2"
    assert (tmp_path / "day").stat().st_mode & 0o777 == 0o700


_batches = st.lists(st.lists(st.tuples(st.sampled_from(["d1", "d2", "d2/e", "d3"]), st.integers(0, 5)),
                             min_size=1, max_size=5), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=_batches, held=st.booleans())
def test_fmt_52_every_rename_is_synced_once_before_its_batch_returns(tmp_path: Path, io_log: list[tuple[Any, ...]],
                                                                    batches: list[list[tuple[str, int]]],
                                                                    held: bool) -> None:
    """FMT-52/84, generated batches of files in several directories, written one batch per ``write`` or all under one
    hold: when the call (or the hold) returns, each directory renamed into was synced exactly once since it began,
    after its last rename, and while it held every file renamed into it."""
    root = tmp_path / os.urandom(4).hex()
    directory = TrajectoryDirectory(root, FilenameTemplate.parse("{date}/{session_id}.json"))

    def check(start: int) -> None:
        entries = io_log[start:]
        renamed = {entry[1] for entry in entries if entry[0] == "file"}
        syncs = [entry for entry in entries if entry[0] == "sync"]
        assert sorted(entry[1] for entry in syncs) == sorted(renamed)
        for directory_synced in renamed:
            at = max(i for i, entry in enumerate(entries) if entry[0] == "sync" and entry[1] == directory_synced)
            names = {entry[3] for entry in entries[:at] if entry[0] == "file" and entry[1] == directory_synced}
            assert at > max(i for i, entry in enumerate(entries) if entry[0] == "file" and entry[1] == directory_synced)
            assert names <= set(entries[at][2])
        assert not any(entry[2] for entry in entries if entry[0] == "file")  # no file synced its directory itself

    def write_all() -> None:
        for batch in batches:
            start = len(io_log)
            directory.write([_Item(f"{sub}/f{n}.json", f"{sub}{n}".encode()) for sub, n in batch])
            if not held:
                check(start)

    start = len(io_log)
    if held:
        with directory.holding():
            write_all()
            assert not any(entry[0] == "sync" for entry in io_log[start:])
        check(start)
    else:
        write_all()
