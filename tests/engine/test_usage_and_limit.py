"""``normalize_usage`` read without its per-field loop, and ``L`` read from the environment's own table, give what
the plain readings give (issue #29; spec 01 §7.4 usage fields, §8.2.1 OBS-54)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import MappingProxyType, SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.sanitize import (
    DEFAULT_PAYLOAD_MAX_CHARS,
    MIN_PAYLOAD_MAX_CHARS,
    PAYLOAD_MAX_CHARS_ENV,
    payload_max_chars,
    sanitize,
)
from hermes_pipeline.engine.usage import normalize_usage


def _reference_get(obj: Any, *names: str) -> Any:
    mapping = isinstance(obj, Mapping)
    for name in names:
        value = obj.get(name) if mapping else getattr(obj, name, None)
        if value is not None:
            return value
    return None


def _reference_int(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, float) else 0


def reference_usage(raw: Any) -> dict[str, Any] | None:
    """The reading of every field one ``_get`` loop at a time (the shape before issue #29's change)."""
    if raw is None:
        return None
    get = _reference_get
    prompt_details = get(raw, "prompt_tokens_details", "input_tokens_details")
    completion_details = get(raw, "completion_tokens_details", "output_tokens_details")
    cache_read = get(raw, "cache_read_input_tokens")
    if cache_read is None and prompt_details is not None:
        cache_read = get(prompt_details, "cached_tokens")
    cache_write = get(raw, "cache_creation_input_tokens")
    reasoning = get(completion_details, "reasoning_tokens") if completion_details is not None else None
    anthropic_style = get(raw, "cache_read_input_tokens", "cache_creation_input_tokens") is not None
    raw_input = get(raw, "input_tokens", "prompt_tokens")
    output = get(raw, "output_tokens", "completion_tokens")
    reported = [label for label, value in (("input_tokens", raw_input), ("output_tokens", output),
                                           ("cache_read_tokens", cache_read), ("cache_write_tokens", cache_write),
                                           ("reasoning_tokens", reasoning)) if value is not None]
    cr, cw = _reference_int(cache_read), _reference_int(cache_write)
    inp = _reference_int(raw_input) if anthropic_style else max(_reference_int(raw_input) - cr - cw, 0)
    out_i = _reference_int(output)
    prompt = inp + cr + cw
    out: dict[str, Any] = {"input_tokens": inp, "output_tokens": out_i, "cache_read_tokens": cr,
                           "cache_write_tokens": cw, "reasoning_tokens": _reference_int(reasoning), "request_count": 1,
                           "prompt_tokens": prompt, "total_tokens": prompt + out_i, "reported_usage_fields": reported}
    cost = get(raw, "cost_usd", "cost", "total_cost")
    if isinstance(cost, int | float) and not isinstance(cost, bool) and 0 <= cost < float("inf"):
        out["cost_usd"] = float(cost)
    return out


count = st.one_of(st.none(), st.integers(-5, 10**6), st.booleans(), st.floats(allow_nan=True), st.just("12"))
details = st.one_of(st.none(), st.fixed_dictionaries({}, optional={"cached_tokens": count, "reasoning_tokens": count}))
usage_fields = st.fixed_dictionaries({}, optional={
    name: count for name in ("prompt_tokens", "completion_tokens", "input_tokens", "output_tokens",
                             "cache_read_input_tokens", "cache_creation_input_tokens", "cost", "cost_usd",
                             "total_cost")} | {name: details for name in (
    "prompt_tokens_details", "input_tokens_details", "completion_tokens_details", "output_tokens_details")})


@settings(max_examples=300, deadline=None)
@given(fields=usage_fields, shape=st.sampled_from(["dict", "mapping", "object"]))
def test_usage_reading_equals_the_field_by_field_reading(fields: dict[str, Any], shape: str) -> None:
    """OpenAI-, Anthropic- and Responses-style usage as a dict, another mapping or an SDK-like object: the same
    normalised fields as the reference reading (a wrong precedence or a missed ``None`` fails it)."""
    raw: Any = fields if shape == "dict" else MappingProxyType(fields) if shape == "mapping" else \
        SimpleNamespace(**{k: SimpleNamespace(**v) if isinstance(v, dict) else v for k, v in fields.items()})
    expected, got = outcome(reference_usage, raw), outcome(normalize_usage, raw)
    assert got == expected and list(got[1] or {}) == list(expected[1] or {})


def outcome(normalize: Any, raw: Any) -> tuple[str, Any]:
    """``("ok", result)``, or the name of what it raised (an infinite or NaN count cannot become an int)."""
    try:
        return "ok", normalize(raw)
    except Exception as exc:
        return type(exc).__name__, None


@pytest.mark.parametrize("raw", [None, "2000", " 3000 ", "999", "abc", "", "123456"])
def test_obs54_limit_follows_every_change_of_the_variable(monkeypatch: pytest.MonkeyPatch, raw: str | None) -> None:
    """OBS-54: each call reads the variable as it is now, also after a value was seen and remembered."""
    for value in (raw, "5000", raw):
        if value is None:
            monkeypatch.delenv(PAYLOAD_MAX_CHARS_ENV, raising=False)
        else:
            monkeypatch.setenv(PAYLOAD_MAX_CHARS_ENV, value)
        reference = os.environ.get(PAYLOAD_MAX_CHARS_ENV)
        try:
            expected = DEFAULT_PAYLOAD_MAX_CHARS if reference is None else max(int(reference), MIN_PAYLOAD_MAX_CHARS)
        except ValueError:
            expected = DEFAULT_PAYLOAD_MAX_CHARS
        assert payload_max_chars() == expected


def test_obs54_limit_read_from_a_replaced_environment_mapping(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test or an embedding that replaces ``os.environ`` as a whole is read too (not the interpreter's table)."""
    monkeypatch.setenv(PAYLOAD_MAX_CHARS_ENV, "2000")
    monkeypatch.setattr(os, "environ", {PAYLOAD_MAX_CHARS_ENV: "1000"})
    assert payload_max_chars() == 1000
    assert sanitize(["x" * 900, "y" * 900])["_truncated"] is True  # type: ignore[index,call-overload]
