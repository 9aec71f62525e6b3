"""Atomic file replacement and the removal of what a crash left behind (spec 04 FMT-52).

:func:`write_atomically` writes a temporary file next to the target and renames it over the target.
A process killed between the two (``kill -9``, power loss) leaves the temporary file behind. Its
name says whose it is: ``.<target name>.<writer pid>.<random>.tmp``. :func:`remove_leftovers`,
called when a writer starts, deletes such files in the writer's own directory when

- the pid in the name is not a live process (its writer crashed), or
- the file is older than :data:`STALE_SECONDS` (the pid was reused, or a writer of an earlier
  version named its files ``.<target name>.<random>.tmp``, without a pid: those only by age).

A live process's in-progress temporary file (another process sharing the directory, or a writer of
this process) is therefore never touched, and files that do not match the pattern never are.
"""

from __future__ import annotations

import errno
import os
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

STALE_SECONDS: Final = 900.0
"""A temporary file older than this is a leftover whoever named it (no atomic write takes 15 minutes)."""

_TEMP: Final = re.compile(r"\.(?P<target>.+)\.(?P<pid>\d+)\.[a-z0-9_]{8}\.tmp")
"""``.<target>.<pid>.<8 random chars>.tmp`` (``tempfile.mkstemp`` makes the random part)."""
_LEGACY_TEMP: Final = re.compile(r"\.(?P<target>.+)\.[a-z0-9_]{8}\.tmp")
"""``.<target>.<8 random chars>.tmp``: the names of earlier versions, without the pid."""


def temp_prefix(target: Path) -> str:
    """The name prefix of this process's temporary files for ``target``: ``.<name>.<pid>.``."""
    return f".{target.name}.{os.getpid()}."


def make_dirs(path: Path) -> None:
    """Create ``path`` and its missing parents, each with mode ``0700`` (FMT-52)."""
    missing = []
    while not path.is_dir():
        missing.append(path)
        if path.parent == path:
            break
        path = path.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=0o700)
        except FileExistsError:
            pass


def write_atomically(path: Path, data: bytes, *, sync_directory: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically: a temporary ``.<name>.<pid>.*.tmp`` file (mode ``0600``)
    in the same directory, ``fsync``, rename over the target, then ``fsync`` of the directory where
    the platform allows it (:func:`sync_directory_of`). The temporary file is removed on failure; a crash leaves it
    for :func:`remove_leftovers`.

    ``sync_directory=False`` leaves the directory's ``fsync`` to the caller, who writes several files into it and
    syncs it once after the last rename, before it counts any of them as written."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=temp_prefix(path), suffix=".tmp")  # created 0600
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        _pause_for_tests(tmp)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if sync_directory:
        sync_directory_of(path.parent)


def sync_directory_of(directory: Path) -> None:
    """``fsync`` ``directory``, so that a rename into it is durable; best effort (a platform or file system that
    cannot open or sync a directory is skipped, never raised)."""
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


PAUSE_ENV: Final = "HERMES_PIPELINE_TEST_PAUSE_ATOMIC_WRITE"
"""Test hook: a file path. When set, :func:`write_atomically` writes the temporary file's path to
it once the temporary file is written, before the rename, then waits until the test kills the
process (crash tests)."""


def _pause_for_tests(tmp: str) -> None:
    ready = os.environ.get(PAUSE_ENV)
    if not ready:
        return
    with open(ready, "w", encoding="utf-8") as fh:  # a FIFO: the test reads until this closes
        fh.write(tmp)
    while True:
        time.sleep(3600)  # killed by the test; never returns


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (a process of another user counts as alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError as exc:
        return exc.errno != errno.ESRCH
    return True


def is_leftover(name: str, mtime: float, *, owns: Callable[[str], bool], now: float | None = None) -> bool:
    """Whether the file ``name`` (modified at ``mtime``) is a leftover temporary file of this writer.

    ``owns(target_name)`` says whether the target the temporary file was for is one of the writer's
    own files (its filename pattern).
    """
    age = (time.time() if now is None else now) - mtime
    match = _TEMP.fullmatch(name)
    if match is not None and owns(match["target"]):
        pid = int(match["pid"])
        if pid == os.getpid():  # one of this process's writers may be writing it right now
            return age > STALE_SECONDS
        return age > STALE_SECONDS or not pid_alive(pid)
    legacy = _LEGACY_TEMP.fullmatch(name)
    return legacy is not None and owns(legacy["target"]) and age > STALE_SECONDS


def remove_leftovers(directory: Path, owns: Callable[[str], bool], *, depth: int = 0) -> int:
    """Delete leftover temporary files (see the module docstring) in ``directory`` and its
    subdirectories down to ``depth`` levels (0 = the directory only); returns how many (errors skipped).

    ``owns(relative_target)`` receives the target's path relative to ``directory`` (``/``-separated).
    """
    removed = 0
    now = time.time()
    for root, dirs, files in os.walk(directory):
        base = Path(root)
        rel = base.relative_to(directory)
        if len(rel.parts) >= depth:
            dirs[:] = []
        for name in files:
            if not name.endswith(".tmp") or not name.startswith("."):
                continue
            path = base / name
            try:
                st = path.lstat()
                if not path.is_file() or path.is_symlink():
                    continue
                if is_leftover(name, st.st_mtime, owns=lambda target: owns((rel / target).as_posix()), now=now):
                    path.unlink()
                    removed += 1
            except OSError:
                continue
    return removed
