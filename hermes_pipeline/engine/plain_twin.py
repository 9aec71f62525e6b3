"""One walk for two copies of the same provider data: the sanitized copy and a raw read-only twin (issue #29).

``post_api_request`` carries the response's tool calls twice: sanitized inside ``response`` (pass 1 of the
sanitizer, spec 01 §8.2.2) and raw inside ``assistant_message`` (a frozen view the host makes). Walking the
tool calls once for both halves the walk. :func:`plain_twin` gives, for a tree of exact JSON types, the copy
the sanitizer's plain shortcut gives (``_plain_copy``: every string scrubbed, sensitive keys redacted) and
beside it the *raw* tree rebuilt with the caller's container types (the host passes its read-only view
types, so the twin is what freezing the raw tree gives). :func:`sanitize_with_part` is :func:`sanitize`
of a value whose one container, at a fixed path of plain keys, was already copied by :func:`plain_twin`.

Exactness, by construction rather than by a guess: :func:`plain_twin` runs the same per-item rules as
``_plain_copy`` (the same key tables, the same string and scalar helpers, the same depth and item caps)
and gives up (``None``) on exactly the inputs where ``_plain_copy`` gives up, plus two more where the
raw twin would need the general freezing: a redacted key whose raw value is a container, and a container
the twin cannot rebuild from exact types. :func:`sanitize_with_part` copies the rest of the value with
``_plain_copy`` itself, the part replaced by an empty list, puts the part's copy in its place (the copy
of a container depends only on the container and its depth), and decides the fit exactly as the
sanitizer's shortcut does; anything else takes :func:`sanitize`. ``tests/engine/test_plain_twin.py`` holds
both against the general path on generated input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from .sanitize import (
    MAX_DEPTH,
    PASS1_MAX_ITEMS,
    JSONValue,
    _fits_plain,
    _NotPlain,
    _plain_copy,
    _plain_key,
    _plain_keys,
    _plain_scalar,
    _plain_str,
    _token_keys,
    payload_max_chars,
    sanitize,
)
from .scrub import REDACTED, known_clean
from .walk_context import argv_context

__all__ = ["plain_twin", "sanitize_with_part"]

_LEAVES: Final = frozenset({str, int, float, bool, type(None)})


def _twin(value: Any, depth: int, make_dict: Callable[[dict[str, Any]], Any],
          make_list: Callable[[list[Any]], Any]) -> tuple[JSONValue, Any]:
    """``(_plain_copy(value, depth), raw twin)``; raises :class:`_NotPlain` where the shortcut does not apply."""
    child = depth + 1
    if child > MAX_DEPTH or len(value) > PASS1_MAX_ITEMS:
        raise _NotPlain
    plain_keys = _plain_keys
    clean = known_clean
    if type(value) is dict:
        out: dict[str, JSONValue] = {}
        raw = make_dict(value)  # a copy made in C; then only the container values are replaced
        for key, item in value.items():
            cls = type(item)
            if key not in plain_keys:
                if key in _token_keys and type(key) is str:
                    redact = not (item is None or cls is int or cls is float)
                else:
                    redact = not _plain_key(key, item)
                if redact:
                    if cls not in _LEAVES:  # the raw twin would need the general freezing
                        raise _NotPlain
                    out[key] = REDACTED
                    continue
            if cls is str:
                out[key] = item if item in clean else _plain_str(item)
            elif cls is dict or cls is list or cls is tuple:
                out[key], twin = _twin(item, child, make_dict, make_list)
                dict.__setitem__(raw, key, twin)
            else:
                out[key] = _plain_scalar(item, cls)
        return out, raw
    if len(value) > 1 and type(value[0]) is str and argv_context(value) is not None:
        raise _NotPlain  # a command line whose text hides a credential from an item's neighbours: the general walk
    items: list[JSONValue] = []
    twins: list[Any] = []
    append, append_twin = items.append, twins.append
    for item in value:
        cls = type(item)
        if cls is str:
            append(item if item in clean else _plain_str(item))
            append_twin(item)
        elif cls is dict or cls is list or cls is tuple:
            copied, twin = _twin(item, child, make_dict, make_list)
            append(copied)
            append_twin(twin)
        else:
            append(_plain_scalar(item, cls))
            append_twin(item)
    return items, make_list(twins)


_SHAPE_KEYS: Final = frozenset({"id", "type", "function", "name", "arguments"})


def _calls_twin(calls: list[Any], depth: int, make_dict: Callable[[dict[str, Any]], Any] | None,
                make_list: Callable[[list[Any]], Any] | None) -> tuple[JSONValue, Any] | None:
    """:func:`_twin` of a list of OpenAI tool calls, each an exact ``dict`` with the keys ``id``, ``type`` (strings)
    and ``function``: an exact ``dict`` with the keys ``name`` and ``arguments`` (strings), what a chat-completions
    response lists. Each dict is copied in C (its key order kept) and only a string that is not known clean is
    replaced: no loop over keys, no call per dict. The same result as :func:`_twin` by construction: the depth and
    item caps are checked for the deepest dict, every key is one the sanitizer keeps as it is (in ``_plain_keys``:
    no key is redacted, none is scrubbed), every string goes through the same expression (kept when known clean,
    else :func:`~hermes_pipeline.engine.sanitize._plain_str`, which raises where ``_twin`` raises), and the twin of
    each dict is ``make_dict`` of it with its one container replaced by that container's twin (no twin without
    ``make_dict``: ``(copy, None)``). ``None`` (nothing decided, the general walk runs) as soon as one call has
    another shape."""
    if depth + 3 > MAX_DEPTH or len(calls) > PASS1_MAX_ITEMS or not _SHAPE_KEYS <= _plain_keys:
        return None
    clean = known_clean
    put = dict.__setitem__
    items: list[JSONValue] = []
    twins: list[Any] = []
    for call in calls:
        if type(call) is not dict or len(call) != 3 or "id" not in call or "type" not in call \
                or "function" not in call:
            return None
        call_id, kind, function = call["id"], call["type"], call["function"]
        if type(call_id) is not str or type(kind) is not str or type(function) is not dict or len(function) != 2 \
                or "name" not in function or "arguments" not in function:
            return None
        name, arguments = function["name"], function["arguments"]
        if type(name) is not str or type(arguments) is not str:
            return None
        out = call.copy()
        if call_id not in clean:
            out["id"] = _plain_str(call_id)
        if kind not in clean:
            out["type"] = _plain_str(kind)
        copied = out["function"] = function.copy()
        if name not in clean:
            copied["name"] = _plain_str(name)
        if arguments not in clean:
            copied["arguments"] = _plain_str(arguments)
        items.append(out)
        if make_dict is not None:
            raw = make_dict(call)
            put(raw, "function", make_dict(function))
            twins.append(raw)
    return items, (make_list(twins) if make_list is not None else None)


def plain_twin(value: list[Any] | tuple[Any, ...] | dict[str, Any], depth: int,
               make_dict: Callable[[dict[str, Any]], Any] | None,
               make_list: Callable[[list[Any]], Any] | None) -> tuple[JSONValue, Any] | None:
    """``(copy, twin)`` of ``value``, an exact ``dict``, ``list`` or ``tuple`` at ``depth`` in a sanitized field.

    ``copy`` is the sanitizer's pass-1 copy of ``value`` at that depth (pass it to :func:`sanitize_with_part`);
    ``twin`` is the raw ``value`` rebuilt with ``make_dict`` for every mapping (given the raw ``dict``; it must
    return a copy, a ``dict`` or a subclass, whose container values are then replaced by their twins through
    ``dict.__setitem__``, so a read-only subclass serves) and ``make_list`` for every list or tuple (given a
    ``list`` of the twins), scalars kept as they are (the same objects). ``None`` when ``value`` is not a tree of
    exact JSON types within the pass-1 caps, or when scrubbing raised: then both copies must be made the general
    way. Without ``make_dict`` and ``make_list`` (the caller needs no twin) ``twin`` is ``None`` and only the copy is
    made.
    """
    if type(value) is not dict and type(value) is not list and type(value) is not tuple:
        return None
    try:
        if type(value) is list:
            calls = _calls_twin(value, depth, make_dict, make_list)
            if calls is not None:
                return calls
        if make_dict is None or make_list is None:
            return _plain_copy(value, depth), None
        return _twin(value, depth, make_dict, make_list)
    except Exception:  # _NotPlain, or scrubbing failed: the general paths decide
        return None


def sanitize_with_part(value: dict[str, Any], path: tuple[str, ...], part: JSONValue) -> JSONValue:
    """:func:`sanitize` of ``value``, where ``part`` is :func:`plain_twin`'s copy of the container found at ``path``.

    ``path`` is a chain of keys from ``value`` down through exact dicts (``part`` was copied at depth
    ``len(path)``). The result equals ``sanitize(value)``: see the module notes for why.
    """
    if not path or type(value) is not dict:
        return sanitize(value)
    limit = payload_max_chars()
    holders: list[dict[str, Any]] = [value]
    for key in path[:-1]:
        inner = holders[-1].get(key)
        if type(inner) is not dict:
            return sanitize(value)
        holders.append(inner)
    if path[-1] not in holders[-1]:
        return sanitize(value)
    replaced: Any = []  # the part's place holder: an empty list copies to an empty list in place
    for holder, key in zip(reversed(holders), reversed(path)):
        replaced = {**holder, key: replaced}
    try:
        out = _plain_copy(replaced, 0)
    except Exception:  # _NotPlain, or scrubbing failed: the general path decides
        return sanitize(value)
    target: Any = out
    for key in path[:-1]:
        target = target.get(key) if type(target) is dict else None
    if type(target) is not dict or target.get(path[-1]) != []:  # a key on the path was redacted
        return sanitize(value)
    target[path[-1]] = part
    return out if _fits_plain(out, limit) else sanitize(value)
