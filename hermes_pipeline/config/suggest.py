"""Near-miss suggestions ("did you mean …") for kinds, keys and enum values, with :mod:`difflib`.

A suggestion only ever names one of the valid choices, never the value that was found (which may
be a destination or a credential).
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Iterable
from typing import Final

CUTOFF: Final = 0.6
"""Minimum :class:`difflib.SequenceMatcher` ratio for a choice to be suggested."""

_CONFUSABLES: Final = str.maketrans({
    # Cyrillic letters drawn like Latin ones (a keyboard layout switch types them unseen)
    "а": "a", "в": "b", "е": "e", "ё": "e", "з": "3", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
    "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d", "ԛ": "q",
    "ԝ": "w", "ӏ": "l", "һ": "h", "ɡ": "g", "ո": "n", "ս": "u",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "У": "Y", "Х": "X", "Ѕ": "S", "І": "I", "Ј": "J", "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W", "Ӏ": "l",
    # Greek
    "α": "a", "β": "b", "γ": "y", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "ϲ": "c", "ϳ": "j",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Latin look-alikes NFKC keeps
    "ı": "i", "ȷ": "j", "ℓ": "l", "ſ": "s",
})


def fold_confusables(text: str) -> str:
    """``text`` with look-alike letters made plain: NFKC (full-width and compatibility forms), the common
    Cyrillic and Greek letters drawn like Latin ones, zero-width characters dropped, then lower case."""
    text = unicodedata.normalize("NFKC", text).translate(_CONFUSABLES)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return text.lower()


def did_you_mean(value: object, choices: Iterable[str], *, cutoff: float = CUTOFF) -> str | None:
    """The valid choice closest to ``value`` (case-insensitively, look-alike letters folded:
    :func:`fold_confusables`), or ``None`` when none is close.

    ``None`` too when ``value`` is not a string or already is a choice.
    """
    if not isinstance(value, str) or not value:
        return None
    options = [c for c in choices if isinstance(c, str)]
    if value in options:
        return None
    folded = {fold_confusables(c): c for c in reversed(options)}
    plain = fold_confusables(value)
    if plain in folded:  # case, full-width or Cyrillic / Greek look-alikes: the same key to a reader
        return folded[plain]
    matches = difflib.get_close_matches(plain, list(folded), n=1, cutoff=cutoff)
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


__all__ = ["CUTOFF", "Expected", "did_you_mean", "fold_confusables", "hint", "suggestion_of"]
