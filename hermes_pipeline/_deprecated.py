"""Former public names that keep working: each use warns once per process with a ``DeprecationWarning``.

A public name (documented, importable from a package, a keyword argument of a public function) is renamed
without breaking its callers: the old one stays as an alias made here, which says the new name the first
time it is used and then stays quiet (a hot path that still uses it pays one set lookup). See the glossary
in ``docs/architecture.md`` for why names were changed.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["renamed_attributes", "renamed_keyword", "warn_renamed"]

_WARNED: set[str] = set()
_LOCK = threading.Lock()


def warn_renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn, the first time in this process only, that ``old`` is now called ``new``."""
    with _LOCK:
        if old in _WARNED:
            return
        _WARNED.add(old)
    warnings.warn(f"{old} is deprecated; use {new}", DeprecationWarning, stacklevel=stacklevel)


def renamed_attributes(owner: str, names: Mapping[str, str]) -> Callable[[Any, str], Any]:
    """A ``__getattr__`` for class ``owner`` answering each former attribute name in ``names`` (former → new)
    with the new attribute, warning once.

    A ``__getattr__`` rather than properties: it is asked only for a name the object does not have, so code
    that walks an object's attributes (pluggy and the engine look for hookimpls with ``dir()`` and
    ``getattr``) never touches a former name and never warns on behalf of a caller who did not use it.
    """

    def __getattr__(self: Any, name: str) -> Any:
        new = names.get(name)
        if new is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        warn_renamed(f"{owner}.{name}", f"{owner}.{new}")
        return getattr(self, new)

    return __getattr__


def renamed_keyword(function: str, former: Mapping[str, Any], old: str, new: str, value: Any) -> Any:
    """The value of ``function``'s keyword argument ``new`` (``value`` as passed, ``None`` when not), or what
    the caller passed under its former name ``old`` (warning once).

    ``former`` is the function's ``**former`` catch-all. Raises ``TypeError`` naming the keyword for any other
    keyword in it, or for ``old`` and ``new`` given together.
    """
    unknown = sorted(set(former) - {old})
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}")
    if old not in former:
        return value
    if value is not None:
        raise TypeError(f"{function}() got both {old!r} (its former name) and {new!r}")
    warn_renamed(f"{function}({old}=...)", f"{function}({new}=...)", stacklevel=4)
    return former[old]
