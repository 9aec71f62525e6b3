"""``cost_usd`` of an LLM call: the provider's reported cost, else the operator's price table
(:mod:`hermes_pipeline.config.pricing`), else unknown (``NULL``, never zero; BOOK-26)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..config.pricing import Price, PricingError, parse_pricing, pricing_problem

__all__ = ["Price", "PricingError", "call_cost", "parse_pricing", "pricing_problem"]


def call_cost(usage: Mapping[str, Any] | None, reported: Any, provider: str | None, model: str | None,
              prices: Mapping[tuple[str, str], Price]) -> float | None:
    """BOOK-26: ``reported`` (the provider's cost) when it is a number, else from ``prices``, else ``None``.

    ``usage`` is the FMT-26 usage of the call: ``input_tokens`` counts every input token, cached ones
    included, ``cache_read_tokens`` the cached ones.
    """
    if isinstance(reported, int | float) and not isinstance(reported, bool) and math.isfinite(reported) \
            and reported >= 0:
        return float(reported)
    price = prices.get((provider or "", model or "")) if prices else None
    if price is None or not isinstance(usage, Mapping):
        return None
    total_in = _count(usage.get("input_tokens"))
    cached = min(_count(usage.get("cache_read_tokens")), total_in)
    output = _count(usage.get("output_tokens"))
    return ((total_in - cached) * price.input + cached * price.cache_read + output * price.output) / 1_000_000


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
