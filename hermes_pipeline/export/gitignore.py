"""Keeping the stores out of git (spec 06 BOOK-34), for the trajectory store and the observability store alike.

When ``$HERMES_HOME`` is inside a git work tree, ``$HERMES_HOME/.gitignore`` gets the store's line
(``trajectories/``, ``observability/``; appended once, other lines never rewritten), and
:func:`tracked_store_files` lists store files git already tracks (which ``doctor`` reports as errors).

The ``.gitignore`` is read and appended to without ever blocking (a profile opens on the host's thread): a FIFO,
a device, a directory or a file over :data:`MAX_GITIGNORE_BYTES` there is left alone, with one warning naming it.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Final

from ..host.profile_files import MAX_PROFILE_FILE_BYTES, ProfileFileError, file_kind, read_regular_bytes, \
    warn_unreadable

__all__ = ["ensure_gitignore", "git_work_tree", "tracked_store_files"]

logger: Final = logging.getLogger("hermes_pipeline.export.gitignore")
MAX_GITIGNORE_BYTES: Final = MAX_PROFILE_FILE_BYTES
"""The largest ``.gitignore`` read (8 MiB); a larger one is left alone (warned)."""
_APPEND: Final = (os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                  | getattr(os, "O_CLOEXEC", 0))


def git_work_tree(path: Path) -> Path | None:
    """The top of the git work tree containing ``path``, or ``None`` (no git, or not in a work tree)."""
    current = path.resolve()
    for candidate in (current, *current.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def ensure_gitignore(home: Path, entry: str = "trajectories/") -> bool:
    """Append ``entry`` to ``home/.gitignore`` when ``home`` is inside a git work tree and the line is
    not there yet. Returns whether the file was changed."""
    if git_work_tree(home) is None:
        return False
    path = home / ".gitignore"
    try:
        raw = read_regular_bytes(path, MAX_GITIGNORE_BYTES)  # a FIFO is refused at once, never waited for
    except FileNotFoundError:
        raw = b""
    except ProfileFileError as exc:
        warn_unreadable(logger, exc, ".gitignore", event="gitignore_unreadable")
        return False
    except OSError:
        return False
    text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")  # as read_text() reads it
    wanted = entry.rstrip("/")
    if any(line.strip().rstrip("/") in (wanted, "/" + wanted) for line in text.splitlines()):
        return False
    try:
        fd = os.open(path, _APPEND, 0o666)
    except OSError as exc:  # a FIFO swapped in meanwhile: ENXIO at once, not a wait for a reader
        if exc.errno != errno.ENXIO:
            raise
        warn_unreadable(logger, exc, ".gitignore", event="gitignore_unreadable", path=path)
        return False
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            refused = ProfileFileError(path, f"{file_kind(mode)}; expected a regular file", kind="not_regular",
                                       mode=mode)
            warn_unreadable(logger, refused, ".gitignore", event="gitignore_unreadable")
            return False
        data = (("" if not text or text.endswith("\n") else "\n") + entry + "\n").encode("utf-8")
        while data:
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)
    return True


def tracked_store_files(home: Path, directory: Path) -> list[str]:
    """Files under ``directory`` that git tracks in the work tree of ``home`` (empty without git)."""
    top = git_work_tree(home)
    git = shutil.which("git")
    if top is None or git is None or not directory.exists():
        return []
    try:
        done = subprocess.run([git, "-C", str(top), "ls-files", "--", str(directory.resolve())],
                              capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    return [line for line in done.stdout.splitlines() if line.strip()]
