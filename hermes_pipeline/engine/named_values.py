"""A value judged by the name it is kept under: the mapping form of the text rule for named values (OBS-58, OBS-59).

The sensitive-key rule of 01 §8.2.4 hides a whole value (``<redacted>``) under a handful of key shapes. The credential
scrubber goes further in text: under a strong credential name (``db_pass``, ``encryption_key``, ``signing_key``,
``dsn``, ``pin``, ``otp``: :func:`.scrub_names.credential_name`), ``"db_pass": "..."`` in JSON or ``db_pass=...`` loses
its value as a credential span, unless the value is one no credential name hides (a placeholder, code, a count:
:func:`.scrub_names.kept_value`). A mapping entry is that same pair, so every walk of a mapping (the payload
sanitizer, the export walk) judges it the same way: the value becomes the credential's marker, the one scrubbing the
mapping's JSON text gives it.
"""

from __future__ import annotations

from functools import lru_cache

from .scrub import redaction_marker
from .scrub_names import STRONG, credential_name, kept_value

__all__ = ["named_value_marker", "strong_name"]


@lru_cache(maxsize=8192)
def strong_name(key: str) -> bool:
    """Whether ``key`` is a strong credential name (its value is judged by :func:`named_value_marker`)."""
    return credential_name(key) == STRONG


def named_value_marker(key: str, value: object) -> str | None:
    """The marker that replaces ``value`` kept under the key ``key``, or ``None`` when the value stays (a key that is
    no strong credential name, a value no credential name hides, or one that is no string or number)."""
    cls = type(value)
    if cls is str:
        text: str = value  # type: ignore[assignment]  # exactly a str (cls is str)
    elif cls is int or cls is float:
        text = str(value)
    else:
        return None
    if not text or not strong_name(key) or kept_value(text, key, STRONG):
        return None
    return redaction_marker(text)
