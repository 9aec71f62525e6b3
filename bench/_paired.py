"""Paired blocks: the ratio of two rows measured side by side, block by block, with a distribution-free interval.

``bench_exporters.py`` runs every row once per round, the rows in a rotating order. A row of the standard workload
lasts 0.1-0.3 s and a round 3-4 s, and on a shared 2-vCPU VM the machine's speed moves at that scale: the ratios of
five rounds of one run ranged from 0.34x to 0.60x, and the same row cost 46 us per tool call in one minute and 70 us a
few minutes later. So the ratio of the two rows' medians moves by more than the distance of a verdict to its target.
Here the two rows of one comparison run back to back (a *block*, well under a second), in an order drawn for each
block (half of the blocks each way, shuffled with a printed seed, so neither row always runs first). Each block gives
one ratio of the all-CPU per tool call of the two runs. Drift between blocks cancels in each ratio; what remains is the
drift within a block, in both directions alike.

The figure is the median of the block ratios, and beside it a distribution-free confidence interval for that
median: the order statistics ``[r(k), r(n + 1 - k)]`` with the largest ``k`` whose binomial coverage
``1 - 2 * P(Binomial(n, 1/2) < k)`` is at least the level asked (no assumption on the shape of the noise).
The verdict reads the interval: met when it lies at or under the target, over when it lies above it, and
*unsettled* when it holds the target (more blocks may settle it; the bench says so instead of guessing).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from math import comb
from pathlib import Path
from typing import Any

from _timing import fresh_run

__all__ = ["Blocks", "block_orders", "median_interval", "run_blocks", "verdict"]


def median_interval(values: Sequence[float], level: float = 0.9) -> tuple[float, float, float]:
    """``(low, high, coverage)``: the order-statistic interval for the median of ``values`` with the highest
    ``k`` whose coverage is at least ``level``, and that coverage. With too few values for ``level`` the widest
    interval (the smallest and largest value) and its own coverage. ``ValueError`` for no values or a level
    outside (0, 1)."""
    if not values:
        raise ValueError("no values")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), not {level}")
    ordered = sorted(values)
    n = len(ordered)

    def coverage(k: int) -> float:  # P(r(k) <= median <= r(n + 1 - k)) = 1 - 2 P(B < k), B ~ Binomial(n, 1/2)
        return 1 - 2 * sum(comb(n, i) for i in range(k)) / 2 ** n

    best = 1  # the smallest and the largest value, when even they fall short of the level
    for k in range(2, (n + 1) // 2 + 1):
        if coverage(k) < level:
            break
        best = k
    return ordered[best - 1], ordered[n - best], coverage(best)


def verdict(low: float, high: float, target: float) -> str:
    """``"met"`` when the interval lies at or under ``target``, ``"over"`` when it lies above it, else
    ``"unsettled"``."""
    if high <= target:
        return "met"
    if low > target:
        return "over"
    return "unsettled"


def block_orders(blocks: int, seed: int) -> list[bool]:
    """For each block, whether the first row of the comparison runs first: half of the blocks each way (one more
    first when ``blocks`` is odd), shuffled with ``seed``."""
    orders = [index < (blocks + 1) // 2 for index in range(blocks)]
    random.Random(seed).shuffle(orders)
    return orders


@dataclass
class Blocks:
    """The paired blocks of one comparison: each block's two figures and their ratio."""

    ours: list[float]
    theirs: list[float]
    problems: list[str]

    @property
    def ratios(self) -> list[float]:
        return [a / b for a, b in zip(self.ours, self.theirs)]

    def line(self, label: str, target: float, level: float = 0.9) -> str:
        """One line of the bench's output: the median ratio, its interval, the verdict (none when the blocks are too
        few for an interval of ``level``)."""
        ratios = self.ratios
        low, high, coverage = median_interval(ratios, level)
        at_or_under = sum(r <= target for r in ratios)
        decided = verdict(low, high, target).upper() if coverage >= level else \
            f"NO VERDICT (too few blocks for a {level:.0%} interval: five at least)"
        return (f"paired blocks {label}: {statistics.median(ratios):.2f}x median over {len(ratios)} blocks, "
                f"{coverage:.0%} interval {low:.2f}-{high:.2f}x (target <= {target}x): "
                f"{decided}; {at_or_under} of {len(ratios)} blocks at or under "
                f"{target}x; each block ran the two rows back to back, in a drawn order (all-CPU per tool call: "
                f"ours {statistics.median(self.ours):.1f} us, theirs {statistics.median(self.theirs):.1f} us, "
                f"medians)")


def run_blocks(runs: Mapping[str, Callable[[Path], Any]], root: Path, blocks: int, seed: int,
               figure: Callable[[Any], float], check: Callable[[str, Any], str | None]) -> Blocks:
    """Run ``blocks`` blocks of the two rows ``runs["ours"]`` and ``runs["theirs"]`` (each run by
    :func:`_timing.fresh_run` in a directory of its own under ``root``, as every row of the bench), in the orders of
    :func:`block_orders`. ``figure`` reads a run's all-CPU per tool call, ``check(side, run)`` its outputs (a
    problem's text, or ``None``)."""
    result = Blocks([], [], [])
    for index, ours_first in enumerate(block_orders(blocks, seed)):
        got: dict[str, float] = {}
        for side in (("ours", "theirs") if ours_first else ("theirs", "ours")):
            run = fresh_run(root / f"block{seed}-{index}-{side}", runs[side])
            problem = check(side, run)
            if problem is not None:
                result.problems.append(f"block {index} {side}: {problem}")
            got[side] = figure(run)
        result.ours.append(got["ours"])
        result.theirs.append(got["theirs"])
    return result
