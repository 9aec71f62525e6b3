"""Cheap size estimates of queued items, for the byte bound of the queues between threads.

A :class:`~hermes_pipeline.export.writer.BoundedWriter` bounds its queue by item count and by the estimated
bytes of what it holds: with real payloads (kilobyte tool results, LLM requests carrying the history and the
tool schemas, values of up to ``max_value_chars`` characters from the Hermes bridge) a queue full by count
could hold gigabytes. The estimate is paid on the thread that queues (the agent's thread for the publication
queue), so it is never a walk of the whole value: :func:`value_bytes` looks at no more than a fixed number of
values (:data:`BUDGET`) and extrapolates the rest of a container from the part it saw (a long message history:
its first messages, times the length of the list). It counts characters of strings (a compact ``str`` holds
about one byte per ASCII character), a slot per container entry and a flat amount per other value; objects
shared by several items (the history one LLM call shares with the next) are counted for each of them, so the
estimate errs on the high side, never by a factor of the history's length. Where the host already counted the
text a record's containers hold (an LLM call's request and response, :data:`COUNTED_TEXT`), the record is sized by
that count instead of a look (:func:`held_bytes`): the whole text, not the part a look would reach.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from .events import ScopeEvent

__all__ = ["BUDGET", "COUNTED_TEXT", "ITEM_BYTES", "arguments_bytes", "event_bytes", "fields_bytes", "held_bytes",
           "payload_bytes", "value_bytes"]

ITEM_BYTES: Final = 200
"""What one queued item costs beyond its strings and containers: the record tuple or event object, its ids,
timestamps and numbers."""
BUDGET: Final = 32
"""The most values :func:`value_bytes` looks at for one item (a few microseconds at worst)."""
FIELD_BUDGET: Final = 4
"""The most values :func:`fields_bytes` looks at inside one container field of a hook record."""
SLOT_BYTES: Final = 16
"""One entry of a list, tuple or dict (its pointers)."""
SCALAR_BYTES: Final = 32
"""A number, ``None``, a boolean or any other leaf object."""

_SCALARS: Final = frozenset({int, float, bool, type(None)})


def value_bytes(value: Any, budget: int = BUDGET) -> int:
    """The estimated bytes of ``value`` (see the module docstring); never raises, looks at ``budget`` values
    at most."""
    try:
        return _size(value, [budget if budget > 1 else 1])
    except Exception:  # an odd mapping whose values() fails: counted as a leaf, never an error on the caller
        return SCALAR_BYTES


def _size(value: Any, left: list[int]) -> int:
    """The estimate of one value, ``left[0]`` the values still to look at (shared by the whole walk). A string
    or scalar entry is sized in the loop (no call per leaf; the same budget and extrapolation rules as for a
    container entry), a container entry by a call."""
    kind = type(value)
    if kind is str or kind is bytes:
        return len(value)
    if kind is dict:
        items: Any = value.values()
    elif kind is list or kind is tuple:
        items = value
    elif kind in _SCALARS:
        return SCALAR_BYTES
    elif isinstance(value, dict):  # a dict subclass (the host's read-only views): a Mapping, without the ABC check
        items = value.values()
    elif isinstance(value, str | bytes | bytearray):  # (never a dict: the order of these two tests is free)
        return len(value)
    elif isinstance(value, Mapping):  # any other mapping
        items = value.values()
    else:
        return SCALAR_BYTES
    count = len(items)
    seen = inner = 0
    for item in items:
        left_now = left[0]
        if left_now <= 0:
            break
        left[0] = left_now = left_now - 1
        cls = type(item)
        if cls is str:
            part = len(item)
        elif cls in _SCALARS:
            part = SCALAR_BYTES
        else:
            part = _size(item, left)
            left_now = left[0]
        if left_now <= 0 and seen:  # the budget ran out inside this one: the entries seen whole stand for it
            break
        inner += part
        seen += 1
    if seen < count:  # the budget ran out: the unseen entries are taken to be like the seen ones
        inner = inner * count // seen if seen else count * SCALAR_BYTES
    return count * SLOT_BYTES + inner


def arguments_bytes(value: Any) -> int:
    """The estimated bytes of a tool call's arguments, on the agent's thread for every tool call: the length of
    each string value of a flat dict (a path, a command, a file's new content) without a call per value; other
    values by :func:`value_bytes` with a small budget."""
    if type(value) is not dict:
        return value_bytes(value, 8)
    return len(value) * SLOT_BYTES + fields_bytes(value.values(), 8)


def payload_bytes(payload: Mapping[str, Any]) -> int:
    """The estimated bytes of a hook's payload dict (:func:`fields_bytes` of its values), plus the request's text
    where the host already counted it (``request_char_count`` of ``pre_api_request``: the characters of the
    messages and system prompt that the sanitized ``request`` copies, deeper than a small look reaches)."""
    return len(payload) * SLOT_BYTES + fields_bytes(payload.values()) \
        + counted_chars(payload.get("request_char_count"))


def fields_bytes(fields: Iterable[Any], budget: int = FIELD_BUDGET) -> int:
    """The estimated bytes of a hook's fields (or a dict's values), on the agent's thread for every record: each
    string by its length, each container by :func:`value_bytes` with a small ``budget`` (an LLM call's history:
    its first message times the length of the list), never a walk of the whole record. An empty list, tuple or
    dict is 0 without a look (what :func:`value_bytes` gives it)."""
    size = 0
    start = budget if budget > 1 else 1
    for item in fields:
        kind = type(item)
        if kind is str:
            size += len(item)
        elif kind in _SCALARS:
            size += SCALAR_BYTES
        elif not item and (kind is list or kind is dict or kind is tuple):
            continue
        else:
            try:
                size += _size(item, [start])
            except Exception:  # see value_bytes
                size += SCALAR_BYTES
    return size


COUNTED_TEXT: Final = {
    "pre_api_request": ("request_char_count", ("conversation_history", "request_messages", "request")),
    "post_api_request": ("assistant_content_chars", ("response",)),
}
"""Hooks whose host states the characters of the text some of their container fields hold: ``hook -> (the field
stating the count, the fields holding that text)``. An LLM request's messages (its history, the request's message
list and the sanitized ``request`` copying them) hold the text ``request_char_count`` counts (every message's text
and the system prompt); a response's sanitized copy holds the content ``assistant_content_chars`` counts. Those
fields are sized by :func:`held_bytes` (no look inside); the others as :func:`fields_bytes` sizes them."""


def held_bytes(value: Any, chars: int) -> int:
    """The estimated bytes of a field holding text the host counted (``chars``, see :data:`COUNTED_TEXT`): a slot
    per entry of a list, tuple or dict plus the counted text, without a look inside (the look would reach only a
    few values of it anyway); 0 for an empty one; anything else as :func:`fields_bytes` sizes it."""
    kind = type(value)
    if kind is list or kind is dict or kind is tuple:
        return len(value) * SLOT_BYTES + chars if value else 0
    return fields_bytes((value,))


def counted_chars(counted: Any) -> int:
    """``request_char_count`` as a size: the characters the host counted, or 0 for anything but a positive int."""
    return counted if type(counted) is int and counted > 0 else 0


def event_bytes(event: ScopeEvent) -> int:
    """The estimated bytes of a queued scope event: its payload (``data``: the length of each top-level string, a
    small-budget look at each container, as for a tool call's arguments) plus :data:`ITEM_BYTES` for the rest.

    The start a scope's end carries is not counted again: it was counted when it was queued (and the end of a
    start that a sink already wrote keeps at most one start alive per queued end). Estimated once per event and
    kept on it (``ScopeEvent.nbytes``): an event handed to several sinks is not looked at again."""
    size = event.nbytes
    if size < 0:  # the first queue to ask estimates it; the other sinks' queues reuse it (events are immutable)
        data = event.data
        size = event.nbytes = ITEM_BYTES + (0 if data is None else arguments_bytes(data))
    return size
