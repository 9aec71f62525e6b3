"""Normalisation of provider token usage into the ``post_api_request.usage`` shape (spec 01 §7.4)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def _get(obj: Any, *names: str) -> Any:
    mapping = type(obj) is dict or isinstance(obj, Mapping)
    for name in names:
        value = obj.get(name) if mapping else getattr(obj, name, None)
        if value is not None:
            return value
    return None


def _int(value: Any) -> int:
    if type(value) is int:
        return value
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    return 0


def normalize_usage(raw: Any) -> dict[str, Any] | None:
    """Map OpenAI-, Anthropic- or Responses-style usage (dict or object) to the normalised fields.

    ``prompt_tokens`` = input + cache read + cache write; ``total_tokens`` = prompt + output.
    ``input_tokens`` excludes cached tokens. ``reported_usage_fields`` lists the counts the provider
    actually reported; ``cost_usd`` is present only when the provider reported a cost (``cost``,
    ``cost_usd`` or ``total_cost``, in USD). Returns ``None`` when ``raw`` is ``None``.
    """
    if raw is None:
        return None
    reported: list[str] = []
    get: Callable[[str], Any]
    if type(raw) is dict or isinstance(raw, Mapping):  # the fields read below, as _get reads them, without its loop
        get = raw.get
    else:
        def get(name: str) -> Any:
            return getattr(raw, name, None)
    prompt_details = get("prompt_tokens_details")
    if prompt_details is None:
        prompt_details = get("input_tokens_details")
    completion_details = get("completion_tokens_details")
    if completion_details is None:
        completion_details = get("output_tokens_details")
    cache_read = get("cache_read_input_tokens")
    cache_write = get("cache_creation_input_tokens")
    anthropic_style = cache_read is not None or cache_write is not None
    if cache_read is None and prompt_details is not None:
        cache_read = _get(prompt_details, "cached_tokens")
    reasoning = _get(completion_details, "reasoning_tokens") if completion_details is not None else None
    raw_input = get("input_tokens")
    if raw_input is None:
        raw_input = get("prompt_tokens")
    output = get("output_tokens")
    if output is None:
        output = get("completion_tokens")
    for label, value in (("input_tokens", raw_input), ("output_tokens", output), ("cache_read_tokens", cache_read),
                         ("cache_write_tokens", cache_write), ("reasoning_tokens", reasoning)):
        if value is not None:
            reported.append(label)
    cache_read_i, cache_write_i = _int(cache_read), _int(cache_write)
    # OpenAI prompt_tokens include cached tokens; Anthropic input_tokens exclude them.
    input_i = _int(raw_input) if anthropic_style else max(_int(raw_input) - cache_read_i - cache_write_i, 0)
    output_i = _int(output)
    prompt = input_i + cache_read_i + cache_write_i
    out: dict[str, Any] = {
        "input_tokens": input_i,
        "output_tokens": output_i,
        "cache_read_tokens": cache_read_i,
        "cache_write_tokens": cache_write_i,
        "reasoning_tokens": _int(reasoning),
        "request_count": 1,
        "prompt_tokens": prompt,
        "total_tokens": prompt + output_i,
        "reported_usage_fields": reported,
    }
    cost = get("cost_usd")
    if cost is None:
        cost = get("cost")
        if cost is None:
            cost = get("total_cost")  # a provider-reported price in USD (e.g. OpenRouter)
    if isinstance(cost, int | float) and not isinstance(cost, bool) and 0 <= cost < float("inf"):
        out["cost_usd"] = float(cost)
    return out
