"""Reading configuration inputs safely: only regular files, only up to a size limit.

A pipeline file, a manifest, a JSON schema or a profile ``config.yaml`` named by the operator could
be a FIFO (opening it for reading would wait for a writer forever), a character device such as
``/dev/zero`` (reading it never ends), or a directory. Every such input is refused with a
:class:`~hermes_pipeline.config.errors.ConfigError` naming the file, before anything blocks or
grows: the file is opened without blocking, checked with ``fstat`` on the open descriptor (so a
file swapped in between the check and the read cannot slip through), and at most
:data:`MAX_CONFIG_BYTES` + 1 bytes are ever read.

This is the same reader as :func:`hermes_pipeline.host.profile_files.read_regular_bytes` (the one the
store's probes and the context snapshot use on the agent's thread), with the same refusals in the same words
(``tests/config/test_profile_file_reads.py`` holds them equal). It is kept here, not imported from the host
layer, because the Hermes bridge reads ``config.yaml`` through this module on every start, including an
inert one that must not load the host API at all (``tests/hermes/test_import_cost.py``).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Final

from .errors import ConfigError

MAX_CONFIG_BYTES: Final = 1024 * 1024
"""Largest configuration file accepted (1 MiB); real pipeline files are a few kilobytes."""

_KINDS: Final = (
    (stat.S_ISDIR, "is a directory"),
    (stat.S_ISFIFO, "is a named pipe (FIFO)"),
    (stat.S_ISCHR, "is a character device"),
    (stat.S_ISBLK, "is a block device"),
    (stat.S_ISSOCK, "is a socket"),
)


def _kind(mode: int) -> str:
    for test, text in _KINDS:
        if test(mode):
            return text
    return "is not a regular file"


def read_config_bytes(path: Path, *, limit: int = MAX_CONFIG_BYTES, code: str = "pipeline.invalid") -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises:
        ConfigError: with code ``pipeline.file_missing`` when the file does not exist; otherwise with
            ``code``, when it is not a regular file (FIFO, device, directory, socket), larger than
            ``limit`` bytes, or cannot be read. The message names the file and what was expected.
    """
    try:
        before = os.stat(path)  # never blocks, whatever the file is
    except FileNotFoundError:
        raise ConfigError("file not found", path=path, code="pipeline.file_missing") from None
    except OSError as exc:
        raise ConfigError(f"cannot be read ({exc.strerror or type(exc).__name__})", path=path, code=code) from None
    if not stat.S_ISREG(before.st_mode):
        raise ConfigError(f"{_kind(before.st_mode)}; expected a regular file", path=path, code=code)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise ConfigError("file not found", path=path, code="pipeline.file_missing") from None
    except OSError as exc:
        raise ConfigError(f"cannot be read ({exc.strerror or errno.errorcode.get(exc.errno or 0, 'error')})",
                          path=path, code=code) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{_kind(info.st_mode)}; expected a regular file", path=path, code=code)
        if info.st_size > limit:
            raise ConfigError(_too_large(info.st_size, limit), path=path, code=code)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(65536, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # the file grew while it was read
            raise ConfigError(_too_large(size, limit), path=path, code=code)
        return b"".join(chunks)
    except OSError as exc:
        raise ConfigError(f"cannot be read ({exc.strerror or type(exc).__name__})", path=path, code=code) from None
    finally:
        os.close(fd)


def _too_large(size: int, limit: int) -> str:
    return f"is too large ({size} bytes or more); a configuration file may hold at most {limit} bytes"


def read_config_text(path: Path, *, limit: int = MAX_CONFIG_BYTES, code: str = "pipeline.invalid") -> str:
    """:func:`read_config_bytes` decoded as UTF-8; invalid UTF-8 is a :class:`ConfigError` naming the file."""
    raw = read_config_bytes(path, limit=limit, code=code)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"is not valid UTF-8 (byte {exc.start}); save the file as UTF-8", path=path,
                          code=code) from None


def read_optional_text(path: Path, *, limit: int = MAX_CONFIG_BYTES, code: str = "pipeline.invalid") -> str:
    """:func:`read_config_text`, with ``""`` for a file that does not exist."""
    try:
        return read_config_text(path, limit=limit, code=code)
    except ConfigError as exc:
        if exc.code == "pipeline.file_missing":
            return ""
        raise


__all__ = ["MAX_CONFIG_BYTES", "read_config_bytes", "read_config_text", "read_optional_text"]
