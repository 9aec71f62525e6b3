"""Near-miss suggestions ("did you mean …") for kinds, keys and enum values, with :mod:`difflib`.

A suggestion only ever names one of the valid choices, never the value that was found (which may
be a destination or a credential).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Final

CUTOFF: Final = 0.6
"""Minimum :class:`difflib.SequenceMatcher` ratio for a choice to be suggested."""


def did_you_mean(value: object, choices: Iterable[str]) -> str | None:
    """The valid choice closest to ``value`` (case-insensitively), or ``None`` when none is close.

    ``None`` too when ``value`` is not a string or already is a choice.
    """
    if not isinstance(value, str) or not value:
        return None
    options = [c for c in choices if isinstance(c, str)]
    if value in options:
        return None
    folded = {c.lower(): c for c in reversed(options)}
    if value.lower() in folded:
        return folded[value.lower()]
    matches = difflib.get_close_matches(value.lower(), list(folded), n=1, cutoff=CUTOFF)
    return folded[matches[0]] if matches else None


def hint(suggestion: str | None) -> str:
    """``" (did you mean 'x'?)"`` for a suggestion, ``""`` without one."""
    return f" (did you mean {suggestion!r}?)" if suggestion else ""


class Expected(str):
    """A checker's "what was expected" text that also carries a near-miss suggestion.

    It is a plain ``str`` (the text already ends with the "did you mean" hint), so code that only
    handles text keeps working; :class:`~hermes_pipeline.config.policy.ValidationContext` reads
    :attr:`suggestion` into the diagnostic.
    """

    suggestion: str | None

    def __new__(cls, text: str, suggestion: str | None = None) -> Expected:
        obj = super().__new__(cls, text + hint(suggestion))
        obj.suggestion = suggestion
        return obj


def suggestion_of(message: object) -> str | None:
    """The suggestion an :class:`Expected` message carries, else ``None``."""
    value = getattr(message, "suggestion", None)
    return value if isinstance(value, str) else None


__all__ = ["CUTOFF", "Expected", "did_you_mean", "hint", "suggestion_of"]
