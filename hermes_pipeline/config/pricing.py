"""The operator's price table ``observability.pricing`` (spec 06 BOOK-26): parsing and checking.

The price table is ``observability.pricing`` in the profile's ``config.yaml``: USD per million
tokens, per provider and model, written either as ``"provider/model"`` keys or nested::

    observability:
      pricing:
        openai/gpt-4o: {input: 2.5, output: 10, cache_read: 1.25}
        anthropic:
          claude-sonnet-4: {input: 3, output: 15, cache_read: 0.3}

``input`` prices the input tokens not read from the provider cache, ``cache_read`` the cached ones
(the ``input`` price when omitted), ``output`` the output tokens. A model without an entry has no
cost (``NULL``), never zero; aggregations then ignore it (BOOK-26).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

KEY: Final = "observability.pricing"
PRICE_FIELDS: Final = ("input", "output", "cache_read")


class PricingError(ValueError):
    """A price table entry that is not usable; ``key`` is the dotted key of the bad value."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float


def _number(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise PricingError(key, "expected a number of USD per million tokens")
    if value < 0:
        raise PricingError(key, "a price cannot be negative")
    return float(value)


def _price(key: str, entry: Any) -> Price:
    if not isinstance(entry, Mapping):
        raise PricingError(key, "expected a table with input, output and cache_read prices")
    unknown = [str(name) for name in entry if name not in PRICE_FIELDS]
    if unknown:
        raise PricingError(f"{key}.{unknown[0]}", f"unknown price field (expected {', '.join(PRICE_FIELDS)})")
    for required in ("input", "output"):
        if required not in entry:
            raise PricingError(f"{key}.{required}", "missing (every model needs input and output prices)")
    inp = _number(f"{key}.input", entry["input"])
    out = _number(f"{key}.output", entry["output"])
    cached = _number(f"{key}.cache_read", entry["cache_read"]) if "cache_read" in entry else inp
    return Price(inp, out, cached)


def parse_pricing(table: Any) -> dict[tuple[str, str], Price]:
    """``(provider, model) → Price`` from the ``observability.pricing`` value.

    Raises:
        PricingError: a value is negative, not a number, or the table has the wrong shape; the
            error names the dotted key.
    """
    if table is None:
        return {}
    if not isinstance(table, Mapping):
        raise PricingError(KEY, "expected a table of provider/model entries")
    prices: dict[tuple[str, str], Price] = {}
    for name, entry in table.items():
        key = f"{KEY}.{name}"
        if not isinstance(name, str) or not name:
            raise PricingError(key, "expected a provider/model name")
        if "/" in name:
            provider, model = name.split("/", 1)
            prices[(provider, model)] = _price(key, entry)
        elif isinstance(entry, Mapping) and entry and all(isinstance(v, Mapping) for v in entry.values()):
            for model, sub in entry.items():
                prices[(name, str(model))] = _price(f"{key}.{model}", sub)
        else:
            raise PricingError(key, "expected 'provider/model' or a provider table of models")
    return prices


def pricing_problem(value: Any) -> str | None:
    """Why ``value`` is not a usable price table (for ``config set``), or ``None``."""
    try:
        parse_pricing(value)
    except PricingError as exc:
        return str(exc)
    return None
