"""``filename_template`` of ATIF trajectories: parsing, rendering for one trajectory root (spec 04 FMT-50, FMT-51).

A template without ``{session_id}``, with an unknown placeholder or with a literal that is not a
relative path fragment is refused (:class:`~hermes_pipeline.export.errors.ExportConfigError`); a
metadata value that is missing (without fallback), not a string, or not a valid path fragment makes
rendering fail with :class:`UnresolvedFilename`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ...export.errors import ExportConfigError
from ...export.ids import rfc3339_us

__all__ = ["FilenameTemplate", "UnresolvedFilename", "is_fragment"]

_PLACEHOLDER: Final = re.compile(r"\{([^{}]*)\}")
_FRAGMENT: Final = re.compile(r"[A-Za-z0-9._~-]+(?:/[A-Za-z0-9._~-]+)*")
_LITERAL: Final = re.compile(r"[A-Za-z0-9._~/-]*")
_METADATA: Final = re.compile(r"metadata\.([A-Za-z0-9_.\-]+?)(?::-(.*))?")


class UnresolvedFilename(Exception):
    """A template placeholder could not be expanded for one trajectory (FMT-51); the message names it."""


def is_fragment(text: str) -> bool:
    """Whether ``text`` is a relative path of ``/``-separated segments of ``[A-Za-z0-9._~-]`` (FMT-51)."""
    return bool(_FRAGMENT.fullmatch(text)) and all(part not in (".", "..") for part in text.split("/"))


def _lookup(metadata: Mapping[str, Any], path: str) -> Any:
    """Exact flat key first, then a nested lookup splitting ``path`` on ``.`` (FMT-50)."""
    if path in metadata:
        return metadata[path]
    value: Any = metadata
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


@dataclass(frozen=True)
class FilenameTemplate:
    """A parsed ``filename_template``: literal text and ``(kind, path, fallback)`` placeholders."""

    text: str
    parts: tuple[str | tuple[str, str, str | None], ...]

    @classmethod
    def parse(cls, text: str, key: str = "atif.filename_template") -> FilenameTemplate:
        """Parse and check ``text``; :class:`ExportConfigError` (naming ``key``) when it is unusable."""
        if not isinstance(text, str) or not text.strip():
            raise ExportConfigError(key, "expected a non-blank template such as 'hermes-atif-{session_id}.json'")
        parts: list[str | tuple[str, str, str | None]] = []
        position = 0
        for match in _PLACEHOLDER.finditer(text):
            parts.append(text[position:match.start()])
            parts.append(cls._placeholder(match.group(1), key))
            position = match.end()
        parts.append(text[position:])
        literals = [p for p in parts if isinstance(p, str)]
        if any("{" in p or "}" in p for p in literals):
            raise ExportConfigError(key, "unbalanced '{' or '}'")
        if any(not _LITERAL.fullmatch(p) for p in literals):
            raise ExportConfigError(key, "literal text may only contain ASCII letters, digits, '-', '_', '.', '~' "
                                         "and '/' (no spaces or backslashes)")
        if not any(isinstance(p, tuple) and p[0] == "session_id" for p in parts):
            raise ExportConfigError(key, "must contain {session_id} so that every trajectory gets its own file")
        shape = "".join(p if isinstance(p, str) else "x" for p in parts)
        if shape.startswith("/") or not is_fragment(shape):
            raise ExportConfigError(key, "must be a relative path without empty, '.' or '..' segments")
        return cls(text, tuple(p for p in parts if p != ""))

    @staticmethod
    def _placeholder(inner: str, key: str) -> tuple[str, str, str | None]:
        if inner in ("session_id", "date"):
            return inner, "", None
        match = _METADATA.fullmatch(inner)
        if match is None:
            raise ExportConfigError(key, f"unknown placeholder {{{inner}}}; use {{session_id}}, {{date}}, "
                                         "{metadata.<key>} or {metadata.<key>:-<fallback>}")
        path, fallback = match.group(1), match.group(2)
        if path.startswith(".") or path.endswith(".") or ".." in path:
            raise ExportConfigError(key, f"placeholder {{{inner}}} has an empty metadata key segment")
        if fallback is not None and not is_fragment(fallback):
            raise ExportConfigError(key, f"the fallback of {{metadata.{path}}} must be a relative path fragment of "
                                         "ASCII letters, digits, '-', '_', '.', '~'")
        return "metadata", path, fallback

    @property
    def placeholders(self) -> tuple[tuple[str, str, str | None], ...]:
        return tuple(p for p in self.parts if isinstance(p, tuple))

    def render(self, root_uuid: str, metadata: Mapping[str, Any] | None, start_us: int) -> str:
        """The relative path for a trajectory root; :class:`UnresolvedFilename` per FMT-51."""
        out: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            kind, path, fallback = part
            if kind == "session_id":
                value: Any = root_uuid
            elif kind == "date":
                value = rfc3339_us(start_us)[:10]
            else:
                value = _lookup(metadata or {}, path)
                if value is None:
                    if fallback is None:
                        raise UnresolvedFilename(f"metadata.{path} is missing and has no fallback")
                    value = fallback
                elif not isinstance(value, str):
                    raise UnresolvedFilename(f"metadata.{path} is not a string")
            if not is_fragment(value):
                raise UnresolvedFilename(f"{{{kind if kind != 'metadata' else 'metadata.' + path}}} does not expand "
                                         "to a relative path fragment")
            out.append(value)
        rendered = "".join(out)
        if not is_fragment(rendered):
            raise UnresolvedFilename("the rendered name is not a relative path")
        return rendered

    def pattern(self) -> re.Pattern[str]:
        """Which relative paths belong to this template (retention, FMT-87a)."""
        pieces = []
        for part in self.parts:
            if isinstance(part, str):
                pieces.append(re.escape(part))
            elif part[0] == "session_id":
                pieces.append(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
            elif part[0] == "date":
                pieces.append(r"\d{4}-\d{2}-\d{2}")
            else:
                pieces.append(r"[A-Za-z0-9._~-]+(?:/[A-Za-z0-9._~-]+)*")
        return re.compile("".join(pieces))

    @property
    def max_depth(self) -> int:
        """How many directory levels below the output directory a rendered file can be (retention walk)."""
        literal = sum(p.count("/") for p in self.parts if isinstance(p, str))
        return literal + (4 if any(p[0] == "metadata" for p in self.placeholders) else 0)
