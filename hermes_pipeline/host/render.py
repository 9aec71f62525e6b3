"""Tool results as text for the model context: any returned value renders, and never raises.

:func:`render_result` keeps the plain rendering for every value it can render faithfully (a
``str`` as it is, anything else as JSON with ``str()`` for non-JSON objects). A value that rendering
refuses — an integer beyond the interpreter's int-to-str limit, nesting deeper than the JSON
encoder's recursion limit, a cycle, an object whose ``__str__`` raises, keys that are neither
strings nor numbers — is rendered by a bounded walk instead, and every part that could not be
rendered faithfully is replaced by a ``<...>`` marker that says what was there. The walk stops at
:data:`MAX_DEPTH` levels and :data:`MAX_ITEMS` items per container, so its output is bounded by the
size of the value's faithful parts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

MAX_DEPTH: Final = 64
"""Containers nested deeper than this are replaced by a marker in the fallback rendering."""
MAX_ITEMS: Final = 10_000
"""Items kept per container in the fallback rendering; the rest is counted in a marker."""
MAX_TEXT: Final = 100_000
"""Characters kept of one object's ``str()`` in the fallback rendering."""
UNRENDERABLE: Final = "<unrenderable tool result>"
"""The text when even the fallback rendering failed (e.g. the caller's stack was nearly full)."""


def render_result(value: Any) -> str:
    """The text a tool result becomes: ``str`` as is, else JSON; never raises :class:`Exception`.

    A ``str`` subclass gives its characters (its ``__str__`` is not called). Values the JSON
    rendering refuses go through the bounded fallback described in the module docstring.
    """
    try:
        if isinstance(value, str):
            return value if type(value) is str else str.__str__(value)
        return json.dumps(value, ensure_ascii=False, default=str)
    except Exception:  # noqa: BLE001 - any failure of the faithful rendering goes to the fallback
        pass
    try:
        return json.dumps(_walk(value, 0, set()), ensure_ascii=False)
    except Exception:  # noqa: BLE001 - the bounded walk itself failed: the constant marker
        return UNRENDERABLE


def _type_name(value: object) -> str:
    try:
        name = type(value).__qualname__
        return name if isinstance(name, str) else "object"
    except Exception:  # noqa: BLE001
        return "object"


def _int(value: int) -> Any:
    exact = int.__int__(value)
    try:
        int.__repr__(exact)
    except ValueError:  # beyond the interpreter's int-to-str conversion limit
        return f"<int of {exact.bit_length()} bits: too large to render>"
    return exact


def _text(value: object) -> str:
    """``str(value)``, else ``repr(value)``, else a marker naming the type and what raised."""
    for render in (str, repr):
        try:
            text = render(value)
            if isinstance(text, str):
                text = str.__str__(text)
                return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"<{len(text) - MAX_TEXT} more chars>"
        except Exception:  # noqa: BLE001 - try the next rendering
            continue
    return f"<unrenderable {_type_name(value)}: str() and repr() raised>"


def _key(key: object) -> str:
    if isinstance(key, str):
        return str.__str__(key)
    if key is None or isinstance(key, bool | float):
        return json.dumps(key)
    if isinstance(key, int):
        rendered = _int(key)
        return rendered if isinstance(rendered, str) else str(rendered)
    return _text(key)


def _walk(value: Any, depth: int, path: set[int]) -> Any:
    """A JSON-compatible copy of ``value`` with markers where it cannot be rendered faithfully."""
    if value is None or value is True or value is False:
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return _int(value)
    if isinstance(value, float):
        return float.__float__(value)
    container = isinstance(value, Mapping | list | tuple | set | frozenset)
    if not container:
        return _text(value)
    name = _type_name(value)
    if depth >= MAX_DEPTH:
        return f"<{name} nested deeper than {MAX_DEPTH} levels>"
    ident = id(value)
    if ident in path:
        return f"<circular reference to a {name}>"
    path.add(ident)
    try:
        return _walk_items(value, depth, path)
    except Exception:  # noqa: BLE001 - iteration itself raised
        return f"<unrenderable {name}: iteration raised>"
    finally:
        path.discard(ident)


def _walk_items(value: Any, depth: int, path: set[int]) -> Any:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for i, (key, item) in enumerate(value.items()):
            if i == MAX_ITEMS:
                out["<more>"] = f"<{len(value) - MAX_ITEMS} more items>"
                break
            out[_key(key)] = _walk(item, depth + 1, path)
        return out
    items: list[Any] = []
    for i, item in enumerate(value):
        if i == MAX_ITEMS:
            items.append(f"<{len(value) - MAX_ITEMS} more items>")
            break
        items.append(_walk(item, depth + 1, path))
    return items
