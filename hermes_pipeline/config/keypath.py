"""Key paths: tuples of keys and list indices, and their dotted text form ``a.b[0].c``."""

from __future__ import annotations

import re
from typing import Final

KeyPath = tuple[str | int, ...]
"""A path into a document: table keys (``str``) and list indices (``int``)."""

_PLAIN: Final = re.compile(r"[A-Za-z0-9_\-]+")
_TOKEN: Final = re.compile(r'\.?(?:([A-Za-z0-9_\-]+)|"((?:[^"\\]|\\.)*)")|\[(\d+)\]')


def format_path(path: KeyPath) -> str:
    """``("a", "b", 0, "c")`` → ``a.b[0].c``; keys with other characters are double-quoted."""
    out: list[str] = []
    for seg in path:
        if isinstance(seg, int):
            out.append(f"[{seg}]")
            continue
        text = seg if _PLAIN.fullmatch(seg) else '"' + seg.replace("\\", "\\\\").replace('"', '\\"') + '"'
        out.append(("." if out else "") + text)
    return "".join(out)


def parse_path(text: str) -> KeyPath:
    """Inverse of :func:`format_path`. Raises ``ValueError`` for malformed text."""
    path: list[str | int] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or (pos == 0 and text.startswith(".")) or (pos > 0 and match.group(0)[0] not in ".["):
            raise ValueError(f"malformed key path {text!r}: expected keys separated by '.' and [index] items")
        plain, quoted, index = match.groups()
        if index is not None:
            path.append(int(index))
        elif plain is not None:
            path.append(plain)
        else:
            path.append(re.sub(r"\\(.)", r"\1", quoted or ""))
        pos = match.end()
    if not path:
        raise ValueError("empty key path")
    return tuple(path)


def join(prefix: str | None, path: KeyPath) -> str:
    """Dotted form of ``path`` below the dotted ``prefix``."""
    tail = format_path(path)
    if not prefix:
        return tail
    return prefix + ("" if tail.startswith("[") else ".") + tail if tail else prefix
