"""Validation of the ``atof`` configuration table (spec 04 §2.16, spec 03 §7.2).

:func:`parse_atof_config` turns a plain mapping into typed, resolved sink settings or raises
:class:`~hermes_pipeline.export.errors.ExportConfigError` naming the key path. Structural problems
(wrong table types, unknown keys, the removed version-1 keys) always raise; an invalid value inside
one ``sinks[]`` entry raises too, unless ``on_invalid = "skip"``, which skips only that entry and
records it (FMT-73 / CFG-32a). Messages name keys, environment-variable names and header names,
never URLs, header values or other secrets.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ...export.config_checks import EntryError as _EntryError
from ...export.config_checks import entry_headers
from ...export.config_checks import is_int as _is_int
from ...export.config_checks import (
    check_on_invalid, check_table, entry_type, http_url, refuse_entry,
)
from ...config.checks import Check, array, boolean, check_keys, integer, nonblank, one_of, str_map, string, url
from ...config.keypath import KeyPath
from ...config.policy import ValidationContext
from ...export.entry_checks import check_entry, table_entries
from ...export.errors import ExportConfigError
from ...export.worker.protocol import check_worker
from ...export.files import default_events_filename
from ...export.paths import resolve_directory

logger: Final = logging.getLogger("hermes_pipeline.sinks.atof")

# ----------------------------------------------------------------- the one statement of the atof keys
# The validator (validate_config), the parser below, the layer merge (LIST_PATHS), config explain
# (output_locations) and the docs generator all read these tables; tests/test_layering.py fails if a
# second copy appears anywhere else.

KEYS: Final[dict[str, Check]] = {"enabled": boolean, "llm_history": one_of("delta", "full"), "sinks": array,
                                 "worker": check_worker}
"""The ``atof`` table's keys and their checks (``worker``: a hermes_pipeline extension, see
:mod:`hermes_pipeline.export.worker`)."""
REMOVED_KEYS: Final = ("output_directory", "filename", "mode", "endpoints")
"""Version-1 keys, always refused: ``[[components.config.atof.sinks]]`` entries replace them."""
_SINK: Final[dict[str, Check]] = {"type": one_of("file", "stream"), "max_queue_size": integer(1)}
FILE_SINK: Final[dict[str, Check]] = {
    **_SINK, "output_directory": string, "filename": nonblank, "mode": one_of("append", "overwrite"),
    "content": one_of("full", "summary"), "retention_days": integer(1),
}
"""Keys of a ``type = "file"`` entry."""
STREAM_SINK: Final[dict[str, Check]] = {
    **_SINK, "name": string, "url": nonblank, "transport": one_of("http_post", "websocket", "ndjson"),
    "headers": str_map, "header_env": str_map, "timeout_millis": integer(1),
    "field_name_policy": one_of("preserve", "replace_dots"),
}
"""Keys of a ``type = "stream"`` entry."""
LIST_PATHS: Final = (("sinks",),)
"""Lists that concatenate (higher layer first) when pipeline files are layered; other lists replace."""

TOP_KEYS: Final = frozenset(KEYS) - {"worker"}
"""What the parser accepts (``worker`` is taken off by the builder before parsing)."""
COMMON_KEYS: Final = frozenset(_SINK)
FILE_KEYS: Final = frozenset(FILE_SINK)
STREAM_KEYS: Final = frozenset(STREAM_SINK)
SUPPORTED_TRANSPORTS: Final = ("http_post", "ndjson")
DEFAULT_QUEUE: Final = 10_000
DEFAULT_FILENAME_SHOWN: Final = "hermes-events-<UTC YYYYMMDDTHHMMSSZ at activation>.jsonl"
"""How ``config explain`` shows the default ``filename`` (the stamp is chosen at activation)."""


@dataclass(frozen=True)
class FileSinkConfig:
    """One resolved ``type = "file"`` entry."""

    index: int
    directory: Path
    filename: str
    mode: str = "append"
    content: str = "full"
    retention_days: int | None = None
    max_queue_size: int = DEFAULT_QUEUE

    @property
    def label(self) -> str:
        return f"atof.sinks[{self.index}]"


@dataclass(frozen=True)
class StreamSinkConfig:
    """One resolved ``type = "stream"`` entry; ``headers`` already include ``header_env`` values."""

    index: int
    url: str
    name: str | None = None
    transport: str = "http_post"
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    timeout_millis: int = 3000
    field_name_policy: str = "preserve"
    max_queue_size: int = DEFAULT_QUEUE

    @property
    def label(self) -> str:
        return f"atof.sinks[{self.index}]" + (f" ({self.name})" if self.name else "")


@dataclass(frozen=True)
class AtofConfig:
    """The validated ``atof`` table."""

    enabled: bool = False
    llm_history: str = "delta"
    sinks: tuple[FileSinkConfig | StreamSinkConfig, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    """``(key path, reason)`` of entries skipped with ``on_invalid = "skip"``."""


def _int(entry: Mapping[str, Any], key: str, default: int | None, minimum: int) -> int | None:
    if key not in entry:
        return default
    value = entry[key]
    if not _is_int(value) or value < minimum:
        raise _EntryError(key, f"expected an integer >= {minimum}")
    return int(value)


def _choice(entry: Mapping[str, Any], key: str, default: str, choices: tuple[str, ...]) -> str:
    value = entry.get(key, default)
    if value not in choices:
        raise _EntryError(key, f"expected one of {', '.join(repr(c) for c in choices)}")
    return str(value)


def _string_map(entry: Mapping[str, Any], key: str) -> dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise _EntryError(key, "expected a table of strings")
    return dict(value)


def _file_sink(index: int, entry: Mapping[str, Any], base: Path, default_dir: Path | None) -> FileSinkConfig:
    directory = entry.get("output_directory")
    if directory is not None and not isinstance(directory, str):
        raise _EntryError("output_directory", "expected a string path")
    filename = entry.get("filename", None)
    if filename is None:
        filename = default_events_filename()
    elif not isinstance(filename, str) or not filename.strip() or "/" in filename or "\\" in filename \
            or filename in (".", ".."):
        raise _EntryError("filename", "expected a non-blank file name without path separators")
    resolved, _ = resolve_directory(directory, base_dir=base, default_dir=default_dir)
    return FileSinkConfig(
        index=index, directory=resolved, filename=filename,
        mode=_choice(entry, "mode", "append", ("append", "overwrite")),
        content=_choice(entry, "content", "full", ("full", "summary")),
        retention_days=_int(entry, "retention_days", None, 1),
        max_queue_size=_int(entry, "max_queue_size", DEFAULT_QUEUE, 1) or DEFAULT_QUEUE,
    )


def _stream_sink(index: int, entry: Mapping[str, Any], names: set[str]) -> StreamSinkConfig:
    name = entry.get("name")
    if name is not None:
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise _EntryError("name", "expected a non-blank name without surrounding whitespace")
        if name in names:
            raise _EntryError("name", "stream sink names must be unique")
    transport = _choice(entry, "transport", "http_post", ("http_post", "ndjson", "websocket"))
    if transport not in SUPPORTED_TRANSPORTS:
        raise _EntryError("transport", f"transport {transport!r} is not supported by this build; use "
                                       f"{' or '.join(repr(t) for t in SUPPORTED_TRANSPORTS)}")
    url = http_url(entry, "url")
    headers = _string_map(entry, "headers")
    header_env = _string_map(entry, "header_env")
    resolved = entry_headers(headers, header_env)
    if name is not None:
        names.add(name)
    return StreamSinkConfig(
        index=index, url=url.strip(), name=name, transport=transport, headers=resolved,
        timeout_millis=_int(entry, "timeout_millis", 3000, 1) or 3000,
        field_name_policy=_choice(entry, "field_name_policy", "preserve", ("preserve", "replace_dots")),
        max_queue_size=_int(entry, "max_queue_size", DEFAULT_QUEUE, 1) or DEFAULT_QUEUE,
    )


def parse_atof_config(config: Mapping[str, Any], *, base_dir: Path | None = None, on_invalid: str = "raise",
                      ignore_unknown_keys: bool = False, default_dir: Path | None = None) -> AtofConfig:
    """Validate and resolve an ``atof`` table (see the module docstring).

    Args:
        config: the ``[components.config.atof]`` mapping.
        base_dir: directory for relative ``output_directory`` values; the working directory now
            when omitted (CFG-83).
        default_dir: directory of a file sink without ``output_directory``; ``$HERMES_HOME/telemetry``
            when omitted (FMT-35: outputs default to the profile, never to the working directory).
        on_invalid: ``"raise"`` (default) or ``"skip"`` for invalid values inside one sink entry.
        ignore_unknown_keys: accept unknown keys (the caller applied its own unknown-field policy).
    """
    check_on_invalid(on_invalid)
    if not isinstance(config, Mapping):
        raise ExportConfigError("atof", "expected a table")
    for key in REMOVED_KEYS:
        if key in config:
            raise ExportConfigError(f"atof.{key}", "was removed with observability config version 1; declare "
                                    "[[components.config.atof.sinks]] entries instead (type = \"file\" with "
                                    "output_directory / filename / mode, or type = \"stream\" with url)")
    check_table(config, "atof", TOP_KEYS, ignore_unknown_keys=ignore_unknown_keys)
    enabled = config.get("enabled", False)
    if not isinstance(enabled, bool):
        raise ExportConfigError("atof.enabled", "expected true or false")
    llm_history = config.get("llm_history", "delta")
    if llm_history not in ("delta", "full"):
        raise ExportConfigError("atof.llm_history", "expected 'delta' or 'full'")
    entries = config.get("sinks", [])
    if not isinstance(entries, list | tuple):
        raise ExportConfigError("atof.sinks", "expected an array of tables")
    if enabled and not entries:
        raise ExportConfigError("atof.sinks", "an enabled atof section needs at least one sink, e.g. "
                                "[[components.config.atof.sinks]] type = \"file\"")
    base = base_dir if base_dir is not None else Path.cwd()
    sinks: list[FileSinkConfig | StreamSinkConfig] = []
    skipped: list[tuple[str, str]] = []
    names: set[str] = set()
    for index, entry in enumerate(entries):
        path = f"atof.sinks[{index}]"
        kind = entry_type(entry, path, ("file", "stream"))
        allowed = FILE_KEYS if kind == "file" else STREAM_KEYS
        extra = sorted(str(k) for k in entry if k not in allowed)
        if extra and not ignore_unknown_keys:
            raise ExportConfigError(f"{path}.{extra[0]}", f"unknown key for a {kind} sink; valid keys: "
                                    f"{', '.join(sorted(allowed))}")
        try:
            sinks.append(_file_sink(index, entry, base, default_dir) if kind == "file"
                         else _stream_sink(index, entry, names))
        except _EntryError as exc:
            refuse_entry(logger, f"{path}.{exc.key}", exc.message, on_invalid, skipped)
    return AtofConfig(enabled=enabled, llm_history=str(llm_history), sinks=tuple(sinks), skipped=tuple(skipped))


def output_locations(config: Mapping[str, Any], *, base_dir: Path | None = None,
                     default_dir: Path | None = None) -> list[tuple[tuple[str | int, ...], str, bool]]:
    """Where the file sinks of an ``atof`` table write, for ``config explain``.

    Returns ``(key path inside the table, resolved value, is_default)`` for the ``output_directory``
    and ``filename`` of every ``type = "file"`` entry; entries that are not tables are left out.
    """
    out: list[tuple[tuple[str | int, ...], str, bool]] = []
    entries = config.get("sinks") if isinstance(config, Mapping) else None
    for index, entry in enumerate(entries if isinstance(entries, list | tuple) else ()):
        if not isinstance(entry, Mapping) or entry.get("type") != "file":
            continue
        value = entry.get("output_directory")
        if value is None or isinstance(value, str):
            directory, is_default = resolve_directory(value, base_dir=base_dir, default_dir=default_dir)
            out.append((("sinks", index, "output_directory"), str(directory), is_default))
        filename = entry.get("filename")
        out.append((("sinks", index, "filename"), DEFAULT_FILENAME_SHOWN if filename is None else str(filename),
                    filename is None))
    return out


def validate_config(atof: dict[str, Any], vctx: ValidationContext) -> None:
    """The ``atof`` section's config statement: ``config validate`` and activation both run it (paths
    relative to the section). An invalid value inside one ``sinks[]`` entry skips only that entry."""
    for key in REMOVED_KEYS:
        if key in atof:
            vctx.error((key,), f"'atof.{key}' was removed with observability config version 1; declare "
                               "[[components.config.atof.sinks]] entries instead", code="observability.removed_key")
    check_keys(vctx, (), {k: v for k, v in atof.items() if k not in REMOVED_KEYS}, KEYS)
    sinks = atof.get("sinks")
    if atof.get("enabled") is True and not (isinstance(sinks, list) and sinks):
        vctx.unsupported_value(("sinks",), "an enabled atof section needs at least one sink")
    names: set[str] = set()
    for index, sink in table_entries(atof, "sinks", (), vctx):
        path: KeyPath = ("sinks", index)
        kind = sink.get("type")
        spec = STREAM_SINK if kind == "stream" else FILE_SINK
        extra: list[tuple[KeyPath, str]] = []
        if kind == "stream":
            transport = sink.get("transport", "http_post")
            schemes = ("ws", "wss") if transport == "websocket" else ("http", "https")
            message = url(*schemes)(sink.get("url")) if "url" in sink else None
            if message:
                extra.append(((*path, "url"), message))
            name = sink.get("name")
            if isinstance(name, str):
                if not name.strip() or name != name.strip():
                    extra.append(((*path, "name"), "expected a non-blank name without surrounding whitespace"))
                elif name in names:
                    extra.append(((*path, "name"), "stream sink names must be unique"))
                else:
                    names.add(name)
        check_entry(vctx, path, sink, spec, ("type", "url") if kind == "stream" else ("type",), extra)
