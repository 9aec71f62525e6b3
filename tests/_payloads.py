"""Helpers of the tests that compare sanitized payloads: the payload limit set for a block, and equality with
the same container type at every level."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from hermes_pipeline.engine.sanitize import PAYLOAD_MAX_CHARS_ENV


@contextlib.contextmanager
def payload_limit(value: str | int | None) -> Iterator[None]:
    """Set (``str(value)``) or unset ``HERMES_PLUGIN_PAYLOAD_MAX_CHARS`` for the duration of a block
    (hypothesis-safe: the previous value comes back whatever happens)."""
    old = os.environ.get(PAYLOAD_MAX_CHARS_ENV)
    try:
        if value is None:
            os.environ.pop(PAYLOAD_MAX_CHARS_ENV, None)
        else:
            os.environ[PAYLOAD_MAX_CHARS_ENV] = str(value)
        yield
    finally:
        if old is None:
            os.environ.pop(PAYLOAD_MAX_CHARS_ENV, None)
        else:
            os.environ[PAYLOAD_MAX_CHARS_ENV] = old


def same(a: Any, b: Any) -> bool:
    """Equal value for value, with the same type at every level (``MessageView``, ``FrozenList``, ``dict``,
    ``list``); NaN equals itself only as the very same object."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a is b or a == b
