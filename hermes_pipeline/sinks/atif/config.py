"""The ``atif`` configuration: its one statement of keys, its validation and its parser (spec 04 §3.10-§3.12).

:func:`parse_atif_config` turns a plain mapping into a typed :class:`AtifConfig` or raises
:class:`~hermes_pipeline.export.errors.ExportConfigError` naming the key path. A ``filename_template``
without ``{session_id}``, with an unknown placeholder or with a literal that is not a relative path
fragment fails activation (FMT-50, FMT-51). :class:`FilenameTemplate` renders a template for one
trajectory root (:mod:`.filenames`); a metadata value that is missing (without fallback), not a string, or not a valid
path fragment makes rendering fail with :class:`UnresolvedFilename` (``atif.filename_unresolved``).

Remote storage (``storage``, FMT-53/54): ``http`` entries are validated and resolved (headers from
``header_env`` read now, FMT-41); ``s3`` entries are refused by this build. Configuring ``storage``
without ``enable_full_payloads = true`` is an error (``atif.storage_requires_full_payloads``, FMT-30).
Messages name keys, variable names and header names, never URLs, header values or other secrets.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ...export.config_checks import EntryError as _EntryError
from ...export.config_checks import entry_headers
from ...export.config_checks import (
    check_on_invalid, check_table, entry_type, http_url, refuse_entry,
)
from ...config.checks import Check, array, boolean, check_keys, integer, nonblank, one_of, str_map, string, table, url
from ...config.keypath import KeyPath
from ...config.policy import ValidationContext
from ...export.entry_checks import check_entry, table_entries
from ...export.errors import ExportConfigError
from ...export.worker.protocol import check_worker
from ...export.paths import default_output_directory, resolve_directory
from .filenames import FilenameTemplate

logger: Final = logging.getLogger("hermes_pipeline.sinks.atif")

# ----------------------------------------------------------------- the one statement of the atif keys
# The validator (validate_config), the parser below, the layer merge (LIST_PATHS), config explain
# (output_locations) and the docs generator all read these tables.

KEYS: Final[dict[str, Check]] = {
    "enabled": boolean, "agent_name": string, "agent_version": string, "model_name": string,
    "tool_definitions": array, "extra": table, "output_directory": string, "filename_template": nonblank,
    "storage": array, "max_queue_size": integer(1), "group_by": one_of("agent", "turn"), "worker": check_worker,
    "include_llm_payloads": boolean, "include_system_prompt": boolean, "include_observed_events": boolean,
    "retention_days": integer(1), "shared_definitions": boolean, "llm_history": one_of("full", "delta"),
}
"""The ``atif`` table's keys and their checks (``worker``: see :mod:`hermes_pipeline.export.worker`)."""
S3_STORAGE: Final[dict[str, Check]] = {
    "type": one_of("s3", "http"), "bucket": nonblank, "key_prefix": string, "access_key_id": string,
    "region": string, "endpoint_url": string, "allow_http": boolean, "secret_access_key_var": nonblank,
    "session_token_var": nonblank,
}
"""Keys of a ``type = "s3"`` storage entry (refused by this build at activation)."""
HTTP_STORAGE: Final[dict[str, Check]] = {
    "type": one_of("s3", "http"), "endpoint": nonblank, "headers": str_map, "header_env": str_map,
    "timeout_millis": integer(1),
}
"""Keys of a ``type = "http"`` storage entry."""
LIST_PATHS: Final = (("storage",),)
"""Lists that concatenate (higher layer first) when pipeline files are layered; other lists replace."""

TOP_KEYS: Final = frozenset(KEYS) - {"worker"}
"""What the parser accepts (``worker`` is taken off by the builder before parsing)."""
HTTP_KEYS: Final = frozenset(HTTP_STORAGE)
DEFAULT_TEMPLATE: Final = "hermes-atif-{session_id}.json"
DEFAULT_QUEUE: Final = 10_000
SHARED_WITH_STORAGE: Final = ("shared_definitions keeps definitions beside local files only; remote storage "
                              "needs whole trajectories: remove one of the two")

@dataclass(frozen=True)
class HttpStorageConfig:
    """One resolved ``storage`` entry of ``type = "http"`` (FMT-53); ``headers`` include ``header_env``."""

    index: int
    endpoint: str
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    timeout_millis: int = 3000

    @property
    def label(self) -> str:
        return f"atif.storage[{self.index}]"


@dataclass(frozen=True)
class AtifConfig:
    """The validated ``atif`` table (spec 04 §3.12)."""

    enabled: bool = False
    agent_name: str = "hermes"
    agent_version: str | None = None
    model_name: str = "unknown"
    tool_definitions: tuple[Any, ...] | None = None
    extra: Mapping[str, Any] | None = None
    directory: Path = field(default_factory=default_output_directory)
    group_by: str = "agent"
    template: FilenameTemplate = field(default_factory=lambda: FilenameTemplate.parse(DEFAULT_TEMPLATE))
    include_llm_payloads: bool = True
    include_system_prompt: bool = False
    include_observed_events: bool = False
    storage: tuple[HttpStorageConfig, ...] = ()
    max_queue_size: int = DEFAULT_QUEUE
    retention_days: int | None = None
    shared_definitions: bool = False
    llm_history: str = "full"
    """``"delta"``: each agent step's ``llm_request`` holds what its history adds to the previous step's
    (``extra.hermes.messages_offset``, :mod:`hermes_pipeline.export.history_delta`); ``"full"``: whole."""
    """Tool lists and system prompts in the output directory's ``definitions/`` sidecar, shared by every
    trajectory written there (:mod:`hermes_pipeline.export.definition_files`), instead of in each file."""
    skipped: tuple[tuple[str, str], ...] = ()
    """``(key path, reason)`` of storage entries skipped with ``on_invalid = "skip"``."""


def _json_compatible(value: Any, depth: int = 0) -> bool:
    if depth > 64:
        return False
    if value is None or isinstance(value, bool | str | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list | tuple):
        return all(_json_compatible(v, depth + 1) for v in value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _json_compatible(v, depth + 1) for k, v in value.items())
    return False


def _choice(config: Mapping[str, Any], key: str, choices: tuple[str, ...]) -> str:
    value = config.get(key, choices[0])
    if value not in choices:
        raise ExportConfigError(f"atif.{key}", "expected " + " or ".join(repr(c) for c in choices))
    return str(value)


def _bool(config: Mapping[str, Any], key: str, default: bool) -> bool:
    value = config.get(key, default)
    if not isinstance(value, bool):
        raise ExportConfigError(f"atif.{key}", "expected true or false")
    return value


def _string(config: Mapping[str, Any], key: str, default: str | None, *, blank: bool = False) -> str | None:
    if key not in config:
        return default
    value = config[key]
    if not isinstance(value, str) or (not blank and not value.strip()):
        raise ExportConfigError(f"atif.{key}", "expected a non-blank string")
    return value


def _int(config: Mapping[str, Any], key: str, default: int | None, path: str) -> int | None:
    if key not in config:
        return default
    value = config[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ExportConfigError(path, "expected an integer >= 1")
    return value


def _http_storage(index: int, entry: Mapping[str, Any], ignore_unknown: bool) -> HttpStorageConfig:
    extra = sorted(str(k) for k in entry if k not in HTTP_KEYS)
    if extra and not ignore_unknown:
        raise _EntryError(extra[0], "unknown key for an http storage entry; valid keys: "
                                    f"{', '.join(sorted(HTTP_KEYS))}")
    endpoint = http_url(entry, "endpoint")
    maps = {}
    for key in ("headers", "header_env"):
        value = entry.get(key, {})
        if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                     for k, v in value.items()):
            raise _EntryError(key, "expected a table of strings")
        maps[key] = dict(value)
    headers = entry_headers(maps["headers"], maps["header_env"])
    timeout = entry.get("timeout_millis", 3000)
    if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 1:
        raise _EntryError("timeout_millis", "expected an integer >= 1")
    return HttpStorageConfig(index=index, endpoint=endpoint.strip(), headers=headers, timeout_millis=timeout)


def _storage(config: Mapping[str, Any], full_payloads: bool, on_invalid: str,
             ignore_unknown: bool) -> tuple[tuple[HttpStorageConfig, ...], tuple[tuple[str, str], ...]]:
    entries = config.get("storage", [])
    if not isinstance(entries, list | tuple):
        raise ExportConfigError("atif.storage", "expected an array of tables")
    if entries and not full_payloads:
        raise ExportConfigError("atif.storage", "atif.storage_requires_full_payloads: remote trajectory storage "
                                "exports content verbatim, so it needs enable_full_payloads = true in the "
                                "observability component (or remove 'storage' to write local files)")
    out: list[HttpStorageConfig] = []
    skipped: list[tuple[str, str]] = []
    for index, entry in enumerate(entries):
        path = f"atif.storage[{index}]"
        kind = entry_type(entry, path, ("http", "s3"))
        try:
            if kind == "s3":
                raise _EntryError("type", "s3 storage is not supported by this build; use type = \"http\" or "
                                          "local files (output_directory)")
            out.append(_http_storage(index, entry, ignore_unknown))
        except _EntryError as exc:
            refuse_entry(logger, f"{path}.{exc.key}", exc.message, on_invalid, skipped)
    return tuple(out), tuple(skipped)


def parse_atif_config(config: Mapping[str, Any], *, base_dir: Path | None = None, enable_full_payloads: bool = False,
                      on_invalid: str = "raise", ignore_unknown_keys: bool = False,
                      default_dir: Path | None = None) -> AtifConfig:
    """Validate and resolve an ``atif`` table (see the module docstring).

    Args:
        config: the ``[components.config.atif]`` mapping.
        base_dir: directory for a relative ``output_directory``; the working directory when omitted (CFG-83).
        enable_full_payloads: the observability component's key (required by ``storage``, FMT-30).
        on_invalid: ``"raise"`` (default) or ``"skip"`` for invalid values inside one ``storage`` entry.
        ignore_unknown_keys: accept unknown keys (the caller applied its own unknown-field policy).
        default_dir: the directory without ``output_directory``; ``$HERMES_HOME/telemetry`` when
            omitted (FMT-35: outputs default to the profile, never to the working directory).
    """
    check_on_invalid(on_invalid)
    config = check_table(config, "atif", TOP_KEYS, ignore_unknown_keys=ignore_unknown_keys)
    group_by = config.get("group_by", "agent")
    if group_by not in ("agent", "turn"):
        raise ExportConfigError("atif.group_by", "expected 'agent' or 'turn'")
    tool_definitions = config.get("tool_definitions")
    if tool_definitions is not None and (not isinstance(tool_definitions, list | tuple)
                                         or not _json_compatible(tool_definitions)):
        raise ExportConfigError("atif.tool_definitions", "expected a JSON-compatible array")
    extra = config.get("extra")
    if extra is not None and (not isinstance(extra, Mapping) or not _json_compatible(extra)):
        raise ExportConfigError("atif.extra", "expected a JSON-compatible table")
    directory = config.get("output_directory")
    if directory is not None and not isinstance(directory, str):
        raise ExportConfigError("atif.output_directory", "expected a string path")
    resolved, _ = resolve_directory(directory, base_dir=base_dir, default_dir=default_dir)
    storage, skipped = _storage(config, enable_full_payloads, on_invalid, ignore_unknown_keys)
    shared = _bool(config, "shared_definitions", False)
    if shared and storage:
        raise ExportConfigError("atif.shared_definitions", SHARED_WITH_STORAGE)
    template = config.get("filename_template", DEFAULT_TEMPLATE)
    return AtifConfig(
        enabled=_bool(config, "enabled", False),
        agent_name=_string(config, "agent_name", "hermes") or "hermes",
        agent_version=_string(config, "agent_version", None),
        model_name=_string(config, "model_name", "unknown") or "unknown",
        tool_definitions=tuple(json.loads(json.dumps(list(tool_definitions)))) if tool_definitions is not None
        else None,
        extra=json.loads(json.dumps(dict(extra))) if extra is not None else None,
        directory=resolved,
        group_by=str(group_by),
        template=FilenameTemplate.parse(template),
        include_llm_payloads=_bool(config, "include_llm_payloads", True),
        include_system_prompt=_bool(config, "include_system_prompt", False),
        include_observed_events=_bool(config, "include_observed_events", False),
        storage=storage,
        max_queue_size=_int(config, "max_queue_size", DEFAULT_QUEUE, "atif.max_queue_size") or DEFAULT_QUEUE,
        retention_days=_int(config, "retention_days", None, "atif.retention_days"),
        shared_definitions=shared,
        llm_history=_choice(config, "llm_history", ("full", "delta")),
        skipped=skipped,
    )


def output_locations(config: Mapping[str, Any], *, base_dir: Path | None = None,
                     default_dir: Path | None = None) -> list[tuple[tuple[str | int, ...], str, bool]]:
    """Where an ``atif`` table writes trajectories, for ``config explain``: ``(key path inside the
    table, resolved value, is_default)`` for ``output_directory`` and ``filename_template``."""
    out: list[tuple[tuple[str | int, ...], str, bool]] = []
    value = config.get("output_directory") if isinstance(config, Mapping) else None
    if value is None or isinstance(value, str):
        directory, is_default = resolve_directory(value, base_dir=base_dir, default_dir=default_dir)
        out.append((("output_directory",), str(directory), is_default))
    template = config.get("filename_template") if isinstance(config, Mapping) else None
    out.append((("filename_template",), DEFAULT_TEMPLATE if template is None else str(template), template is None))
    return out


_TEMPLATE_PLACEHOLDER: Final = re.compile(r"\{(session_id|date|metadata\.[A-Za-z0-9_.\-]+(?::-[A-Za-z0-9_.~\-]*)?)\}")
_TEMPLATE_SEGMENT: Final = re.compile(r"[A-Za-z0-9_.~\-]+")
_HTTP_URL: Final = url("http", "https")


def _template_problem(template: str) -> str | None:
    if "{session_id}" not in template:
        return "filename_template must contain {session_id}"
    literal = _TEMPLATE_PLACEHOLDER.sub("x", template)
    if "{" in literal or "}" in literal:
        return "filename_template has an unknown placeholder"
    if literal.startswith("/") or any(s in (".", "..") or not _TEMPLATE_SEGMENT.fullmatch(s)
                                      for s in literal.split("/")):
        return ("filename_template must be a relative path of '/'-separated segments of letters, digits, "
                "'-', '_', '.', '~'")
    return None


def validate_config(atif: dict[str, Any], vctx: ValidationContext) -> None:
    """The ``atif`` section's config statement: ``config validate`` and activation both run it (paths
    relative to the section). ``storage`` needs the component's ``enable_full_payloads = true``."""
    base: KeyPath = ()
    check_keys(vctx, base, atif, KEYS)
    full_payloads = getattr(vctx, "shared", {}).get("enable_full_payloads") is True
    template = atif.get("filename_template")
    if isinstance(template, str) and template.strip():
        problem = _template_problem(template)
        if problem:
            vctx.unsupported_value((*base, "filename_template"), problem)
    storage = atif.get("storage")
    if isinstance(storage, list) and storage and atif.get("shared_definitions") is True:
        vctx.error((*base, "shared_definitions"), SHARED_WITH_STORAGE, code="atif.shared_definitions_with_storage")
    if isinstance(storage, list) and storage and not full_payloads:
        vctx.error((*base, "storage"), "atif.storage requires enable_full_payloads = true",
                   code="atif.storage_requires_full_payloads")
    for index, entry in table_entries(atif, "storage", base, vctx):
        path = (*base, "storage", index)
        kind = entry.get("type")
        if kind == "http":
            extra: list[tuple[KeyPath, str]] = []
            if "endpoint" in entry and _HTTP_URL(entry["endpoint"]):
                extra.append(((*path, "endpoint"), "expected an http/https URL"))
            check_entry(vctx, path, entry, HTTP_STORAGE, ("type", "endpoint"), extra)
        else:
            check_entry(vctx, path, entry, S3_STORAGE, ("type", "bucket"))
