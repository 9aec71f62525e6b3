"""Read-only copies of host values handed to observers (observers are read-only, OBS-19).

A tool's ``args`` is the host's own dictionary: the tool runs with it after ``pre_tool_call``. Handed
to observers by reference, an observer that edits it in place changes what the tool does, with no
middleware trace. Observers therefore receive :func:`read_only` of it: a copy built once per event
(one for all observers of that event, so the payload stays shared, OBS-19/OBS-68), whose containers
refuse every change with :class:`~hermes_pipeline.contract.errors.ReadOnlyPayloadError`.

The copies stay ``dict`` and ``list`` subclasses, so observers that serialise, compare or test
``isinstance(value, dict)`` keep working; pickling or ``copy.deepcopy`` of one gives plain containers
again (an exporter's worker process, a middleware copy). Atoms (``str``, numbers, ``None``) are
immutable and shared as they are; the copy walks only containers.
"""

from __future__ import annotations

import copy
import logging
from typing import Any, Final, NoReturn

from ..contract.errors import ReadOnlyPayloadError

logger: Final = logging.getLogger("hermes_pipeline.dispatch")

_ATOMS: Final = frozenset({str, int, float, bool, type(None), bytes, complex})


def _refuse(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise ReadOnlyPayloadError(
        f"hook payload values are read-only (a {type(self).__name__} given to an observer): observers must not "
        "change what the host does; return a pre_tool_call {'action': 'modify', 'args': ...} directive or use "
        "tool_request middleware to change a tool's input"
    )


class ReadOnlyDict(dict[Any, Any]):
    """A ``dict`` whose mutating methods raise :class:`ReadOnlyPayloadError`."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return {copy.deepcopy(k, memo): copy.deepcopy(v, memo) for k, v in self.items()}


class ReadOnlyList(list[Any]):
    """A ``list`` whose mutating methods raise :class:`ReadOnlyPayloadError`."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(v, memo) for v in self]


_READ_ONLY: Final = frozenset({ReadOnlyDict, ReadOnlyList, tuple, frozenset}) | _ATOMS


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind in _ATOMS or kind is ReadOnlyDict or kind is ReadOnlyList:
        return value  # immutable, or already a read-only copy (whose values are read-only too)
    if isinstance(value, dict):
        return ReadOnlyDict({k: v if type(v) in _ATOMS else _copy(v) for k, v in value.items()})
    if isinstance(value, list):
        return ReadOnlyList([v if type(v) in _ATOMS else _copy(v) for v in value])
    if kind is tuple:
        return tuple(_copy(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(value)
    if isinstance(value, bytearray):
        return bytes(value)
    return copy.deepcopy(value)  # anything else: a private copy (its own methods may still mutate it)


def read_only(value: Any) -> Any:
    """A read-only copy of ``value`` for observers; ``value`` itself when it is already read-only.

    Never raises: a value that cannot be copied (a cycle, an object refusing ``deepcopy``) is replaced
    by a read-only dictionary of its top level, or by its ``repr`` for a non-mapping, so an observer
    never holds the host's object (logged at DEBUG).
    """
    kind = type(value)
    if kind in _READ_ONLY:
        return value
    if kind is dict:  # the common case, tool arguments of atoms: one pass, no recursion
        for item in value.values():
            if type(item) not in _ATOMS:
                break
        else:
            return ReadOnlyDict(value)
    try:
        return _copy(value)
    except Exception as exc:  # noqa: BLE001 - RecursionError, a __deepcopy__ that raises ...
        logger.debug("hermes_pipeline: value for observers could not be copied (%s); passing a summary", exc)
        try:
            if isinstance(value, dict):
                return ReadOnlyDict({k: _summary(v) for k, v in value.items()})
        except Exception:  # noqa: BLE001 - a mapping whose items() raises
            pass
        return _summary(value)


def _summary(value: Any) -> Any:
    if type(value) in _ATOMS:
        return value
    try:
        return f"<{type(value).__name__}: {repr(value)[:200]}>"
    except Exception:  # noqa: BLE001 - a repr that raises
        return f"<{type(value).__name__}>"
