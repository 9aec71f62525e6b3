"""Small value checkers for component ``validate_config`` implementations.

A checker takes a value and returns ``None`` when it is acceptable, else a short text saying what
was expected (never echoing the value). Type checks are strict (CFG-36): a boolean key accepts
only booleans, an enum key only strings, an integer key never a boolean.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from .keypath import KeyPath
from .policy import ValidationContext
from .suggest import Expected, did_you_mean

Check = Callable[[Any], str | None]


def boolean(value: Any) -> str | None:
    """A boolean."""
    return None if isinstance(value, bool) else "expected a boolean (true or false)"


def string(value: Any) -> str | None:
    """Any string."""
    return None if isinstance(value, str) else "expected a string"


def nonblank(value: Any) -> str | None:
    """A string that is not empty or whitespace."""
    return None if isinstance(value, str) and value.strip() else "expected a non-blank string"


def table(value: Any) -> str | None:
    """A table / mapping."""
    return None if isinstance(value, dict) else "expected a table"


def array(value: Any) -> str | None:
    """An array / sequence."""
    return None if isinstance(value, list) else "expected an array"


def integer(minimum: int | None = None) -> Check:
    """An integer (not a boolean), at least ``minimum``."""
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return "expected an integer" + (f" >= {minimum}" if minimum is not None else "")
        if minimum is not None and value < minimum:
            return f"expected an integer >= {minimum}"
        return None
    return check


def number(minimum: float | None = None, maximum: float | None = None) -> Check:
    """An integer or float (not a boolean) within ``[minimum, maximum]``."""
    def check(value: Any) -> str | None:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if ok and minimum is not None and value < minimum:
            ok = False
        if ok and maximum is not None and value > maximum:
            ok = False
        if ok:
            return None
        bounds = f" between {minimum} and {maximum}" if minimum is not None and maximum is not None else ""
        return "expected a number" + bounds
    return check


def one_of(*values: str) -> Check:
    """One of the given strings (a YAML boolean such as an unquoted ``on`` is rejected).

    A near miss (``"apend"``) gets a "did you mean 'append'?" suggestion.
    """
    text = ", ".join(repr(v) for v in values)

    def check(value: Any) -> str | None:
        if isinstance(value, str) and value in values:
            return None
        return Expected(f"expected one of {text}", did_you_mean(value, values))
    return check


def str_map(value: Any) -> str | None:
    """A table whose values are strings."""
    if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        return None
    return "expected a table of strings"


def str_list(value: Any) -> str | None:
    """An array of strings."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return None
    return "expected an array of strings"


def url(*schemes: str) -> Check:
    """An absolute URL with one of ``schemes`` and a host."""
    text = "/".join(schemes)

    def check(value: Any) -> str | None:
        if not isinstance(value, str) or not value.strip():
            return f"expected a non-blank {text} URL"
        try:
            parts = urlsplit(value.strip())
            host = parts.hostname
        except ValueError:
            return f"expected a valid {text} URL"
        if parts.scheme.lower() not in schemes or not host:
            return f"expected a {text} URL"
        return None
    return check


def check_keys(vctx: ValidationContext, path: KeyPath, value: Mapping[str, Any], spec: Mapping[str, Check],
               *, invalid: Literal["policy", "collect"] = "policy") -> list[tuple[KeyPath, str]]:
    """Check every key of ``value`` against ``spec``.

    Unknown keys go to ``vctx.unknown_field``. Invalid values go to ``vctx.unsupported_value``
    (``invalid="policy"``) or are returned to the caller (``"collect"``, used for destination
    entries that are skipped as a whole).
    """
    problems: list[tuple[KeyPath, str]] = []
    for key, item in value.items():
        check = spec.get(key)
        if check is None:
            vctx.unknown_field((*path, key), ", ".join(spec))
            continue
        message = check(item)
        if message is None:
            continue
        if invalid == "policy":
            vctx.unsupported_value((*path, key), message)
        else:
            problems.append(((*path, key), message))
    return problems
