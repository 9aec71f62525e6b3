"""Nothing is walked twice (issue #29 item 5; FMT-33a, OBS-55/OBS-56): the export's credential walk keeps a
message or tool schema of the engine's request field as it is, without walking it, because that part is already
the sanitizer's output, and the walk would give back the very same object anyway. Checked on generated requests
with credentials, sensitive keys, token counts, odd keys and values: the walk with the shortcut and without it
give the same result, and each sanitized part is a fixpoint of the walk."""

from __future__ import annotations

import enum
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hermes_pipeline.engine.request_field as rf
import hermes_pipeline.export.redaction as redaction
from hermes_pipeline.engine.request_field import build_request_field
from hermes_pipeline.export.redaction import PART_CAP, redact_value

SECRET = "sk-" + "A1b2C3d4E5f6G7h8J9k0L1m2"


class Role(enum.Enum):
    USER = "user"


texts = st.one_of(st.text(max_size=12), st.sampled_from(
    [SECRET, f"Bearer {SECRET}", "x" * 300, "y" * 9_000 + SECRET, "password=hunter2hunter2", "null"]))
keys = st.one_of(st.sampled_from(["role", "content", "api_key", "authorization", "input_tokens", "type", "a"]),
                 st.text(max_size=6))
scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                    st.floats(allow_nan=True, allow_infinity=True), texts, st.sampled_from([Role.USER, uuid.UUID(int=7)]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(keys, inner, max_size=4),
    st.dictionaries(st.sampled_from([0, 1, "0", "1"]), inner, max_size=3)), max_leaves=25)
messages = st.lists(st.dictionaries(keys, values, max_size=4), max_size=6)
tools = st.lists(st.fixed_dictionaries({"type": st.just("function"), "function": st.dictionaries(keys, values, max_size=3)}),
                 max_size=4)


def registered_parts(value: Any) -> list[Any]:
    """The containers inside ``value`` that the request field marked as its sanitized parts."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict | list):
            if rf.is_sanitized_part(item):
                found.append(item)
            stack.extend(item.values() if isinstance(item, dict) else item)
    return found


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(messages, tools, st.sampled_from([None, PART_CAP, 1_000_000, 500]))
def test_the_walk_keeps_sanitized_parts_as_a_full_walk_would(monkeypatch: pytest.MonkeyPatch, history: list[Any],
                                                             schemas: list[Any], cap: int | None) -> None:
    kwargs = {"model": "m", "messages": history, "tools": schemas}
    for _ in range(2):  # the second request reuses the parts of the first
        field = build_request_field(kwargs)
        event_data = {"request": field, "messages_offset": 0}
        for part in registered_parts(field):
            assert redact_value(part, cap) is part or cap is not None and cap < PART_CAP
        shortcut = redact_value(event_data, cap)
        with monkeypatch.context() as m:
            m.setattr(redaction, "is_sanitized_part", lambda value: False)
            walked = redact_value(event_data, cap)
        assert repr(shortcut) == repr(walked)
        assert (shortcut is event_data) == (walked is event_data)


def test_a_part_is_known_by_identity_only() -> None:
    """An equal copy of a part is walked (it may be anyone's object); the part itself is known."""
    field = build_request_field({"model": "m", "messages": [{"role": "user", "content": "hello " * 60}]})
    part = field["body"]["messages"][0]
    assert rf.is_sanitized_part(part)
    assert not rf.is_sanitized_part(dict(part))


def test_a_cap_below_the_parts_strings_still_cuts_them() -> None:
    """FMT-33a with ``max_value_chars``: under a cap shorter than a part's strings the part is walked and cut."""
    field = build_request_field({"model": "m", "messages": [{"role": "user", "content": "z" * 5_000}]})
    part = field["body"]["messages"][0]
    assert rf.is_sanitized_part(part)
    assert redact_value(part, 500) is not part
    assert len(redact_value(field, 500)["body"]["messages"][0]["content"]) < 600
    assert redact_value(field, PART_CAP)["body"]["messages"][0] is part
