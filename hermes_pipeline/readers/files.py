"""Reading a file a user names, safely: regular files only, at most a size limit, JSON at most so deep.

Every reader of recorded runs (``trace show``, ``trajectory show|diff|redact``, ``replay``, the
dashboard's run pages) takes paths from people or from a directory anyone may write to. What they
are given is not always a trajectory: a FIFO (whose ``open`` waits for a writer for ever), a
device such as ``/dev/zero`` (endless), a directory, a file larger than memory, bytes that are not
UTF-8, JSON nested deeper than the interpreter's stack. :func:`read_limited` opens without blocking
(``O_NONBLOCK``), refuses anything but a regular file after ``fstat`` (so it never reads a FIFO or a
device), and reads at most ``limit + 1`` bytes, so a file that grows while it is read is refused
too (the package's one safe reader, :func:`hermes_pipeline.host.profile_files.read_regular_bytes`, worded
here for a reader's user). :func:`parse_json` parses with a depth limit. Every problem is an :class:`InputFileError`
that names the file and, where there is one, the field (``steps[3].tool_calls[0].arguments``).
"""

from __future__ import annotations

import errno
import json
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ..host.profile_files import ProfileFileError, read_regular_bytes
from ..config.yaml_depth import MAX_NESTING

__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "InputFileError", "field_path", "load_json", "parse_json",
           "read_limited"]

MAX_FILE_BYTES: Final = 256 * 1024 * 1024
"""The largest trajectory or event file the command-line readers read (256 MiB): a bigger one is refused
as too large (the dashboard, a server, has its own smaller limit)."""

MAX_DEPTH: Final = MAX_NESTING
"""The deepest nesting of JSON arrays and objects a reader accepts. Every reader walks documents
recursively; well inside the interpreter's recursion limit, far beyond what the sinks ever write. The same limit
as a YAML configuration file's (:data:`hermes_pipeline.config.yaml_depth.MAX_NESTING`)."""



class InputFileError(ValueError):
    """A file a reader cannot use, with why.

    Attributes:
        path: the file.
        field: where in the document the problem is (``steps[3].message``), or ``None``.
        reason: what is wrong, without the file and field.
        kind: ``"unreadable"``, ``"too_large"`` or ``"damaged"`` (what a reader tells its user).
    """

    def __init__(self, path: str | Path, reason: str, *, field: str | None = None, kind: str = "damaged") -> None:
        self.path = str(path)
        self.field = field
        self.reason = reason
        self.kind = kind
        super().__init__(f"{self.path}: {'field ' + field + ': ' if field else ''}{reason}")


def field_path(parts: tuple[str | int, ...]) -> str:
    """``("steps", 3, "message")`` → ``steps[3].message`` (``$`` for the document itself)."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "$"


def read_limited(path: str | Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises:
        InputFileError: missing, not a regular file (directory, FIFO, device, socket), unreadable,
            or larger than ``limit`` (``kind = "too_large"``).
    """
    try:
        return read_regular_bytes(path, limit)
    except FileNotFoundError:
        raise InputFileError(path, "no such file", kind="unreadable") from None
    except ProfileFileError as exc:
        raise _input_error(path, exc) from None
    except ValueError:  # a NUL byte in the name
        raise InputFileError(path, "cannot open (ValueError)", kind="unreadable") from None


def _input_error(path: str | Path, exc: ProfileFileError) -> InputFileError:
    """The safe reader's refusal (:mod:`hermes_pipeline.host.profile_files`) in a reader's words."""
    if exc.kind == "too_large":
        return InputFileError(path, f"too large ({exc.size} bytes; the limit is {exc.limit})", kind="too_large")
    if exc.kind == "not_regular":
        if exc.mode is not None and stat.S_ISDIR(exc.mode):
            return InputFileError(path, "is a directory, not a file", kind="unreadable")
        return InputFileError(path, "is not a regular file (a FIFO, device or socket); give a trajectory or event "
                              "file", kind="unreadable")
    if exc.error_number in (errno.EACCES, errno.EPERM):
        return InputFileError(path, "permission denied", kind="unreadable")
    return InputFileError(path, exc.reason.replace("cannot be read", "cannot read", 1), kind="unreadable")


def parse_json(data: bytes | str, path: str | Path, *, max_depth: int = MAX_DEPTH, line: int | None = None) -> Any:
    """``data`` parsed as JSON, nested at most ``max_depth`` deep.

    Raises:
        InputFileError: not UTF-8, not JSON (or truncated), or nested too deep (naming the field).
    """
    where = f"line {line}: " if line is not None else ""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputFileError(path, f"{where}not UTF-8 text (byte {exc.start})") from None
    try:
        value = json.loads(data)
    except RecursionError:
        raise InputFileError(path, f"{where}nested more than {max_depth} levels deep",
                             field=_deep_field(data, max_depth)) from None
    except ValueError as exc:
        raise InputFileError(path, f"{where}not valid JSON (truncated or damaged?): {exc}") from None
    deep = _too_deep(value, max_depth)
    if deep is not None:
        raise InputFileError(path, f"{where}nested more than {max_depth} levels deep", field=_outer(deep))
    return value


def load_json(path: str | Path, *, limit: int = MAX_FILE_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """:func:`read_limited` then :func:`parse_json`."""
    return parse_json(read_limited(path, limit), path, max_depth=max_depth)


def _too_deep(value: Any, max_depth: int) -> tuple[str | int, ...] | None:
    """The path of the first container nested deeper than ``max_depth``, or ``None`` (no recursion)."""
    if not isinstance(value, dict | list):
        return None
    stack: list[tuple[Any, int, tuple[str | int, ...]]] = [(value, 1, ())]
    while stack:
        node, depth, at = stack.pop()
        if depth > max_depth:
            return at
        items = node.items() if isinstance(node, Mapping) else enumerate(node)
        for key, child in items:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1, (*at, key)))
    return None


def _outer(parts: tuple[str | int, ...]) -> str:
    """The path of a too-deep field, its first levels only (the rest is the same brackets again)."""
    return field_path(parts) if len(parts) <= 8 else field_path(parts[:8]) + "…"


_TOKEN: Final = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},]', re.S)
_COLON: Final = re.compile(r"\s*:")


def _deep_field(text: str, max_depth: int) -> str | None:
    """Where ``text`` first nests deeper than ``max_depth`` (only when the parser gave up on it)."""
    at: list[str | int | None] = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            at.append(0 if token == "[" else None)
            if len(at) > max_depth:
                return _outer(tuple(p if p is not None else "?" for p in at[:-1]))
        elif token in "]}":
            if at:
                at.pop()
        elif token == ",":
            if at and isinstance(at[-1], int):
                at[-1] += 1
        elif at and not isinstance(at[-1], int) and _COLON.match(text, match.end()):
            at[-1] = token[1:-1]
    return None
