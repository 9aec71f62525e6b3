"""``cost_usd`` (spec 06 BOOK-26): the provider's reported cost, else the operator's price table, else NULL;
aggregations ignore NULL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_pipeline.export.call_cost import call_cost, parse_pricing

from ._support import rows, store

PRICES = {"openai/m1": {"input": 2.0, "output": 8.0, "cache_read": 0.5}}


def _response(usage: dict[str, Any], model: str = "m1") -> dict[str, Any]:
    return {"id": "r", "model": model, "usage": usage,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "x"}}]}


def _run(home: Path, responses: list[dict[str, Any]], **settings: Any) -> None:
    with store(home, **settings) as (host, handle):
        with host.session() as session, session.turn("go") as turn:
            for response in responses:
                turn.call_llm({"model": response["model"], "messages": []}, lambda request, r=response: r)
            turn.complete("ok")


def test_provider_reported_cost_wins_over_the_table(tmp_path: Path) -> None:
    _run(tmp_path, [_response({"prompt_tokens": 1000, "completion_tokens": 10, "cost": 0.25})], pricing=PRICES)
    assert rows(tmp_path, "SELECT cost_usd FROM llm_calls") == [(0.25,)]


def test_the_price_table_prices_input_cache_reads_and_output(tmp_path: Path) -> None:
    """1 000 000 input tokens of which 400 000 cached, 100 000 output: 0.6*2 + 0.4*0.5 + 0.1*8 = 2.2 USD."""
    _run(tmp_path, [_response({"prompt_tokens": 1_000_000, "completion_tokens": 100_000,
                               "prompt_tokens_details": {"cached_tokens": 400_000}})], pricing=PRICES)
    ((cost, cached),) = rows(tmp_path, "SELECT cost_usd, cache_read_tokens FROM llm_calls")
    assert cached == 400_000 and cost == pytest.approx(2.2)


def test_unknown_model_is_null_and_sums_ignore_null(tmp_path: Path) -> None:
    """A model without a price and without a reported cost: NULL (never 0); the run's cost is the sum of
    the known ones; a run with none known has NULL cost."""
    _run(tmp_path, [_response({"prompt_tokens": 1_000_000, "completion_tokens": 0}),
                    _response({"prompt_tokens": 10, "completion_tokens": 10}, model="unpriced")], pricing=PRICES)
    assert rows(tmp_path, "SELECT model, cost_usd FROM llm_calls ORDER BY id") == [("m1", 2.0), ("unpriced", None)]
    assert rows(tmp_path, "SELECT cost_usd FROM task_runs") == [(2.0,)]
    _run(tmp_path / "none", [_response({"prompt_tokens": 10, "completion_tokens": 10})])
    assert rows(tmp_path / "none", "SELECT cost_usd FROM task_runs") == [(None,)]
    assert rows(tmp_path, "SELECT SUM(cost_usd), COUNT(cost_usd) FROM llm_calls") == [(2.0, 1)]


def test_nested_and_flat_tables_agree() -> None:
    nested = parse_pricing({"openai": {"m1": {"input": 2.0, "output": 8.0}}})
    flat = parse_pricing({"openai/m1": {"input": 2.0, "output": 8.0}})
    assert nested == flat and nested[("openai", "m1")].cache_read == 2.0  # cache reads default to the input price


@given(inp=st.integers(0, 10**8), cached=st.integers(0, 10**8), out=st.integers(0, 10**8),
       prices=st.tuples(*(st.floats(0, 1000, allow_nan=False) for _ in range(3))))
def test_table_cost_is_the_linear_formula(inp: int, cached: int, out: int, prices: tuple[float, float, float]) -> None:
    table = parse_pricing({"p/m": {"input": prices[0], "output": prices[1], "cache_read": prices[2]}})
    cost = call_cost({"input_tokens": inp, "cache_read_tokens": cached, "output_tokens": out}, None, "p", "m", table)
    c = min(cached, inp)
    assert cost == pytest.approx(((inp - c) * prices[0] + c * prices[2] + out * prices[1]) / 1e6)
    assert cost is not None and cost >= 0
    assert call_cost({"input_tokens": inp}, None, "p", "other", table) is None
