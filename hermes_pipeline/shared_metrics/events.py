"""Metrics lifecycle events: the private ATOF-shaped contract between accounting and subscriber (SM-12..16).

The accounting (:mod:`.accounting`) turns the stream's facts into
these events; the subscriber of the same profile runtime accepts
an event only if :func:`check_event` finds nothing wrong with it. The vocabulary is closed: an
unknown event name, a metadata key other than the two (three) allowed, a foreign runtime id, a
``data`` key outside the allowlist or a value outside its vocabulary rejects the event (SM-4,
SM-13, SM-15). Adding a mark or a field is a versioned change (SM-16): a new
``hermes.metrics.event.vN`` here and a new package schema.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final, NamedTuple

from . import vocab as v

EVENT_SCHEMA_VERSION: Final = "hermes.metrics.event.v2"
SCHEMA_KEY: Final = "hermes.metrics.schema_version"
RUNTIME_KEY: Final = "hermes.relay.runtime_instance"
STATUS_KEY: Final = "otel.status_code"
ATOF_VERSION: Final = "0.1"

TASK_RUN: Final = "hermes.task_run"
MODEL_CALL: Final = "hermes.model_call"
TOOL_CALL: Final = "hermes.tool_call"
CLIENT_ACTIVE: Final = "hermes.client.active"
CLIENT_FIRST_USABLE: Final = "hermes.client.first_usable"
TOOL_APPROVAL: Final = "hermes.tool_approval"
SKILL_LIFECYCLE: Final = "hermes.skill.lifecycle"
SKILL_LOAD: Final = "hermes.skill.load"
SETUP_STARTED: Final = "hermes.setup.started"
SETUP_FINISHED: Final = "hermes.setup.finished"

SCOPES: Final = {TASK_RUN: "function", MODEL_CALL: "llm", TOOL_CALL: "tool"}
MARKS: Final = frozenset({CLIENT_ACTIVE, CLIENT_FIRST_USABLE, TOOL_APPROVAL, SKILL_LIFECYCLE, SKILL_LOAD,
                          SETUP_STARTED, SETUP_FINISHED})


class MetricsEvent(NamedTuple):
    """One metrics lifecycle event in the ATOF envelope of spec 04 §2.1 (SM-12).

    ``kind`` is ``scope`` or ``mark``; ``scope_category`` is ``start`` / ``end`` for scopes and
    ``None`` for marks. ``timestamp`` is the time of the fact counted (the counter
    period is its UTC date). Immutable (a named tuple: cheap to create).
    """

    kind: str
    name: str
    scope_category: str | None
    uuid: str
    parent_uuid: str | None
    timestamp: datetime
    category: str | None
    category_profile: Mapping[str, Any] | None
    data: Mapping[str, Any] | None
    metadata: Mapping[str, Any]
    atof_version: str = ATOF_VERSION


_PREFIX: Final = str(uuid.uuid4())[:24]
_counter = itertools.count(1)


def new_uuid() -> str:
    """A unique event / scope id in UUID text form (the subscriber pairs scope start and end by it).

    A random per-process prefix plus a counter: unique within the process (these events never
    leave it) at a fraction of the cost of :func:`uuid.uuid4`.
    """
    return f"{_PREFIX}{next(_counter):012x}"


def metadata(runtime_id: str, status: str | None = None) -> dict[str, str]:
    """The exact event metadata: schema version and runtime id, nothing else (SM-13)."""
    meta = {SCHEMA_KEY: EVENT_SCHEMA_VERSION, RUNTIME_KEY: runtime_id}
    if status is not None:
        meta[STATUS_KEY] = status
    return meta


def scope_event(name: str, phase: str, scope_id: str, when: datetime, runtime_id: str, *,
                parent: str | None = None, data: Mapping[str, Any] | None = None,
                status: str | None = None) -> MetricsEvent:
    """A ``hermes.task_run`` / ``hermes.model_call`` / ``hermes.tool_call`` start or end event."""
    profile = {"model_name": "unknown"} if name == MODEL_CALL else None
    return MetricsEvent("scope", name, phase, scope_id, parent, when, SCOPES.get(name), profile, data,
                        metadata(runtime_id, status))


def mark_event(name: str, when: datetime, runtime_id: str, data: Mapping[str, Any] | None = None) -> MetricsEvent:
    """A shared-metrics mark (``hermes.client.active``, ``hermes.tool_approval``, ...)."""
    return MetricsEvent("mark", name, None, new_uuid(), None, when, None, None, data, metadata(runtime_id))


# --------------------------------------------------------------------------- validation

_ENUM: Final = {
    "entrypoint": v.ENTRYPOINTS, "execution_surface": v.EXECUTION_SURFACES, "end_reason": v.END_REASONS,
    "termination": v.TERMINATIONS, "duration_bucket": v.DURATION_BUCKETS,
    "model_call_count_bucket": v.COUNT_BUCKETS, "tool_call_count_bucket": v.COUNT_BUCKETS,
    "tool_category": v.TOOL_CATEGORIES, "approval_outcome": v.TOOL_APPROVAL_OUTCOMES,
    "latency_bucket": v.LATENCY_BUCKETS, "attribution": v.ATTRIBUTIONS, "action": v.SKILL_ACTIONS,
    "provenance": v.SKILL_PROVENANCES, "reuse_state": v.REUSE_STATES, "post_patch_state": v.POST_PATCH_STATES,
    "use_count_bucket": v.COUNT_BUCKETS, "mode": v.SETUP_MODES, "failure_stage": v.SETUP_FAILURE_STAGES,
}
"""Vocabulary of each key whose meaning does not depend on the event."""

# (name, phase) -> (required keys, optional keys, per-event vocabularies)
_DATA: Final[dict[tuple[str, str | None], tuple[frozenset[str], frozenset[str], dict[str, frozenset[str]]]]] = {
    (TASK_RUN, "start"): (frozenset({"entrypoint", "execution_surface"}), frozenset(), {}),
    (TASK_RUN, "end"): (frozenset({"outcome", "end_reason", "termination", "duration_bucket",
                                   "model_call_count_bucket", "tool_call_count_bucket", "retry_count_bucket"}),
                        frozenset({"duration_ms"}),
                        {"outcome": v.TASK_OUTCOMES, "retry_count_bucket": v.COUNT_BUCKETS}),
    (MODEL_CALL, "start"): (frozenset(), frozenset(), {}),
    (MODEL_CALL, "end"): (frozenset({"model", "provider"}), frozenset({"duration_ms"}), {}),
    (TOOL_CALL, "start"): (frozenset(), frozenset(), {}),
    (TOOL_CALL, "end"): (frozenset({"tool_category", "outcome", "approval_outcome", "latency_bucket",
                                    "retry_count_bucket"}), frozenset(),
                         {"outcome": v.TOOL_OUTCOMES, "retry_count_bucket": v.TOOL_RETRY_BUCKETS}),
    (TOOL_APPROVAL, None): (frozenset({"attribution", "outcome"}), frozenset(), {"outcome": v.APPROVAL_OUTCOMES}),
    (SKILL_LIFECYCLE, None): (frozenset({"action", "provenance"}), frozenset(), {}),
    (SKILL_LOAD, None): (frozenset({"provenance", "reuse_state", "post_patch_state", "use_count_bucket"}),
                         frozenset(), {}),
    (CLIENT_ACTIVE, None): (frozenset(), frozenset(), {}),
    (CLIENT_FIRST_USABLE, None): (frozenset(), frozenset(), {}),
    (SETUP_STARTED, None): (frozenset({"mode"}), frozenset(), {}),
    (SETUP_FINISHED, None): (frozenset({"mode", "outcome", "failure_stage"}), frozenset(),
                             {"outcome": v.SETUP_OUTCOMES}),
}


def check_event(event: object, runtime_id: str) -> str | None:
    """Why ``event`` must be rejected by the subscriber of runtime ``runtime_id``; ``None`` if it is valid."""
    if not isinstance(event, MetricsEvent):
        return "not a metrics event"
    meta = event.metadata
    if not isinstance(meta, Mapping):
        return "metadata is not an object"
    keys = set(meta)
    if not {SCHEMA_KEY, RUNTIME_KEY} <= keys or keys - {SCHEMA_KEY, RUNTIME_KEY, STATUS_KEY}:
        return "metadata keys are not exactly the allowed set"
    if meta[SCHEMA_KEY] != EVENT_SCHEMA_VERSION:
        return "unsupported event schema version"
    if meta[RUNTIME_KEY] != runtime_id:
        return "event of another runtime instance"
    if STATUS_KEY in meta and meta[STATUS_KEY] not in ("OK", "ERROR"):
        return "invalid otel.status_code"
    if event.kind == "scope":
        if event.name not in SCOPES or event.scope_category not in ("start", "end"):
            return "unknown scope or scope category"
        if event.category != SCOPES[event.name]:
            return "wrong scope category"
        expected_profile = {"model_name": "unknown"} if event.name == MODEL_CALL else None
        if (dict(event.category_profile) if event.category_profile is not None else None) != expected_profile:
            return "unexpected category_profile"
        phase: str | None = event.scope_category
    elif event.kind == "mark":
        if event.name not in MARKS or event.scope_category is not None:
            return "unknown mark"
        if event.category is not None or event.category_profile is not None:
            return "marks carry no category"
        phase = None
    else:
        return "unknown event kind"
    if not isinstance(event.uuid, str) or not event.uuid:
        return "missing uuid"
    data = event.data
    if isinstance(data, Mapping):
        try:  # data already proven valid once is valid again (values are hashable enum strings)
            key = (event.name, phase, "duration_ms" in data,
                   tuple(sorted((k, v) for k, v in data.items() if k != "duration_ms")))
        except TypeError:
            key = None
        if key is not None and key in _VALID and v.is_count(data.get("duration_ms", 0)):
            return None
        problem = _check_data(event.name, phase, data)
        if problem is None and key is not None and len(_VALID) < _VALID_LIMIT:
            _VALID.add(key)
        return problem
    return _check_data(event.name, phase, data)


_VALID: set[tuple[Any, ...]] = set()
_VALID_LIMIT: Final = 8192


def _check_data(name: str, phase: str | None, data: Mapping[str, Any] | None) -> str | None:
    required, optional, local = _DATA[(name, phase)]
    if data is None:
        return None if not required else "missing data"
    if not isinstance(data, Mapping):
        return "data is not an object"
    keys = set(data)
    if keys - required - optional:
        return "data key outside the allowlist"
    if required - keys:
        return "missing data key"
    for key, value in data.items():
        if key == "duration_ms":
            if not v.is_count(value):
                return "duration_ms is not an integer >= 0"
            continue
        if key == "model":
            ok = v.valid_identifier(value, v.MAX_MODEL_CHARS)
        elif key == "provider":
            ok = v.valid_identifier(value, v.MAX_PROVIDER_CHARS)
        else:
            allowed = local.get(key) or _ENUM.get(key)
            ok = allowed is not None and isinstance(value, str) and value in allowed
        if not ok:
            return f"value of {key!r} outside its vocabulary"
    if name == SKILL_LOAD:
        reuse, post = data["reuse_state"], data["post_patch_state"]
        if (reuse == "first_use") != (post == "not_applicable"):
            return "inconsistent reuse_state and post_patch_state"
    return None
