"""Attribute helpers shared by the OTLP projections (spec 04 §4.1, §4.2 tables, §4.4, FMT-60, FMT-61, FMT-68).

Pure functions on scope-event values, used on the span-builder thread only: attribute value
coercion (FMT-60), the provider mapping, ``hermes.*`` metadata names, content summaries as
``hermes.input.*`` / ``hermes.output.*`` (FMT-31), metadata promotion (FMT-61), span-event
attributes of the allowlisted marks (FMT-68) and the deterministic span IDs (FMT-56).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any, Final

from ...export.classify import tool_category as tool_category  # SM-25: by toolset, shared with shared metrics
from ...export.content import canonical_json, source_text, summary_values
from ...export.ids import uuid_str

_MASK64: Final = (1 << 64) - 1
_INT64: Final = (-(1 << 63), (1 << 63) - 1)

PROVIDERS: Final[Mapping[str, str]] = {
    "openai": "openai", "anthropic": "anthropic", "gemini": "gcp.gemini", "google": "gcp.gemini",
    "vertex": "gcp.vertex_ai", "vertex_ai": "gcp.vertex_ai", "bedrock": "aws.bedrock", "azure": "azure.ai.openai",
    "azure-openai": "azure.ai.openai", "deepseek": "deepseek", "mistral": "mistral_ai", "xai": "x_ai",
    "groq": "groq", "cohere": "cohere", "perplexity": "perplexity",
}
"""Hermes provider (lowercased) → ``gen_ai.provider.name`` (§4.2); anything else passes through."""

META_NAMES: Final[Mapping[str, str]] = {
    "hermes.span_kind": "hermes.span_kind", "hermes.platform": "hermes.platform",
    "hermes.session.segment": "hermes.session.segment",
    "hermes.session.segment_reason": "hermes.session.segment_reason", "hermes.scope_role": "hermes.scope_role",
    "hermes.parent_session_id": "hermes.parent_session.id", "hermes.turn_id": "hermes.turn.id",
    "hermes.task_id": "hermes.task.id", "hermes.api_request_id": "hermes.api_request.id",
    "hermes.api_mode": "hermes.api_mode", "hermes.tool.status": "hermes.tool.status",
    "hermes.toolset": "hermes.toolset", "hermes.middleware.changed": "hermes.middleware.changed",
    "hermes.middleware.sources": "hermes.middleware.sources",
    "process.exit.code": "process.exit.code", "hermes.tool.command_failed": "hermes.tool.command_failed",
    "hermes.tool.command_timed_out": "hermes.tool.command_timed_out",
}
"""ATOF metadata keys (FMT-13) → the §4.4 span attribute names (FMT-67)."""

RESERVED_PREFIXES: Final = ("gen_ai.", "error.", "exception.", "server.", "service.", "session.", "user.", "input.",
                            "output.", "llm.", "tool.", "tool_call.", "openinference.", "hermes_pipeline.", "hermes.")
"""Metadata namespaces never promoted by ``promote_metadata_prefixes`` (FMT-61)."""

GENAI_MARKS: Final = frozenset({"hermes.approval.request", "hermes.approval.response", "hermes.human_input.request",
                                "hermes.human_input.resolved", "hermes.skill.load", "hermes.skill.lifecycle",
                                "hermes.compaction"})
"""Marks that become span events in the ``gen_ai`` projection (FMT-65)."""

INPUT_FIELDS: Final = ("user_message", "request", "arguments", "child_goal")
OUTPUT_FIELDS: Final = ("final_response", "response", "result", "child_summary")



def span_id(uuid: int) -> int:
    """The low-order 8 bytes of a scope UUID; SHA-256 of the UUID string when those are all zero (FMT-56)."""
    low = uuid & _MASK64
    if low:
        return low
    digest = hashlib.sha256(uuid_str(uuid).encode("ascii")).digest()
    return int.from_bytes(digest[-8:], "big") or 1


def provider_name(provider: Any) -> str:
    """``gen_ai.provider.name`` of a Hermes provider string (§4.2 provider mapping)."""
    if not isinstance(provider, str) or not provider.strip():
        return "unknown"
    return PROVIDERS.get(provider.strip().lower(), provider)


def attr_value(value: Any) -> Any:
    """``value`` as an OTel attribute value (FMT-60), or ``None`` to omit it.

    Strings, booleans, 64-bit integers and doubles pass; homogeneous lists of those become
    tuples; anything structured (objects, mixed lists) becomes canonical JSON.
    """
    if value is None:
        return None
    kind = type(value)
    if kind is str or kind is bool or kind is float:
        return value
    if kind is int:
        return value if _INT64[0] <= value <= _INT64[1] else str(value)
    if kind in (list, tuple):
        if not value:
            return ()
        first = type(value[0])
        if first in (str, bool, float, int) and all(type(v) is first for v in value):
            if first is not int or all(_INT64[0] <= v <= _INT64[1] for v in value):
                return tuple(value)
        return canonical_json(list(value))
    if isinstance(value, str | bool | int | float):
        return value
    return canonical_json(value)


def put(attrs: dict[str, Any], key: str, value: Any) -> None:
    """Set ``attrs[key]`` to the coerced ``value`` unless it is ``None``."""
    coerced = attr_value(value)
    if coerced is not None:
        attrs[key] = coerced


_meta_plans: dict[tuple[str, ...], tuple[tuple[str, str], ...]] = {}
"""Per tuple of metadata keys (each scope kind writes its keys in one order), the ``(key, attribute name)`` pairs of
:data:`META_NAMES` among them, in that order: a span looks at the keys that map, not at every key."""
_META_PLANS_MAX: Final = 512


def hermes_meta(attrs: dict[str, Any], *metas: Mapping[str, Any] | None) -> None:
    """Map the ``hermes.*`` metadata keys of the events (later wins) onto §4.4 attribute names."""
    plans = _meta_plans
    for meta in metas:
        if meta:
            keys = tuple(meta)
            plan = plans.get(keys)
            if plan is None:
                if len(plans) >= _META_PLANS_MAX:
                    plans.clear()
                plan = plans[keys] = tuple((key, META_NAMES[key]) for key in keys if key in META_NAMES)
            for key, name in plan:
                value = meta[key]
                kind = type(value)
                if kind is str or kind is bool or kind is float:  # what attr_value keeps as it is, inlined
                    attrs[name] = value
                else:
                    put(attrs, name, value)


SUMMARY_NAMES: Final[Mapping[str, tuple[str, str, str]]] = {
    side: (f"hermes.{side}.preview", f"hermes.{side}.chars", f"hermes.{side}.sha256") for side in ("input", "output")}
"""The attribute names of a side's summary (FMT-31, §4.4): preview, chars, sha256."""


def summarize(attrs: dict[str, Any], side: str, key: str, value: Any, mode: str, api_mode: Any = None) -> None:
    """``hermes.<side>.preview`` / ``.chars`` / ``.sha256`` for a content field (FMT-31/32); nothing for ``off``."""
    if value is None or mode == "off":
        return
    summarize_text(attrs, SUMMARY_NAMES[side], source_text(key, value, api_mode if isinstance(api_mode, str) else None),
                   mode)


def summarize_text(attrs: dict[str, Any], names: tuple[str, str, str], text: str, mode: str) -> str | None:
    """The summary of a field's source ``text`` (FMT-32) under ``names`` (:data:`SUMMARY_NAMES`), for a ``mode`` other
    than ``off``; returns the preview (``None`` for ``digest``)."""
    preview, chars, digest = summary_values(text, mode)
    if preview is not None:
        attrs[names[0]] = preview
    attrs[names[1]] = chars
    attrs[names[2]] = digest
    return preview


def summarize_data(attrs: dict[str, Any], data: Mapping[str, Any] | None, mode: str, api_mode: Any = None) -> None:
    """Summaries of the input-side and output-side content fields present in ``data`` (FMT-31)."""
    if not data:
        return
    for key in INPUT_FIELDS:
        if key in data:
            summarize(attrs, "input", key, data[key], mode, api_mode)
    for key in OUTPUT_FIELDS:
        if key in data:
            summarize(attrs, "output", key, data[key], mode, api_mode)


def promote(attrs: dict[str, Any], prefixes: Iterable[str], metas: Iterable[Mapping[str, Any] | None],
            problems: dict[str, int]) -> None:
    """``promote_metadata_prefixes`` (FMT-61): copy matching, non-reserved metadata keys (end wins over start).

    Object and null values are refused and counted in ``problems`` under
    ``otel.metadata_promotion_value_unsupported.<key>``.
    """
    prefixes = tuple(prefixes)
    if not prefixes:
        return
    for meta in metas:
        for key, value in (meta or {}).items():
            if not key.startswith(prefixes) or key.startswith(RESERVED_PREFIXES) or key == "metadata":
                continue
            if value is None or isinstance(value, Mapping):
                name = f"otel.metadata_promotion_value_unsupported.{key}"
                problems[name] = problems.get(name, 0) + 1
                continue
            put(attrs, key, value)


def status_error(meta: Mapping[str, Any] | None) -> str | None:
    """``error.type`` of an end event whose ``otel.status_code`` is ``ERROR`` (FMT-58, FMT-66), else ``None``."""
    if not meta or meta.get("otel.status_code") != "ERROR":
        return None
    value = meta.get("error.type")
    return value if isinstance(value, str) and value else "_OTHER"


def mark_attrs(name: str, data: Mapping[str, Any] | None, profile: Mapping[str, Any] | None,
               gate_open: bool) -> dict[str, Any]:
    """Span-event attributes of an allowlisted mark (FMT-68); gated fields only with the gate open."""
    data = data or {}
    attrs: dict[str, Any] = {}
    call_id = (profile or {}).get("tool_call_id")
    if name.startswith("hermes.approval."):
        put(attrs, "hermes.approval.surface", data.get("surface"))
        if name == "hermes.approval.request":
            put(attrs, "hermes.approval.pattern_keys", [str(k) for k in data.get("pattern_keys") or ()])
            if gate_open:
                put(attrs, "hermes.approval.command", data.get("command"))
                put(attrs, "hermes.approval.description", data.get("description"))
        else:
            put(attrs, "hermes.approval.choice", data.get("choice"))
            put(attrs, "hermes.approval.outcome", data.get("outcome"))
            put(attrs, "hermes.approval.decided_by", data.get("decided_by"))
        put(attrs, "gen_ai.tool.call.id", call_id)
    elif name.startswith("hermes.human_input."):
        put(attrs, "hermes.human_input.kind", data.get("kind"))
        put(attrs, "hermes.human_input.request_id", data.get("request_id"))
        if name == "hermes.human_input.request":
            if gate_open:
                put(attrs, "hermes.human_input.prompt", data.get("prompt"))
        else:
            put(attrs, "hermes.human_input.outcome", data.get("outcome"))
    elif name == "hermes.skill.load":
        put(attrs, "hermes.skill.name", data.get("skill_name"))
        put(attrs, "hermes.skill.provenance", data.get("provenance"))
        reuse = data.get("reuse_state")
        if reuse is None and "reused" in data:
            reuse = "reuse_after_patch" if data.get("reuse_after_patch") else ("reused" if data.get("reused") else "new")
        put(attrs, "hermes.skill.reuse_state", reuse)
        put(attrs, "hermes.skill.use_count", data.get("use_count"))
    elif name == "hermes.skill.lifecycle":
        put(attrs, "hermes.skill.name", data.get("skill_name"))
        put(attrs, "hermes.skill.action", data.get("action"))
        put(attrs, "hermes.skill.provenance", data.get("provenance"))
    elif name == "hermes.compaction":
        attrs["hermes.compaction.rotated"] = bool(data.get("rotated"))
    return attrs
