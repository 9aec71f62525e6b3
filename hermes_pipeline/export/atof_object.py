"""The ATOF 0.1 object of a scope event: the raw event form, with string UUIDs and RFC 3339 timestamps.

Both the ATOF lines (:mod:`hermes_pipeline.sinks.atof.encoder` starts each line from it, then applies its
format: content gate, LLM-history delta, definitions by reference, ``field_name_policy``) and the
``extra.observed_events`` of ATIF trajectories (the raw events of the trajectory, spec 04 FMT-46) carry
it, so it lives here, below both sinks (a sink never imports another sink). It runs on an exporter's
worker thread, never on the hook caller's.
"""

from __future__ import annotations

from typing import Any, Final

from .events import SCOPE, ScopeEvent
from .ids import rfc3339_us, uuid_str

__all__ = ["ATOF_VERSION", "atof_object"]

ATOF_VERSION: Final = "0.1"


def atof_object(event: ScopeEvent) -> dict[str, Any]:
    """The ATOF 0.1 object of ``event``, with the content gate open and the full LLM history.

    Keys follow the order of spec 04 §6.1; ``data``, ``data_schema``, ``metadata`` and
    ``category_profile`` are always present (``null`` when empty, FMT-4). The returned dict is
    new, but ``data`` / ``metadata`` / ``category_profile`` are the event's own objects: copy
    before changing them.
    """
    parent = event.parent_uuid
    if event.kind == SCOPE:  # one constant-keys literal: the common case
        return {"kind": SCOPE, "scope_category": event.phase, "atof_version": ATOF_VERSION,
                "uuid": uuid_str(event.uuid), "parent_uuid": uuid_str(parent) if parent is not None else None,
                "timestamp": rfc3339_us(event.timestamp_us), "name": event.name,
                "attributes": list(event.attributes), "category": event.category,
                "category_profile": event.profile, "data": event.data, "data_schema": None,
                "metadata": event.metadata}
    doc: dict[str, Any] = {"kind": event.kind, "atof_version": ATOF_VERSION, "uuid": uuid_str(event.uuid),
                           "parent_uuid": uuid_str(parent) if parent is not None else None,
                           "timestamp": rfc3339_us(event.timestamp_us), "name": event.name}
    if event.category is not None:
        doc["category"] = event.category
    doc["category_profile"] = event.profile
    doc["data"] = event.data
    doc["data_schema"] = None
    doc["metadata"] = event.metadata
    return doc
