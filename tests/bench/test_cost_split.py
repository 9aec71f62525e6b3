"""The cost split's arithmetic and its thread clock (``bench/bench_cost_split.py``, issue #29).

The bench reads a row's all-CPU per tool call as a sum of three parts fitted over several workload shapes; that
reading is only honest if the fit gives back the parts of runs that are such sums, if its shapes can tell the
parts apart, and if the thread clock charges each thread the CPU it spent inside the run's window and no more.
"""

from __future__ import annotations

import sys
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._repo import REPO

sys.path.insert(0, str(REPO / "bench"))  # bench scripts import their siblings

import bench_cost_split as split  # noqa: E402
import bench_exporters as base  # noqa: E402

pytestmark = pytest.mark.skipif(not split.os.path.isdir("/proc/self/task"), reason="needs Linux /proc")

_part = st.floats(min_value=0.5, max_value=50_000.0, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(run=_part, turn=_part, call=_part, quick=st.booleans())
def test_runs_that_are_sums_give_back_their_parts(run: float, turn: float, call: float, quick: bool) -> None:
    shapes = split.QUICK_SHAPES if quick else split.SHAPES
    totals = [sum(p * d for p, d in zip((run, turn, call), split.design(shape))) for shape in shapes]
    parts, worst = split.fit(shapes, totals)
    assert parts == pytest.approx([run, turn, call], rel=1e-6, abs=1e-6)
    assert worst < 1e-9
    rebuilt = sum(split.per_tool_call(parts, shapes[0]))
    sessions, turns, tools = shapes[0]
    assert rebuilt == pytest.approx(totals[0] / (sessions * turns * tools), rel=1e-9)


@settings(max_examples=100, deadline=None)
@given(noise=st.lists(st.floats(min_value=-0.2, max_value=0.2), min_size=5, max_size=5))
def test_the_worst_residual_is_the_largest_relative_miss(noise: list[float]) -> None:
    shapes = split.SHAPES
    exact = [sum(p * d for p, d in zip((12_000.0, 150.0, 30.0), split.design(shape))) for shape in shapes]
    totals = [value * (1 + n) for value, n in zip(exact, noise)]
    parts, worst = split.fit(shapes, totals)
    misses = [abs(sum(p * d for p, d in zip(parts, split.design(shape))) - total) / total
              for shape, total in zip(shapes, totals)]
    assert worst == pytest.approx(max(misses))
    # least squares (relative): no worse in the sum of squares than the parts the totals were made from
    exact_misses = [abs(n) / (1 + n) for n in noise]
    assert sum(m * m for m in misses) <= sum(m * m for m in exact_misses) + 1e-12


def test_shapes_that_cannot_tell_the_parts_apart_are_refused() -> None:
    same_calls_per_turn = [(20, 10, 10), (20, 5, 10), (20, 2, 10)]  # tool calls a fixed multiple of turns
    with pytest.raises(ValueError, match="singular"):
        split.fit(same_calls_per_turn, [1.0, 2.0, 3.0])


def test_fmt80_every_shape_stays_below_the_exporters_queue() -> None:
    for shape in (*split.SHAPES, *split.QUICK_SHAPES):  # a full bounded queue drops (FMT-80): never measured here
        assert base.Workload(*shape).events() <= 10_000
    assert split.SHAPES[0] == (20, 10, 10)  # the standard shape of bench_exporters.py


@pytest.mark.parametrize(("name", "group"), [
    ("hermes-export:atof.sinks[0]", "atof.sinks[0]"), ("hermes-export:publication", "publication"),
    ("hermes-export-flush", "flush"), ("Thread-12 (process_request_thread)", "Thread"),
    ("nemo-relay-subs", "nemo-relay-subs"),
])
def test_threads_are_grouped_by_name_without_their_number(name: str, group: str) -> None:
    assert split.thread_group(name) == group


def test_the_clock_charges_a_thread_its_cpu_inside_the_window_only() -> None:
    before = threading.Event()
    inside = threading.Event()

    def spin(seconds: float) -> None:
        end = time.thread_time() + seconds
        while time.thread_time() < end:
            pass

    def worker() -> None:
        spin(0.15)  # before the window: not charged
        before.set()
        inside.wait(10)
        spin(0.10)  # inside the window

    with split.ThreadClock() as clock:
        thread = threading.Thread(target=worker, name="hermes-export:probe")
        thread.start()
        assert before.wait(10)
        timed = base.Timed()  # the window opens (bench_exporters' clocks, as every row makes them)
        inside.set()
        thread.join(10)
        spin(0.05)
        timed.stop()
    assert base.Timed is clock._timed  # restored
    charged = clock.last
    assert 0.09e6 <= charged["probe"] <= 0.13e6, charged
    assert 0.045e6 <= charged["agent (main thread)"] <= 0.2e6, charged


def test_the_rows_are_bench_exporters_own() -> None:
    rows = split.sides(with_relay=True)
    names = [split.row_name(row) for row in rows]
    assert names[:2] == ["hermes ATOF + ATIF", "hermes ATOF + ATIF + OTLP"]
    theirs = {split.row_name(row): row for row in base.rows(True)}
    for row in rows:  # the same runs and checks as bench_exporters.py
        same = theirs[split.row_name(row)]
        assert (row.fn.func, row.fn.keywords, row.files, row.otlp) == \
            (same.fn.func, same.fn.keywords, same.files, same.otlp)
    assert [split.row_name(row) for row in split.sides(with_relay=False)] == names[:2]
