"""The ``full`` projection and what it shares with ``openinference`` (spec 04 §4.5 FMT-69, §4.6 FMT-70).

``full`` is the complete hermes_pipeline view under ``hermes_pipeline.*`` keys (the join keys with
ATOF and ATIF); ``openinference`` uses the Arize OpenInference key names. Both name a span after
the ATOF ``name``, use ``CLIENT`` for llm / tool / retriever / embedder / reranker scopes, carry the
``hermes.*`` attributes of §4.4, and turn marks into span events (``mark_projection = "event"``)
or zero-length child spans (``"tool"``), see :func:`mark_attributes`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ...export.content import CONTENT_FIELDS, canonical_json, request_history
from ...export.events import ScopeEvent
from ...export.ids import uuid_str
from .attrs import attr_value, hermes_meta, put, status_error, summarize_data
from .record import SpanKind
from .state import OpenScope, Options

CLIENT_CATEGORIES: Final = frozenset({"llm", "tool", "retriever", "embedder", "reranker"})


def span_kind(category: str | None) -> SpanKind:
    """``CLIENT`` for llm / tool / retriever / embedder / reranker scopes, ``INTERNAL`` otherwise."""
    return SpanKind.CLIENT if category in CLIENT_CATEGORIES else SpanKind.INTERNAL


def _flat(value: Any) -> Any:
    """A data value as an attribute: scalars keep their type, objects and arrays become JSON strings."""
    if isinstance(value, dict | list | tuple):
        return canonical_json(value)
    return attr_value(value)


def turn_outcome(end: ScopeEvent, error: str | None) -> str:
    """``hermes.turn.outcome`` of an ``agent.run`` end: ``completed`` / ``interrupted`` / ``failed``."""
    if (end.data or {}).get("interrupted") or error == "cancelled":
        return "interrupted"
    return "failed" if error is not None else "completed"


def hermes_extras(attrs: dict[str, Any], scope: OpenScope, end: ScopeEvent, opt: Options) -> None:
    """The §4.4 ``hermes.*`` attributes shared by ``full`` and ``openinference``."""
    start = scope.start
    hermes_meta(attrs, start.metadata, end.metadata)
    attrs["hermes.trajectory_id"] = scope.trajectory_id
    error = status_error(end.metadata)
    if start.name == "agent.run":
        attrs["hermes.turn.outcome"] = turn_outcome(end, error)
        attrs["hermes.sampling_rate"] = float(opt.sampling_rate)
    elif start.category == "llm":
        attrs["hermes.llm.attempt"] = scope.attempt or 1
        err = (end.data or {}).get("error")
        if isinstance(err, Mapping) and err.get("retry_count") is not None:
            put(attrs, "hermes.llm.retry_count", err.get("retry_count"))
        usage = (end.data or {}).get("usage")
        if isinstance(usage, Mapping):
            cached = usage.get("cache_read_tokens")
            attrs["hermes.llm.cache_hit"] = isinstance(cached, int) and cached > 0
    elif start.category == "agent" and start.metadata.get("hermes.scope_role") == "subagent":
        put(attrs, "hermes.subagent.role", (start.data or {}).get("child_role"))
        put(attrs, "hermes.subagent.status", (end.data or {}).get("child_status"))
    if not opt.gate_open:
        api_mode = start.metadata.get("hermes.api_mode")
        summarize_data(attrs, start.data, opt.summary_mode, api_mode)
        summarize_data(attrs, end.data, opt.summary_mode, api_mode)


def _data_attrs(attrs: dict[str, Any], phase: str, data: Mapping[str, Any] | None, gate_open: bool) -> None:
    for key, value in (data or {}).items():
        if value is None or (key in CONTENT_FIELDS and not gate_open):
            continue
        coerced = _flat(value)
        if coerced is not None:
            attrs[f"hermes_pipeline.{phase}.data.{key}"] = coerced


def _meta_attrs(attrs: dict[str, Any], phase: str, meta: Mapping[str, Any] | None) -> None:
    for key, value in (meta or {}).items():
        if not key.startswith("hermes."):
            put(attrs, f"hermes_pipeline.{phase}.metadata.{key}", value)


def full_span(scope: OpenScope, end: ScopeEvent, opt: Options) -> tuple[str, SpanKind, dict[str, Any]]:
    """``(name, kind, attributes)`` of a finished scope in the ``full`` projection (FMT-69)."""
    start = scope.start
    attrs: dict[str, Any] = {"hermes_pipeline.uuid": uuid_str(start.uuid)}
    if start.parent_uuid is not None:
        attrs["hermes_pipeline.parent_uuid"] = uuid_str(start.parent_uuid)
    attrs["hermes_pipeline.category"] = start.category or "unknown"
    attrs["hermes_pipeline.attributes"] = canonical_json(list(start.attributes))
    _data_attrs(attrs, "start", start.data, opt.gate_open)
    if start.category == "llm" and opt.gate_open and \
            request_history((start.data or {}).get("request"), start.metadata.get("hermes.api_mode")) is not None:
        attrs["hermes_pipeline.start.data.messages_offset"] = 0  # full history on every start (FMT-25)
    _data_attrs(attrs, "end", end.data, opt.gate_open)
    _meta_attrs(attrs, "start", start.metadata)
    _meta_attrs(attrs, "end", end.metadata)
    profile = {**(start.profile or {}), **(end.profile or {})}
    put(attrs, "hermes_pipeline.model_name", profile.get("model_name"))
    put(attrs, "hermes_pipeline.tool_call_id", profile.get("tool_call_id"))
    annotation = (end.profile or {}).get("tool_result_annotation")
    if annotation is not None and status_error(end.metadata) is None:
        attrs["hermes_pipeline.tool.result.annotation"] = canonical_json(annotation)
    err = (end.data or {}).get("error")
    if isinstance(err, Mapping) and isinstance(err.get("type"), str):
        attrs["hermes.error.class"] = err["type"]
    hermes_extras(attrs, scope, end, opt)
    return start.name, span_kind(start.category), attrs


def mark_attributes(mark: ScopeEvent, gate_open: bool) -> dict[str, Any]:
    """Attributes of a mark as a span event or zero-length span in ``full`` / ``openinference`` (FMT-69)."""
    attrs: dict[str, Any] = {"hermes_pipeline.mark.uuid": uuid_str(mark.uuid)}
    if mark.parent_uuid is not None:
        attrs["hermes_pipeline.mark.parent_uuid"] = uuid_str(mark.parent_uuid)
    if mark.category is not None:
        attrs["hermes_pipeline.mark.category"] = mark.category
    for key, value in (mark.data or {}).items():
        if value is None or (key in CONTENT_FIELDS and not gate_open):
            continue
        coerced = _flat(value)
        if coerced is not None:
            attrs[f"hermes_pipeline.mark.data.{key}"] = coerced
    return attrs


def apply_mappings(attrs: dict[str, Any], mappings: tuple[tuple[str, str], ...]) -> None:
    """``attribute_mappings``: copy each present attribute under its alias."""
    for key, alias in mappings:
        if key in attrs:
            attrs[alias] = attrs[key]
