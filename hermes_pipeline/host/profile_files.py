"""Reading a profile's files without ever blocking or reading without bound: the package's one safe reader.

A profile's files (``config.yaml``, ``SKILL.md`` and every file of a skill, ``memories/*.md``, ``SOUL.md``, the
store's own state and pending records, Hermes' ``.bundled_manifest`` and ``.hub/lock.json``) are read on the
agent's thread (the store's probes on ``pre_tool_call`` / ``post_tool_call``, the context snapshot of every turn,
the bridge's ``register``) and on the store's threads. Any of them may be something other than a file: a named
pipe (FIFO, whose ``open`` or ``read`` waits for a writer for ever: what a file on an NFS home that stopped
answering does too), a device such as ``/dev/zero`` (endless), a directory, a socket, or a file far larger than
any real one. :func:`read_regular_bytes` refuses each of them before anything blocks or grows: it checks the
path with ``stat``, opens it without blocking (``O_NONBLOCK``, ``O_NOCTTY``), checks the *open descriptor* with
``fstat`` (a file swapped in between the check and the read cannot slip through) and reads at most ``limit + 1``
bytes (so a file that grows while it is read is refused too). Every refusal is a :class:`ProfileFileError` (an
:class:`OSError`, so every caller's ``except OSError`` treats it as an unreadable file) naming the file and why;
a missing file stays :class:`FileNotFoundError`. :func:`warn_unreadable` logs one warning per file and reason.

It lives in the host layer, the lowest layer that reads a profile file (:mod:`.skill_layout`, :mod:`.snapshot`);
the store's probes and state and the command-line readers (:mod:`hermes_pipeline.readers.files`) read through it
too. :mod:`hermes_pipeline.config.files` applies the same checks with the same words for configuration inputs (the
Hermes bridge's inert start must not load the host layer; a test holds the two equal).
"""

from __future__ import annotations

import errno as _errno
import hashlib
import logging
import os
import stat
import threading
from pathlib import Path
from typing import Final

__all__ = ["MAX_CONFIG_BYTES", "MAX_PROFILE_FILE_BYTES", "MAX_SMALL_FILE_BYTES", "ProfileFileError", "file_kind",
           "read_regular_bytes", "sha256_of_file", "warn_unreadable"]

MAX_CONFIG_BYTES: Final = 1024 * 1024
"""Largest configuration file accepted (1 MiB: ``config.yaml``, a pipeline file); real ones are a few kilobytes."""
MAX_PROFILE_FILE_BYTES: Final = 8 * 1024 * 1024
"""The largest skill file (``SKILL.md``, a reference, a script), memory file or persona file read (8 MiB): a real
one is a few kilobytes, Hermes' own memory files a few hundred characters. A larger file is skipped (one warning)
rather than read whole on the agent's thread."""
MAX_SMALL_FILE_BYTES: Final = 1024 * 1024
"""The largest bookkeeping file read (1 MiB): the store's scan state, a pending record, Hermes' skill manifests."""

_KINDS: Final = (
    (stat.S_ISDIR, "is a directory"),
    (stat.S_ISFIFO, "is a named pipe (FIFO)"),
    (stat.S_ISCHR, "is a character device"),
    (stat.S_ISBLK, "is a block device"),
    (stat.S_ISSOCK, "is a socket"),
)
_FLAGS: Final = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                 | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
_CHUNK: Final = 1 << 20


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is (``"is a named pipe (FIFO)"``), from its ``st_mode``."""
    for test, text in _KINDS:
        if test(mode):
            return text
    return "is not a regular file"


class ProfileFileError(OSError):
    """A file that is not read, with why (see the module docstring).

    Attributes:
        path: the file.
        reason: what is wrong, without the file (``"is a named pipe (FIFO); expected a regular file"``).
        kind: ``"not_regular"`` (a FIFO, device, directory or socket), ``"too_large"`` or ``"unreadable"``.
        mode: the file's ``st_mode`` for ``"not_regular"``, else ``None``.
        size: how many bytes it has at least, for ``"too_large"``; limit: the limit it was read with.
        error_number: the ``errno`` of an ``"unreadable"`` file, else ``None``.
    """

    def __init__(self, path: str | Path, reason: str, *, kind: str, mode: int | None = None, size: int = 0,
                 limit: int = 0, error_number: int | None = None) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason
        self.kind = kind
        self.mode = mode
        self.size = size
        self.limit = limit
        self.error_number = error_number

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def _unreadable(path: str | Path, exc: OSError) -> ProfileFileError:
    text = exc.strerror or _errno.errorcode.get(exc.errno or 0, type(exc).__name__)
    return ProfileFileError(path, f"cannot be read ({text})", kind="unreadable", error_number=exc.errno)


def _not_regular(path: str | Path, mode: int) -> ProfileFileError:
    return ProfileFileError(path, f"{file_kind(mode)}; expected a regular file", kind="not_regular", mode=mode)


def _too_large(path: str | Path, size: int, limit: int) -> ProfileFileError:
    return ProfileFileError(path, f"is too large ({size} bytes or more); at most {limit} bytes are read",
                            kind="too_large", size=size, limit=limit)


def read_regular_bytes(path: str | Path, limit: int = MAX_PROFILE_FILE_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them; never blocks on a FIFO or a device.

    Raises:
        FileNotFoundError: the file does not exist.
        ProfileFileError: it is not a regular file, is larger than ``limit`` bytes, or cannot be read.
    """
    try:
        before = os.stat(path)  # never opens it: a device is not even opened
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        raise _unreadable(path, exc if isinstance(exc, OSError) else OSError(_errno.EINVAL, str(exc))) from None
    if not stat.S_ISREG(before.st_mode):
        raise _not_regular(path, before.st_mode)
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise _not_regular(path, stat.S_IFDIR) from None
    except OSError as exc:
        raise _unreadable(path, exc) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _not_regular(path, info.st_mode)
        if info.st_size > limit:
            raise _too_large(path, info.st_size, limit)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # it grew while it was read
            raise _too_large(path, size, limit)
        return b"".join(chunks)
    except ProfileFileError:
        raise
    except OSError as exc:
        raise _unreadable(path, exc) from None
    finally:
        os.close(fd)


def sha256_of_file(path: str | Path, limit: int = MAX_PROFILE_FILE_BYTES) -> str:
    """The hex SHA-256 of the regular file ``path`` (:func:`read_regular_bytes`: same errors)."""
    return hashlib.sha256(read_regular_bytes(path, limit)).hexdigest()


_warned: set[tuple[str, str]] = set()
_warned_lock = threading.Lock()
_MAX_WARNED: Final = 4096


def warn_unreadable(logger: logging.Logger, exc: OSError, what: str = "file", *, event: str = "profile_file_unreadable",
                    path: str | Path | None = None) -> None:
    """Log once per file and reason that the ``what`` ``exc`` names is skipped (:class:`ProfileFileError`, or any
    :class:`OSError` of reading ``path``)."""
    where = str(getattr(exc, "path", None) or path or getattr(exc, "filename", "") or "?")
    reason = exc.reason if isinstance(exc, ProfileFileError) else (exc.strerror or type(exc).__name__)
    key = (where, reason)
    with _warned_lock:
        if key in _warned:
            return
        if len(_warned) >= _MAX_WARNED:
            _warned.clear()
        _warned.add(key)
    logger.warning("hermes_pipeline: %s %s %s; it is skipped", what, where, reason,
                   extra={"event": event, "path": where})
