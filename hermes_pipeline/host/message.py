"""A read-only assistant message that reads the same as a mapping and by attribute.

``post_api_request.assistant_message`` is consumed both ways by existing plugins: some index a dict
(``msg["content"]``, ``msg.get("tool_calls")``), others read an SDK-style object with ``getattr``
(``msg.content``, ``msg.tool_calls[0].function.name``, as Hermes' bundled Langfuse plugin does with
Hermes' ``NormalizedResponse``). Providers return either shape, so :func:`message_view` turns any of
them into a :class:`MessageView`, which serves both.

A :class:`MessageView` is a ``dict`` subclass whose mutating methods raise ``TypeError``: the
sanitizer, ``json.dumps`` and every exporter see plain JSON-shaped data (nested mappings are views
too, sequences are read-only lists: :class:`FrozenList`), and ``pickle`` / ``copy.deepcopy`` give
equal views. The content is the provider's, unsanitized (a legacy raw field).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, NoReturn

__all__ = ["FrozenList", "MessageView", "message_view", "message_view_with_calls", "plain_tool_calls"]

NONE_WHEN_ABSENT: Final = frozenset({"role", "content", "tool_calls", "reasoning", "reasoning_content",
                                     "refusal", "id", "type", "function", "name", "arguments"})
"""Attributes that read as ``None`` when the key is absent, as on SDK message objects; any other
absent attribute raises ``AttributeError`` (so ``hasattr`` and ``getattr(..., default)`` stay honest)."""

_MAX_DEPTH: Final = 32
_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
"""Exact types :func:`_freeze` keeps as they are without a call."""


def _refuse(*_: Any, **__: Any) -> NoReturn:
    raise TypeError("MessageView is read-only; copy it with dict(view) to change it")


class MessageView(dict[str, Any]):
    """A read-only ``dict`` whose keys are also attributes (see the module docstring)."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            if name in NONE_WHEN_ABSENT:
                return None
            raise AttributeError(f"{type(self).__name__!s} has no field {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        _refuse()

    def __delattr__(self, name: str) -> NoReturn:
        _refuse()

    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __reduce__(self) -> tuple[Callable[..., MessageView], tuple[dict[str, Any]]]:
        return _rebuild, (dict(self),)

    def __copy__(self) -> MessageView:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> MessageView:
        return _rebuild(copy.deepcopy(dict(self), memo))

    def __repr__(self) -> str:
        return f"MessageView({dict.__repr__(self)})"


class FrozenList(list[Any]):
    """A read-only ``list`` (the sequences inside a :class:`MessageView`): mutating methods raise ``TypeError``."""

    __slots__ = ()

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __reduce__(self) -> tuple[Callable[..., FrozenList], tuple[list[Any]]]:
        return _frozen_list, (list(self),)

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenList:
        return _frozen_list(copy.deepcopy(list(self), memo))


# The constructors fill the object in C (``list.__init__`` / ``dict.__init__`` do not go through the
# refused ``extend`` / ``update`` attributes).
def _frozen_list(items: list[Any]) -> FrozenList:
    return FrozenList(items)


def _rebuild(data: dict[str, Any]) -> MessageView:
    return MessageView(data)


def _freeze(value: Any, depth: int = 0) -> Any:
    """Mappings → views, lists/tuples → lists of frozen values, SDK objects → their ``model_dump``."""
    if depth > _MAX_DEPTH:
        return value
    # Exact-type checks first: a provider message is plain JSON data, and the ABC checks below cost
    # several times more per value (every post_api_request freezes each tool call of the response).
    cls = type(value)
    if cls in _SCALARS:
        return value
    if cls is dict:
        child = depth + 1
        view = MessageView(value)  # copied in C; then only the values that are not scalars are replaced
        for k, v in value.items():
            if type(k) is not str:  # keys become strings: build it key by key
                return MessageView({k if type(k) is str else str(k): v if type(v) in _SCALARS else _freeze(v, child)
                                    for k, v in value.items()})
            if type(v) not in _SCALARS:
                dict.__setitem__(view, k, _freeze(v, child))
        return view
    if cls is list or cls is tuple:
        child = depth + 1
        return FrozenList([v if type(v) in _SCALARS else _freeze(v, child) for v in value])
    if isinstance(value, Mapping):
        return _rebuild({str(k): _freeze(v, depth + 1) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return _frozen_list([_freeze(v, depth + 1) for v in value])
    if value is None or isinstance(value, str | int | float):
        return value
    dumped = _dump(value)
    return _freeze(dumped, depth + 1) if dumped is not None else value


def _dump(value: Any) -> dict[str, Any] | None:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            result = dump()
        except Exception:
            return None
        return result if isinstance(result, dict) else None
    return None


def _get(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    try:
        return getattr(obj, name, None)
    except Exception:
        return None


def _tool_call(call: Any) -> Any:
    """An OpenAI-shaped tool call (``id``, ``type``, ``function.name`` / ``.arguments``) of any object."""
    if type(call) is dict and call.get("type") != "tool_use":  # the common case, without the ABC checks
        return call
    if _get(call, "type") == "tool_use":  # an Anthropic content block
        arguments = _get(call, "input")
        return {"id": _get(call, "id"), "type": "function",
                "function": {"name": _get(call, "name"), "arguments": json.dumps(arguments, default=str)}}
    if isinstance(call, Mapping) or _dump(call) is not None:
        return call
    function = _get(call, "function") or call  # Hermes' ToolCall is its own ``function``
    return {"id": _get(call, "id"), "type": _get(call, "type") or "function",
            "function": {"name": _get(function, "name"), "arguments": _get(function, "arguments")}}


def _object_fields(message: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {"role": _get(message, "role") or "assistant"}
    for name in ("content", "reasoning", "reasoning_content", "refusal"):
        value = _get(message, name)
        if value is not None or name == "content":
            fields[name] = value
    calls = _get(message, "tool_calls")
    if isinstance(calls, Iterable) and not isinstance(calls, str | bytes | Mapping):
        fields["tool_calls"] = [_tool_call(c) for c in calls]
    return fields


def message_view(message: Any) -> MessageView | None:
    """A :class:`MessageView` of a provider's assistant message; ``None`` for ``None``.

    Accepts a mapping (an OpenAI chat-completions message dict, kept key for key; Anthropic
    ``tool_use`` blocks in its ``tool_calls`` take the OpenAI shape), an SDK object
    with ``model_dump`` (kept as dumped), or any object with ``role`` / ``content`` /
    ``tool_calls`` / ``reasoning`` attributes (Hermes' ``NormalizedResponse`` and its ``ToolCall``,
    whose tool calls become ``{"id", "type", "function": {"name", "arguments"}}``). An existing
    view is returned as it is. Never raises for odd objects: unknown parts are left as they are.
    """
    if message is None or isinstance(message, MessageView):
        return message
    if isinstance(message, Mapping):
        calls = message.get("tool_calls")
        if isinstance(calls, list | tuple):
            message = {**message, "tool_calls": [_tool_call(c) for c in calls]}
        frozen = _freeze(message)
    else:
        dumped = _dump(message)
        frozen = _freeze(dumped if dumped is not None else _object_fields(message))
    return frozen if isinstance(frozen, MessageView) else None


def plain_tool_calls(calls: list[Any]) -> bool:
    """Whether :func:`message_view` keeps each of ``calls`` as it is (an exact ``dict`` that is not an Anthropic
    ``tool_use`` block): their frozen form is then :func:`_freeze` of each, what a twin walk can build."""
    for call in calls:
        if type(call) is not dict or call.get("type") == "tool_use":
            return False
    return True


def message_view_with_calls(message: dict[str, Any], calls: FrozenList) -> MessageView | None:
    """:func:`message_view` of ``message``, an exact ``dict`` with a ``tool_calls`` list or tuple for which
    :func:`plain_tool_calls` holds, given ``calls``: the frozen form of those tool calls, already made.

    The other fields are frozen as :func:`message_view` freezes them (each value on its own), with a ``None``
    in the place of the tool calls, which ``calls`` then fills (same key, same position). A key that is not a
    string and renders as ``"tool_calls"`` would make the two differ: then :func:`message_view` decides.
    """
    merged = {**message, "tool_calls": None}
    frozen = _freeze(merged)
    if type(frozen) is not MessageView or len(frozen) != len(merged) or frozen.get("tool_calls", calls) is not None:
        return message_view(message)
    dict.__setitem__(frozen, "tool_calls", calls)
    return frozen
