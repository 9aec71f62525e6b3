"""No wait for an inter-process lock is unbounded (FMT-83, FMT-85, BOOK-29): a peer that hangs while holding a
lock (a stuck process, a lock on a home that stopped answering) never hangs the waiter's thread, a close or an
exit. :func:`~hermes_pipeline.export.locks.file_lock` raises a typed :class:`FileLockTimeout` after its
``timeout``; the blobs' snapshot (on the agent's thread) goes on without the lock and stays safe, the sweep skips.

The peer is a real process holding a real ``flock``; steps are ordered by pipes, never by sleeps.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hermes_pipeline.export import blobs
from hermes_pipeline.export.blobs import LOCK_NAME, blob_path, keep_snapshot_files, read_blob, sweep
from hermes_pipeline.export.locks import FileLockTimeout, file_lock
from hermes_pipeline.export.writer import is_retryable

LOCK_HOLDER = r'''
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.readline()
'''


@contextmanager
def held_by_peer(path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holds ``path``'s ``flock`` for the block (a hung peer), then lets go."""
    path.parent.mkdir(parents=True, exist_ok=True)
    peer = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert peer.stdout is not None and peer.stdin is not None
        assert peer.stdout.readline().strip() == "held"
        yield peer
        peer.stdin.write("release\n")
        peer.stdin.flush()
        assert peer.wait(timeout=30) == 0
    finally:
        peer.kill()
        peer.wait()


def test_file_lock_held_by_another_process_times_out_typed_then_is_taken(tmp_path: Path) -> None:
    """A lock held by another process past ``timeout`` raises :class:`FileLockTimeout` (a retryable
    ``TimeoutError``, so an ``OSError``) within about the timeout; once the peer is gone it is taken."""
    lock = tmp_path / ".scan.lock"
    with held_by_peer(lock):
        started = time.monotonic()
        with pytest.raises(FileLockTimeout) as caught:
            with file_lock(lock, timeout=0.3):
                pytest.fail("the lock was held by the peer")
        assert 0.25 <= time.monotonic() - started < 5
        assert isinstance(caught.value, TimeoutError) and isinstance(caught.value, OSError)
        assert is_retryable(caught.value) and str(lock) not in str(caught.value)  # no path in the message
    with file_lock(lock, timeout=5):
        pass


def test_file_lock_held_by_another_thread_of_this_process_times_out(tmp_path: Path) -> None:
    """The per-path lock between threads of one process is bounded too (the thread that stalled the exit)."""
    lock = tmp_path / ".scan.lock"
    entered, leave = threading.Event(), threading.Event()

    def holder() -> None:
        with file_lock(lock, timeout=5):
            entered.set()
            leave.wait(30)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert entered.wait(10)
        started = time.monotonic()
        with pytest.raises(FileLockTimeout):
            with file_lock(lock, timeout=0.2):
                pass
        assert time.monotonic() - started < 5
    finally:
        leave.set()
        thread.join(10)
    with file_lock(lock, timeout=5):
        pass


def _skill(home: Path, text: str) -> dict[str, object]:
    (home / "skills" / "etl").mkdir(parents=True, exist_ok=True)
    (home / "skills" / "etl" / "SKILL.md").write_text(text, encoding="utf-8")
    sha = hashlib.sha256(text.encode()).hexdigest()
    return {"skills": [{"name": "etl", "sha256": sha}]}


def test_a_snapshot_never_waits_long_for_the_blobs_lock_and_still_keeps_its_text(tmp_path: Path) -> None:
    """BOOK-29: the agent's thread keeps a snapshot's texts even while a hung peer holds ``.blobs.lock``,
    waiting at most briefly for it; a sweep in that time deletes nothing and says why."""
    context = _skill(tmp_path, "---\nname: etl\n---\nbody\n")
    with held_by_peer(tmp_path / LOCK_NAME):
        started = time.monotonic()
        assert keep_snapshot_files(tmp_path, context) == {"kept": 1, "present": 0, "not_kept": 0}
        assert keep_snapshot_files(tmp_path, context) == {"kept": 0, "present": 1, "not_kept": 0}
        assert time.monotonic() - started < 3
        counts = sweep(tmp_path, set(), time.time() + 10 * 86_400)
        assert counts.deleted == 0 and counts.skipped == "the blobs' lock cannot be taken"
    sha = str(context["skills"][0]["sha256"])  # type: ignore[index]
    assert read_blob(tmp_path, sha) == "---\nname: etl\n---\nbody\n"


def test_a_text_touched_between_the_sweeps_look_and_its_delete_is_kept(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """BOOK-29: a snapshot that went on without the lock touches a kept text just after the sweep found it
    unused: the sweep's rename-then-check sees the touch and keeps it (a plain delete would lose it)."""
    context = _skill(tmp_path, "old text\n")
    assert keep_snapshot_files(tmp_path, context)["kept"] == 1
    sha = str(context["skills"][0]["sha256"])  # type: ignore[index]
    path = blob_path(tmp_path, sha)
    assert path is not None
    os.utime(path, (1_000_000, 1_000_000))  # unused for years
    real_rename = os.rename

    def touched_first(src: str, dst: str) -> None:  # the snapshot's touch lands right before the delete
        os.utime(src)
        real_rename(src, dst)

    monkeypatch.setattr(blobs.os, "rename", touched_first)
    counts = sweep(tmp_path, set(), time.time())
    assert counts.deleted == 0 and counts.recent == 1
    assert read_blob(tmp_path, sha) == "old text\n"
    monkeypatch.setattr(blobs.os, "rename", real_rename)
    os.utime(path, (1_000_000, 1_000_000))
    assert sweep(tmp_path, set(), time.time()).deleted == 1  # unused and untouched: deleted
    assert read_blob(tmp_path, sha) is None
    assert [p.name for p in path.parent.iterdir()] == []  # nothing left behind
