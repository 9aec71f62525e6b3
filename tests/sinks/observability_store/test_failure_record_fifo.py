"""The store's failure record (``observability/write-failures.json``) is read without ever blocking or reading
without bound (fault review D3 / D4 "same pattern"): it is read on the store's writer thread and on the closing
thread, so a FIFO there (how a file on a home that stopped answering behaves) would hang the writer and the
process's exit. A FIFO or an oversized record is refused at once with one warning naming it, and the counts of
this process are written as a new record in its place (nothing counted is lost).

Requirements: spec 01 OBS-15 and 03 CFG-49 (runtime faults are fail-open), 03 CFG-56 (no bounded operation of a
shutdown blocks process exit). Each call runs in a thread joined with a bound: a hang is a failed assertion.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_pipeline.sinks.observability_store.failures import (FILENAME, WriteFailures, read_failures,
                                                                read_failures_file)

from tests._bounded import run_bounded


@pytest.fixture
def record(tmp_path: Path) -> Iterator[Path]:
    """Where the record of a store at ``tmp_path/observability/store.db`` is; a reader still waiting on a FIFO
    there is released at the end (a failed run)."""
    (tmp_path / "observability").mkdir()
    path = tmp_path / "observability" / FILENAME
    yield path
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def make(kind: str, path: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    else:  # sparse: 2 MiB on no disk
        with open(path, "wb") as fh:
            fh.truncate(2 * 1024 * 1024)


def warned(caplog: pytest.LogCaptureFixture, why: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno >= logging.WARNING and FILENAME in r.getMessage() and why in r.getMessage()]


@pytest.mark.parametrize("kind", ["fifo", "big"])
def test_a_failure_record_that_hangs_or_is_huge_is_refused_at_once_with_a_warning(
        record: Path, kind: str, caplog: pytest.LogCaptureFixture) -> None:
    """OBS-15: ``doctor``'s and the writer's reader return an empty record at once and warn naming the file."""
    make(kind, record)
    with caplog.at_level(logging.WARNING):
        assert run_bounded(lambda: read_failures_file(record)) == {}
        assert run_bounded(lambda: read_failures(record.with_name("store.db")))["rows_lost"] == 0
    assert warned(caplog, "FIFO" if kind == "fifo" else "too large"), caplog.text


@pytest.mark.parametrize("kind", ["fifo", "big"])
def test_the_counts_are_saved_in_place_of_a_record_that_hangs_or_is_huge(
        record: Path, kind: str, caplog: pytest.LogCaptureFixture) -> None:
    """CFG-56 / OBS-15: rows given up are saved (the writer thread's save, the close's final save) at once: the
    refused file is replaced by a record holding this process's counts."""
    make(kind, record)
    failures = WriteFailures(record.with_name("store.db"))
    failures.lost("full", 3)
    with caplog.at_level(logging.WARNING):
        assert run_bounded(failures.final_save) is True
    assert record.is_file() and read_failures_file(record)["kinds"]["full"]["rows_lost"] == 3
    assert failures.stats()["record_unsaved"] == 0
    assert warned(caplog, "FIFO" if kind == "fifo" else "too large"), caplog.text


def test_a_regular_record_is_merged_as_before(record: Path) -> None:
    failures = WriteFailures(record.with_name("store.db"))
    failures.lost("full", 2)
    assert failures.save()
    failures.lost("full", 1)
    assert failures.save()
    assert read_failures(record.with_name("store.db"))["rows_lost"] == 3
