"""The paired blocks of ``bench/bench_exporters.py`` (``bench/_paired.py``, issue #29): the Relay ratios read as
the median of block ratios with a distribution-free interval.

The verdict of a ratio near its target is only as honest as that interval: it must hold the median as often as it
says (its coverage is the binomial one of its order statistics), never be narrower than the data allow, and the
blocks' orders must not favour either row (as many blocks start with each).
"""

from __future__ import annotations

import random
import statistics
import sys
from math import comb
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._repo import REPO

sys.path.insert(0, str(REPO / "bench"))  # bench scripts import their siblings

import _paired as paired  # noqa: E402

_ratios = st.lists(st.floats(min_value=0.05, max_value=5.0, allow_nan=False), min_size=1, max_size=40)


@settings(max_examples=300, deadline=None)
@given(values=_ratios, level=st.sampled_from([0.5, 0.8, 0.9, 0.95]))
def test_the_interval_holds_the_median_and_states_its_binomial_coverage(values: list[float], level: float) -> None:
    low, high, coverage = paired.median_interval(values, level)
    ordered = sorted(values)
    n = len(values)
    assert low <= statistics.median(values) <= high

    def binomial_coverage(k: int) -> float:  # P(r(k) <= median <= r(n + 1 - k)), straight from the binomial
        return sum(comb(n, i) for i in range(k, n - k + 1)) / 2 ** n

    enough = [k for k in range(1, (n + 1) // 2 + 1) if binomial_coverage(k) >= level]
    k = max(enough) if enough else 1  # the narrowest interval that still reaches the level, else the widest
    assert (low, high) == (ordered[k - 1], ordered[n - k])
    assert coverage == pytest.approx(binomial_coverage(k))
    if n >= 5 and level <= 0.9:  # five values are enough for 90 %
        assert coverage >= level


def test_the_coverage_is_what_it_says_on_noise_of_any_shape() -> None:
    """Simulated blocks (skewed noise, as this VM's drift is): the interval holds the true median at least as
    often as its coverage says, within sampling error."""
    rng = random.Random(29)
    true_median = 0.45
    hits = trials = 0
    coverage = 0.0
    for _ in range(3000):
        values = [true_median * rng.lognormvariate(0, 0.15) for _ in range(8)]
        low, high, coverage = paired.median_interval(values, 0.9)
        hits += low <= true_median <= high
        trials += 1
    assert coverage == pytest.approx(1 - 2 * (1 + 8) / 256)  # eight blocks: the 2nd and the 7th value, 93 %
    assert hits / trials >= coverage - 0.02


@pytest.mark.parametrize(("low", "high", "expected"), [(0.40, 0.49, "met"), (0.40, 0.50, "met"),
                                                       (0.51, 0.60, "over"), (0.45, 0.55, "unsettled"),
                                                       (0.50, 0.55, "unsettled")])
def test_the_verdict_reads_the_whole_interval(low: float, high: float, expected: str) -> None:
    assert paired.verdict(low, high, 0.5) == expected


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="no values"):
        paired.median_interval([])
    with pytest.raises(ValueError, match="level"):
        paired.median_interval([1.0], 1.0)


@settings(max_examples=200, deadline=None)
@given(blocks=st.integers(min_value=1, max_value=60), seed=st.integers(min_value=0, max_value=2**32))
def test_as_many_blocks_start_with_each_row(blocks: int, seed: int) -> None:
    orders = paired.block_orders(blocks, seed)
    assert len(orders) == blocks
    assert sum(orders) - (blocks - sum(orders)) in (0, 1)
    assert orders == paired.block_orders(blocks, seed)  # the printed seed repeats the run


def test_blocks_run_both_rows_in_the_drawn_order_and_report_problems(tmp_path: Path) -> None:
    calls: list[tuple[str, Path]] = []

    def row(side: str, cost: float) -> Any:
        def run(directory: Path) -> float:
            assert directory.is_dir() and directory.parent == tmp_path  # a fresh directory of its own
            calls.append((side, directory))
            return cost

        return run

    result = paired.run_blocks({"ours": row("ours", 45.0), "theirs": row("theirs", 100.0)}, tmp_path, 6, 7,
                               lambda run: run, lambda side, run: "too few lines" if side == "theirs" else None)
    firsts = [calls[2 * i][0] == "ours" for i in range(6)]
    assert firsts == paired.block_orders(6, 7)
    assert {side for side, _ in calls} == {"ours", "theirs"} and len(calls) == 12
    assert result.ratios == [0.45] * 6
    assert len(result.problems) == 6 and all("theirs: too few lines" in p for p in result.problems)
    assert not any(directory.exists() for _, directory in calls)  # outputs deleted after every run
    line = result.line("a / b", 0.5)
    assert "0.45x median over 6 blocks" in line and "MET" in line and "6 of 6 blocks" in line


@pytest.mark.parametrize("blocks", [1, 2, 3, 4])
def test_too_few_blocks_give_no_verdict(blocks: int) -> None:
    """Under five blocks no interval reaches 90 %: the line says so instead of reading a narrower one."""
    result = paired.Blocks([40.0 + i for i in range(blocks)], [100.0] * blocks, [])
    line = result.line("a / b", 0.5)
    assert "NO VERDICT" in line and "MET" not in line and "OVER" not in line
    assert "NO VERDICT" not in paired.Blocks([40.0] * 5, [100.0] * 5, []).line("a / b", 0.5)


def test_the_floor_ratio_is_measured_in_blocks_too_without_relay(tmp_path: Path) -> None:
    """#29's first target (ATOF + ATIF at most 2x the obliged floor) gets paired blocks like the Relay ratios, and
    without Relay: the hermes row and the obliged floor's, back to back, every run's outputs checked."""
    import bench_exporters as bench

    from hermes_pipeline.demo.otlp_receiver import OTLPReceiver

    with OTLPReceiver(discard=True) as receiver:
        lines = bench.paired(bench.Workload(1, 2, 2), tmp_path, receiver, 5, 3, with_otlp=False, with_relay=False)
    assert len(lines) == 2, lines  # no output problem, no Relay line
    assert lines[0].startswith("paired blocks hermes ATOF + ATIF / the obliged floor: ")
    assert lines[1].startswith("paired blocks hermes ATOF + ATIF / the obliged floor without FMT-52's fsync and rename: ")
    assert all("median over 5 blocks" in line and f"(target <= {bench.FLOOR_TARGET}x)" in line for line in lines)
    assert not list(tmp_path.iterdir())  # every block's outputs deleted
