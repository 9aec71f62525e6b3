"""The ATIF value mappings' type looks (spec 04 §3.6): the exact-type shortcuts decide as the general look did."""

from __future__ import annotations

import enum
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hermes_pipeline.sinks.atif.values import _is_number, final_metrics, step_metrics


class _Count(enum.IntEnum):
    TEN = 10


class _Ratio(float):
    pass


VALUES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=3),
                   st.sampled_from([_Count.TEN, _Ratio(0.5), b"1", [1], {"n": 1}, 1j]))


@given(VALUES)
def test_is_number_is_the_general_look(value: Any) -> None:
    """§3.6: a metric counts when it is an int or float and not a bool, subclasses included (an IntEnum count)."""
    assert _is_number(value) == (isinstance(value, int | float) and not isinstance(value, bool))


@given(st.dictionaries(st.sampled_from(["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                                        "cost_usd", "reasoning_tokens"]), VALUES))
def test_metrics_of_odd_values(usage: dict[str, Any]) -> None:
    """§3.6: only numbers become metrics; ``final_metrics`` sums the steps whose ``metrics`` is a mapping."""
    metrics = step_metrics(usage)
    numbers = {k: v for k, v in usage.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    if metrics is not None:
        assert all(isinstance(v, int | float) and not isinstance(v, bool) for k, v in metrics.items() if k != "extra")
    if "input_tokens" in numbers:
        assert metrics is not None and metrics["prompt_tokens"] is numbers["input_tokens"]
    steps = [{"metrics": metrics}, {"metrics": None}, {}]
    total = final_metrics(steps, 0)
    assert (total is None) == (metrics is None)
    if total is not None:
        assert total["total_steps"] == 3
