"""JSON text a model or a tool wrote is parsed exactly (FMT-32, FMT-46): every number as the standard parser reads it.

orjson turns an integer beyond 64 bits into a float (``20000000000000000000`` -> ``2e+19``), so a tool call's
arguments in an ATIF step and in the flattened text of a summary lost digits. ``loads_exact`` is the one parser both
use; these tests hold it equal to :func:`json.loads`, types included, on generated documents.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.export.content import flatten_messages
from hermes_pipeline.export.jsonenc import canonical, loads_exact
from hermes_pipeline.sinks.atif.values import parse_arguments

_numbers = (st.integers(-(10**30), 10**30) | st.integers(2**63 - 3, 2**64 + 3) | st.integers(-(2**63) - 3, -(2**63) + 3)
            | st.floats(allow_nan=False, allow_infinity=False))
_scalars = st.none() | st.booleans() | _numbers | st.text(max_size=12)
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                            max_size=3), max_leaves=10)


def _typed(value: Any) -> Any:
    """``value`` with the type of every scalar beside it, so that ``1``, ``1.0`` and ``True`` differ."""
    if isinstance(value, dict):
        return {key: _typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    return (type(value).__name__, value)


@settings(max_examples=300, deadline=None)
@given(value=_json, indent=st.sampled_from([None, 2]))
def test_loads_exact_reads_every_number_as_the_standard_parser(value: Any, indent: int | None) -> None:
    text = json.dumps(value, indent=indent)
    assert _typed(loads_exact(text)) == _typed(json.loads(text))


@settings(max_examples=200, deadline=None)
@given(args=st.dictionaries(st.text(max_size=6), _json, max_size=4))
def test_fmt46_tool_call_arguments_keep_their_numbers(args: dict[str, Any]) -> None:
    """An ATIF tool call's arguments object, and the flattened text a summary is hashed from, hold the numbers the
    model wrote (no integer turned into a float)."""
    raw = json.dumps(args)
    parsed, bad = parse_arguments(raw)
    assert bad is None and _typed(parsed) == _typed(json.loads(raw))
    message = {"role": "assistant", "content": "",
               "tool_calls": [{"id": "c", "type": "function", "function": {"name": "t", "arguments": raw}}]}
    assert flatten_messages([message]) == f"assistant: [tool_call t {canonical(json.loads(raw))}]"


def test_an_integer_beyond_64_bits_keeps_its_digits() -> None:
    raw = '{"n": 20000000000000000000, "m": -9223372036854775809, "x": 1.5, "s": "12345678901234567890"}'
    parsed, bad = parse_arguments(raw)
    assert bad is None and parsed == {"n": 20000000000000000000, "m": -9223372036854775809, "x": 1.5,
                                      "s": "12345678901234567890"}
    assert type(parsed["n"]) is int and type(parsed["m"]) is int
    assert loads_exact("NaN") != loads_exact("NaN")  # what the standard parser takes, orjson refuses
