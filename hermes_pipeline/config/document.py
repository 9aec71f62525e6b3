"""Validation of the merged document's own keys: ``policy``, top-level keys, component entries and
the ``plugins`` table (spec 03 §4, §5, CFG-12, CFG-16, CFG-20, CFG-30)."""

from __future__ import annotations

from typing import Any, Final

from .diagnostics import Diagnostics
from .errors import ConfigError
from .keypath import KeyPath, format_path
from .merge import Merged
from .policy import LEVELS, POLICY_KEYS, Policy, ValidationContext

TOP_LEVEL_KEYS: Final = ("version", "components", "policy", "plugins")
ENTRY_KEYS: Final = ("kind", "enabled", "config")
PLUGINS_KEYS: Final = ("dynamic", "policy")
_LEVEL_TEXT: Final = "expected 'ignore', 'warn' or 'error'"


def _structural(merged: Merged, path: KeyPath, message: str) -> ConfigError:
    source, line = merged.locate(path)
    return ConfigError(message, path=source, line=line, key=format_path(path), code="pipeline.invalid")


def read_policy(merged: Merged, diagnostics: Diagnostics) -> Policy:
    """The effective global policy; invalid levels are unsupported values (default applies)."""
    raw = merged.data.get("policy", {})
    if not isinstance(raw, dict):
        raise _structural(merged, ("policy",), "'policy' must be a table")
    levels = {k: raw[k] for k in POLICY_KEYS if isinstance(raw.get(k), str) and raw[k] in LEVELS}
    policy = Policy(**levels)
    vctx = ValidationContext(component=None, policy=policy, diagnostics=diagnostics, locate=merged.locate,
                             code_prefix="plugin")
    for key in raw:
        if key not in POLICY_KEYS:
            vctx.unknown_field(("policy", key), ", ".join(POLICY_KEYS))
        elif key not in levels:
            vctx.unsupported_value(("policy", key), _LEVEL_TEXT)
    for path in vctx.drops:
        raw.pop(path[-1], None)
    return policy


def validate_document(merged: Merged, policy: Policy, diagnostics: Diagnostics) -> None:
    """Check top-level keys, component entries and ``plugins``; drop what the policy drops."""
    data = merged.data
    vctx = ValidationContext(component=None, policy=policy, diagnostics=diagnostics, locate=merged.locate,
                             code_prefix="plugin")
    for key in list(data):
        if key not in TOP_LEVEL_KEYS:
            vctx.unknown_field((key,), ", ".join(TOP_LEVEL_KEYS))
    for index, entry in enumerate(data.get("components", [])):
        kind = entry["kind"]
        evctx = ValidationContext(component=kind, policy=policy, diagnostics=diagnostics,
                                  locate=merged.locator(("components", index)),
                                  key_prefix=f"components[{index}]", code_prefix="plugin")
        for key in entry:
            if key not in ENTRY_KEYS:
                evctx.unknown_field((key,), ", ".join(ENTRY_KEYS))
        if "enabled" in entry and not isinstance(entry["enabled"], bool):
            evctx.unsupported_value(("enabled",), "expected a boolean (true or false)")
        if "config" in entry and not isinstance(entry["config"], dict):
            evctx.unsupported_value(("config",), "expected a table")
        for path in evctx.drops:
            entry.pop(str(path[0]), None)
    plugins = data.get("plugins")
    if isinstance(plugins, dict):
        for key in plugins:
            if key not in PLUGINS_KEYS:
                vctx.unknown_field(("plugins", key), ", ".join(PLUGINS_KEYS))
        if "policy" in plugins:
            source, line = merged.locate(("plugins", "policy"))
            diagnostics.warning("pipeline.trust_policy_unsupported",
                                "the Relay trust policy tables under [plugins.policy] are not enforced by "
                                "hermes_pipeline v1; integrity verification still applies",
                                field="plugins.policy", source=source, line=line)
        if "dynamic" in plugins and not isinstance(plugins["dynamic"], list):
            raise _structural(merged, ("plugins", "dynamic"), "'plugins.dynamic' must be an array of tables "
                                                              "([[plugins.dynamic]])")
    for path in vctx.drops:
        parent: Any = data
        for seg in path[:-1]:
            parent = parent.get(seg, {}) if isinstance(parent, dict) else {}
        if isinstance(parent, dict):
            parent.pop(str(path[-1]), None)
