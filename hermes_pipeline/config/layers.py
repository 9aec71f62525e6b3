"""Per-file preprocessing of a pipeline layer before merging (spec 03 §9.2).

1. validate ``version`` (CFG-21); reject a top-level ``dynamic_plugins`` key (CFG-11);
2. check the component list and reject duplicate kinds in one file (CFG-15, CFG-81);
3. discovered files only: drop ``enabled = false`` components and the ``plugins`` table (CFG-6).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from .diagnostics import Diagnostics
from .errors import ConfigError
from .keypath import KeyPath, format_path
from .loader import ParsedFile

KIND_NAME: Final = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*")
"""A kind name: lowercase ``[a-z][a-z0-9_]*`` segments separated by ``.`` (CFG-81)."""

LayerRole = Literal["user", "system", "selected"]


@dataclass
class Layer:
    """One preprocessed document taking part in the merge."""

    role: LayerRole
    parsed: ParsedFile
    disabled_kinds: list[str] = field(default_factory=list)
    """Kinds this (discovered) file declared with ``enabled = false`` (for CFG-45)."""

    @property
    def source(self) -> str:
        """The file path as text."""
        return str(self.parsed.source)

    @property
    def data(self) -> dict[str, Any]:
        """The preprocessed document."""
        return self.parsed.data


def _fail(parsed: ParsedFile, path: KeyPath, message: str, code: str = "pipeline.invalid") -> ConfigError:
    return ConfigError(message, path=parsed.source, line=parsed.line_for(path), key=format_path(path) or None,
                       code=code)


def check_kind(parsed: ParsedFile, path: KeyPath, kind: object) -> str:
    """A component's ``kind``: present, a string, a valid kind name; else :class:`ConfigError`."""
    if kind is None:
        raise _fail(parsed, path[:-1], "component entry has no 'kind'; every [[components]] entry needs one")
    if not isinstance(kind, str):
        raise _fail(parsed, path, "'kind' must be a string")
    if not KIND_NAME.fullmatch(kind):
        raise _fail(parsed, path, "invalid kind name; expected lowercase [a-z][a-z0-9_]* segments separated by '.'")
    return kind


def preprocess(parsed: ParsedFile, role: LayerRole, diagnostics: Diagnostics) -> Layer:
    """Validate the structure of one file and return it as a :class:`Layer`.

    Raises :class:`ConfigError` for an unsupported version or a top-level ``dynamic_plugins`` key;
    broken component entries and duplicate kinds (also structural errors of CFG-21, whatever the
    policy says) are recorded as failures in ``diagnostics`` and left out, so that every one of them
    is reported and the load still fails.
    """
    data = parsed.data
    version = data.get("version", 1)
    if type(version) is not int or version != 1:
        raise _fail(parsed, ("version",), "unsupported pipeline document version; only version = 1 is supported")
    if "dynamic_plugins" in data:
        raise _fail(parsed, ("dynamic_plugins",),
                    "top-level 'dynamic_plugins' is not supported; declare each plugin as a "
                    "[[plugins.dynamic]] record with 'manifest' (and optional 'config') instead")
    components = data.get("components", [])
    if not isinstance(components, list):
        raise _fail(parsed, ("components",), "'components' must be an array of tables ([[components]])")
    seen: dict[str, int] = {}
    duplicates: list[str] = []
    bad: set[int] = set()
    for index, entry in enumerate(components):
        try:  # every broken entry is reported (the load fails at the end), the rest is still checked
            if not isinstance(entry, dict):
                raise _fail(parsed, ("components", index), "each [[components]] entry must be a table")
            kind = check_kind(parsed, ("components", index, "kind"), entry.get("kind"))
        except ConfigError as exc:
            diagnostics.fail(exc)
            bad.add(index)
            continue
        if kind in seen:
            bad.add(index)  # later declarations of a duplicated kind are left out of the merge
            if kind not in duplicates:
                duplicates.append(kind)
        seen.setdefault(kind, index)
    if duplicates:
        diagnostics.fail(ConfigError(
            f"the same kind is declared more than once in one file: {', '.join(duplicates)}", path=parsed.source,
            line=parsed.line_for(("components", seen[duplicates[0]])), key="components",
            code="plugin.duplicate_kind"))
    if bad:
        remaining = [entry for index, entry in enumerate(components) if index not in bad]
        _reindex_components(parsed, components, remaining)
        data["components"] = components = remaining
    _normalise_aliases(parsed)
    layer = Layer(role, parsed)
    if role != "selected":
        kept = []
        for entry in components:
            if entry.get("enabled") is False:
                layer.disabled_kinds.append(entry["kind"])
            else:
                kept.append(entry)
        if len(kept) != len(components):
            _reindex_components(parsed, components, kept)
            data["components"] = kept
        if "plugins" in data:
            del data["plugins"]
            diagnostics.warning("pipeline.dynamic_ignored",
                                "the 'plugins' table of a discovered file is ignored; [[plugins.dynamic]] "
                                "records are read only from the selected file",
                                field="plugins", source=layer.source, line=parsed.line_for(("plugins",)))
    elif "plugins" in data and not isinstance(data["plugins"], dict):
        raise _fail(parsed, ("plugins",), "'plugins' must be a table")
    return layer


def _reindex_components(parsed: ParsedFile, before: list[Any], after: list[Any]) -> None:
    """Keep the line map in step after removing component entries."""
    position = {id(entry): i for i, entry in enumerate(after)}
    moved: dict[KeyPath, int] = {}
    for path, line in parsed.lines.items():
        if len(path) >= 2 and path[0] == "components" and isinstance(path[1], int):
            new = position.get(id(before[path[1]])) if path[1] < len(before) else None
            if new is not None:
                moved[("components", new, *path[2:])] = line
        else:
            moved[path] = line
    parsed.lines = moved


def _normalise_aliases(parsed: ParsedFile) -> None:
    """``opentelemetry.traces`` is an alias of ``opentelemetry.endpoints`` in ``observability``."""
    for index, entry in enumerate(parsed.data.get("components", [])):
        config = entry.get("config")
        otel = config.get("opentelemetry") if entry.get("kind") == "observability" and isinstance(config, dict) \
            else None
        if isinstance(otel, dict) and "traces" in otel and "endpoints" not in otel:
            otel["endpoints"] = otel.pop("traces")
            base: KeyPath = ("components", index, "config", "opentelemetry")
            for path in [p for p in parsed.lines if p[: len(base) + 1] == (*base, "traces")]:
                parsed.lines[(*base, "endpoints", *path[len(base) + 1:])] = parsed.lines.pop(path)
