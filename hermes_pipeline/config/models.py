"""Typed records of a validated pipeline document (spec 03 §4–§6).

Loading, layering and policy handling work on plain data (so that a warning can drop a key and
let its default apply) and check every key and value themselves; the result is then frozen into
these records. They are plain frozen dataclasses: defining validation models costs every host
start-up tens of milliseconds (the Hermes bridge opens a profile while Hermes starts) for values
that are already checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .errors import ConfigError
from .policy import Policy


@dataclass(frozen=True, slots=True)
class ComponentEntry:
    """One ``[[components]]`` entry."""

    kind: str
    enabled: bool = True
    config: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DynamicRecord:
    """One ``[[plugins.dynamic]]`` record: exactly ``manifest`` and ``config`` (CFG-22)."""

    manifest: str
    config: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PluginsTable:
    """The ``plugins`` table: ``dynamic`` records and the (unenforced) trust ``policy``."""

    dynamic: list[DynamicRecord] = field(default_factory=list)
    policy: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class PipelineDocument:
    """A validated, merged pipeline document (TOML and YAML give the same record, CFG-34)."""

    version: Literal[1] = 1
    components: list[ComponentEntry] = field(default_factory=list)
    policy: Policy = field(default_factory=Policy)
    plugins: PluginsTable | None = None

    @classmethod
    def from_data(cls, data: Mapping[str, Any], *, path: str | Path | None = None) -> PipelineDocument:
        """The record of a merged document that validation has accepted (``ConfigError`` otherwise)."""
        try:
            return _document(data)
        except (TypeError, ValueError, KeyError) as exc:  # validation before this guarantees the shape
            raise ConfigError(f"invalid document: {exc}", path=path, code="pipeline.invalid") from None


_DOCUMENT_KEYS = frozenset({"version", "components", "policy", "plugins"})


def _only(data: Mapping[str, Any], keys: frozenset[str], what: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise TypeError(f"{what}: expected a table")
    extra = set(data) - keys
    if extra:
        raise ValueError(f"{what}: unexpected key {sorted(extra)[0]!r}")
    return data


def _document(data: Mapping[str, Any]) -> PipelineDocument:
    data = _only(data, _DOCUMENT_KEYS, "document")
    version = data.get("version", 1)
    if version != 1 or type(version) is not int:
        raise ValueError(f"version: expected 1, got {version!r}")
    components = []
    for entry in data.get("components") or []:
        entry = _only(entry, frozenset({"kind", "enabled", "config"}), "components[]")
        kind, enabled, config = entry["kind"], entry.get("enabled", True), entry.get("config", {})
        if type(kind) is not str or type(enabled) is not bool or not isinstance(config, dict):
            raise TypeError(f"components[]: kind, enabled or config has the wrong type ({kind!r})")
        components.append(ComponentEntry(kind, enabled, config))
    policy = data.get("policy")
    plugins = data.get("plugins")
    table = None
    if plugins is not None:
        plugins = _only(plugins, frozenset({"dynamic", "policy"}), "plugins")
        records = []
        for record in plugins.get("dynamic") or []:
            record = _only(record, frozenset({"manifest", "config"}), "plugins.dynamic[]")
            if type(record["manifest"]) is not str or not isinstance(record.get("config", {}), dict):
                raise TypeError("plugins.dynamic[]: manifest or config has the wrong type")
            records.append(DynamicRecord(record["manifest"], record.get("config", {})))
        trust = plugins.get("policy")
        if trust is not None and not isinstance(trust, dict):
            raise TypeError("plugins.policy: expected a table")
        table = PluginsTable(records, trust)
    return PipelineDocument(1, components, Policy.from_data(policy) if policy is not None else Policy(), table)
