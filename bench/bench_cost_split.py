"""Where a tool call's all-CPU comes from: the run and its sessions, each turn, each tool call (issue #29).

``bench_exporters.py`` gives one figure per row: all-CPU per tool call on one workload shape (20 sessions x
10 turns x one LLM call + 10 tool calls). That figure is a sum, and the two sides spend in different places:
what a run costs once with its sessions (flush and shutdown, each session's ATIF file), what each turn costs (the
LLM call, the turn's own scope) and what each tool call costs. This bench runs the same rows on shapes near the
standard one (20 sessions each, more or fewer turns and tool calls) and fits, for every row, the all-CPU of a run
(``time.process_time()``: every thread, in the run's timed window) as

    run = C + turns * T + tool calls * K

by least squares (relative): ``C`` for the run with its 20 sessions, ``T`` per turn, ``K`` per tool call
(microseconds). It prints the three, the fit's largest residual (how well a run is such a sum), and the standard
shape's figure rebuilt from them (``C / 2000 + T / 10 + K`` per tool call), side by side with NeMo Relay's, with
the ratio of each part. The same fit is made for each thread's CPU time inside the run's timed window (the agent's
thread, the publication thread, each sink's writer, the threads of a flush or a shutdown; Relay's native threads
by the names the system gives them), so a part can be followed to the thread that spends it.

Rows: hermes_pipeline ATOF + ATIF and ATOF + ATIF + OTLP (``bench_exporters.hermes_run``), Relay's manual
exporters and its observability plugin with OTLP (``bench_exporters.relay_run``; skipped without
``nemo-relay``). Every shape runs every row once per round, the rows and shapes in a rotating order, each run
after an untimed ``gc.collect()``; figures are medians over rounds. Every run's outputs are checked (all ATOF
lines, one ATIF file per session, nothing dropped).

Run: ``python bench/bench_cost_split.py`` (``--quick``; ``--rounds N``; ``--no-relay``; ``--help``).
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_exporters as base  # noqa: E402
from _relay import Row  # noqa: E402
from _receiver import Receiver, ReceiverProcess  # noqa: E402
from _timing import fresh_run  # noqa: E402

SESSIONS = 20
"""Sessions per run on every shape (the standard workload's): what a run costs once and what its sessions cost are
one part, the rest varies around it."""
SHAPES: tuple[tuple[int, int, int], ...] = ((SESSIONS, 10, 10), (SESSIONS, 5, 10), (SESSIONS, 10, 4), (SESSIONS, 4, 20),
                                           (SESSIONS, 15, 3))
"""``(sessions, turns, tools)`` of the runs: the standard shape first, then shapes near it with more or fewer turns and
tool calls (no shape queues more than the exporters' 10,000 events). Far shapes would mix in what is not linear
(the first turn of a session costs more than a later one); a varying number of sessions would make the fit tell a
run's fixed cost from a session's, which this machine's noise does not allow."""
QUICK_SHAPES: tuple[tuple[int, int, int], ...] = ((6, 4, 6), (6, 2, 6), (6, 4, 2), (6, 2, 12), (6, 6, 2))
PARTS: tuple[str, ...] = ("run + sessions", "per turn", "per tool call")
PAIRS: tuple[tuple[str, str], ...] = (("hermes ATOF + ATIF", "relay ATOF + ATIF (manual exporters)"),
                                      ("hermes ATOF + ATIF + OTLP", "relay ATOF + ATIF + OTLP (obs. plugin)"))
"""The rows of ``bench_exporters.rows()`` this bench runs (``"<side> <configuration>"``), hermes_pipeline's beside the
Relay row it is held against."""


def design(shape: tuple[int, int, int]) -> list[float]:
    """The fit's row of one shape: one run (with its sessions), its turns and its tool calls."""
    sessions, turns, tools = shape
    return [1.0, float(sessions * turns), float(sessions * turns * tools)]


def solve(matrix: Sequence[Sequence[float]], values: Sequence[float]) -> list[float]:
    """The ``x`` of ``matrix @ x = values`` (square, full rank) by Gaussian elimination with partial pivoting.

    Raises ``ValueError`` when the matrix is singular (two shapes that cannot tell the parts apart)."""
    n = len(matrix)
    rows = [[float(v) for v in row] + [float(b)] for row, b in zip(matrix, values)]
    scale = max((abs(v) for row in matrix for v in row), default=0.0)
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(rows[r][col]))
        if abs(rows[pivot][col]) <= 1e-9 * scale:
            raise ValueError("the shapes cannot tell the parts apart (singular system)")
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(n):
            if r != col:
                factor = rows[r][col] / rows[col][col]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col])]
    return [rows[i][n] / rows[i][i] for i in range(n)]


def fit(shapes: Sequence[tuple[int, int, int]], totals: Sequence[float]) -> tuple[list[float], float]:
    """Least-squares ``[C, T, K]`` of runs whose totals are ``totals`` (one per shape), and the largest residual
    relative to its run's total. Each equation is weighted by ``1 / total`` (a relative fit: a short run's
    error counts as much as a long one's)."""
    rows = [[v / total for v in design(shape)] for shape, total in zip(shapes, totals)]
    ones = [1.0] * len(rows)
    n = len(rows[0])
    normal = [[sum(r[i] * r[j] for r in rows) for j in range(n)] for i in range(n)]
    right = [sum(r[i] * o for r, o in zip(rows, ones)) for i in range(n)]
    parts = solve(normal, right)
    worst = max(abs(sum(p * d for p, d in zip(parts, design(shape))) - total) / total
                for shape, total in zip(shapes, totals)) if totals else 0.0
    return parts, worst


def per_tool_call(parts: Sequence[float], shape: tuple[int, int, int]) -> list[float]:
    """Each part's share of one tool call in ``shape``: the run's (with its sessions) / calls, a turn's / tool calls per
    turn, a tool call's."""
    sessions, turns, tools = shape
    return [parts[0] / (sessions * turns * tools), parts[1] / tools, parts[2]]


def _task_cpu() -> dict[int, tuple[str, int]]:
    """Every thread of this process: native id -> (name, CPU ns so far), from ``/proc/self/task/*/schedstat``."""
    out: dict[int, tuple[str, int]] = {}
    for entry in os.scandir("/proc/self/task"):
        try:
            with open(f"{entry.path}/schedstat") as stat, open(f"{entry.path}/comm") as comm:
                out[int(entry.name)] = (comm.read().strip(), int(stat.read().split()[0]))
        except (OSError, ValueError, IndexError):  # the thread ended meanwhile
            continue
    return out


def thread_group(name: str) -> str:
    """A thread's group in the tables: its name without the trailing number and the ``hermes-export`` prefix."""
    name = name.split(" (")[0].rstrip("0123456789-_ ").removeprefix("hermes-export")
    return name.lstrip(":-") or "other"


class ThreadClock:
    """The CPU time each thread spends inside a run's timed window (the window of ``bench_exporters.Timed``).

    The window's start and end read every thread's CPU time from ``/proc/self/task``; a thread that ends inside
    the window (the writer threads of a hermes_pipeline run end with its shutdown) reads its own as it ends
    (``threading.Thread.run`` is wrapped while the clock is installed). A thread's share is its CPU time at
    the end (or at its end) minus that at the start (0 when it started inside the window)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._run = threading.Thread.run
        self._timed = base.Timed
        self._start: dict[int, int] = {}
        """Native thread id -> CPU ns at the window's start."""
        self._ended: list[tuple[int, str, int]] = []
        self._main = threading.get_native_id()
        self.last: dict[str, float] = {}
        """The microseconds of each thread group in the last window."""

    def __enter__(self) -> ThreadClock:
        run, clock = self._run, self

        def timed_run(thread: threading.Thread) -> None:
            try:
                run(thread)
            finally:
                with clock._lock:
                    clock._ended.append((threading.get_native_id(), thread.name, time.thread_time_ns()))

        class Window(self._timed):  # type: ignore[misc, valid-type]
            def __init__(self) -> None:
                clock._open()
                super().__init__()

            def stop(self) -> None:
                super().stop()
                clock._close()

        threading.Thread.run = timed_run  # type: ignore[method-assign]
        base.Timed = Window  # type: ignore[misc]
        return self

    def __exit__(self, *exc: object) -> None:
        threading.Thread.run = self._run  # type: ignore[method-assign]
        base.Timed = self._timed  # type: ignore[misc]

    def _open(self) -> None:
        with self._lock:
            self._ended = []
        self._start = {tid: ns for tid, (_, ns) in _task_cpu().items()}

    def _close(self) -> None:
        end = _task_cpu()
        with self._lock:
            ended, self._ended = self._ended, []
        seconds: dict[str, float] = defaultdict(float)
        seen = set()
        for tid, name, ns in ended:
            seen.add(tid)
            seconds[thread_group(name)] += (ns - self._start.get(tid, 0)) / 1e3
        for tid, (name, ns) in end.items():
            if tid in seen:
                continue
            group = "agent (main thread)" if tid == self._main else thread_group(name)
            seconds[group] += (ns - self._start.get(tid, 0)) / 1e3
        self.last = {name: us for name, us in seconds.items() if us > 0}


def row_name(row: Row) -> str:
    return f"{row.side} {row.config}"


def sides(with_relay: bool) -> list[Row]:
    """The rows of :data:`PAIRS` (Relay's only ``with_relay``), as ``bench_exporters.rows()`` defines them."""
    by_name = {row_name(row): row for row in base.rows(with_relay)}
    return [by_name[name] for name in (*(ours for ours, _ in PAIRS), *(theirs for _, theirs in PAIRS))
            if name in by_name]


def measure(rows: list[Row], shapes: Sequence[tuple[int, int, int]], rounds: int, root: Path,
            receiver: Receiver) -> tuple[dict[tuple[int, int], list[float]],
                                             dict[tuple[int, int], list[dict[str, float]]], list[str]]:
    """All-CPU microseconds of every (row, shape) run, per round, and each thread group's microseconds."""
    totals: dict[tuple[int, int], list[float]] = defaultdict(list)
    threads: dict[tuple[int, int], list[dict[str, float]]] = defaultdict(list)
    problems: list[str] = []
    cells = [(r, s) for s in range(len(shapes)) for r in range(len(rows))]
    with ThreadClock() as clock:
        for number in range(rounds + 1):  # round 0 warms up
            for r, s in cells[number % len(cells):] + cells[:number % len(cells)]:
                w = base.Workload(*shapes[s])
                run = fresh_run(root / f"{number}-{r}-{s}", partial(rows[r].fn, w, receiver=receiver))
                if run.atof_lines != w.events() or run.atif_files != w.sessions or run.dropped:
                    problems.append(f"round {number} {row_name(rows[r])} {shapes[s]}: {run.atof_lines}/{w.events()} "
                                    f"ATOF lines, {run.atif_files}/{w.sessions} ATIF files, {run.dropped} dropped")
                if not number:
                    continue
                totals[(r, s)].append(run.process * 1e6)
                threads[(r, s)].append(clock.last)
    return totals, threads, problems


def spreads(shapes: Sequence[tuple[int, int, int]], runs: Sequence[Sequence[float]]) -> list[tuple[float, float]]:
    """For each part (per tool call of the standard shape), the lowest and highest value of the fits made round by
    round (``runs[s][k]``: shape ``s`` in round ``k``)."""
    rounds = min(len(per_shape) for per_shape in runs)
    fits = [per_tool_call(fit(shapes, [per_shape[k] for per_shape in runs])[0], shapes[0]) for k in range(rounds)]
    return [(min(values), max(values)) for values in zip(*fits)] if fits else []


def report(rows: list[Row], shapes: Sequence[tuple[int, int, int]], totals: dict[tuple[int, int], list[float]],
           threads: dict[tuple[int, int], list[dict[str, float]]]) -> list[str]:
    med = statistics.median
    standard = shapes[0]
    fitted: dict[int, list[float]] = {}
    lines = [f"{'row':<40} {'C run+sessions':>14} {'T per turn':>10} {'K per tool':>10} "
             f"{'worst fit':>9} {'rebuilt us/tc':>13} {'measured us/tc':>14}"]
    calls = standard[0] * standard[1] * standard[2]
    for r, row in enumerate(rows):
        parts, worst = fit(shapes, [med(totals[(r, s)]) for s in range(len(shapes))])
        fitted[r] = parts
        lines.append(f"{row_name(row):<40} {parts[0]:>14.0f} {parts[1]:>10.1f} {parts[2]:>10.1f} "
                     f"{worst:>8.1%} {sum(per_tool_call(parts, standard)):>13.1f} "
                     f"{med(totals[(r, 0)]) / calls:>14.1f}")
    lines += ["", f"each part per tool call of the standard shape {standard} (us; C / {calls}, T / {standard[2]}, K), "
                  "in brackets its range over the rounds fitted one by one (how far this machine's noise moves it):",
              f"{'row':<40} " + " ".join(f"{p:>22}" for p in PARTS)]
    for r, row in enumerate(rows):
        spread = spreads(shapes, [totals[(r, s)] for s in range(len(shapes))])
        lines.append(f"{row_name(row):<40} " + " ".join(f"{v:>7.1f} [{lo:>5.1f}, {hi:>5.1f}]" for v, (lo, hi) in
                                                   zip(per_tool_call(fitted[r], standard), spread)))
    index = {row_name(row): r for r, row in enumerate(rows)}
    for mine, theirs in PAIRS:
        if mine not in index or theirs not in index:
            continue
        ratios = " ".join(f"{p} {a / b:.2f}x" if a > 0 and b > 0 else f"{p} -" for p, a, b in
                          zip(PARTS, per_tool_call(fitted[index[mine]], standard),
                              per_tool_call(fitted[index[theirs]], standard)))
        lines.append(f"{mine} / {theirs}: {ratios}")
    for r, row in enumerate(rows):
        names = sorted({name for runs in (threads[(r, s)] for s in range(len(shapes))) for run in runs for name in run})
        total = 0.0
        lines += ["", f"{row_name(row)}, by thread (us per tool call of the standard shape):",
                  f"{'thread':<40} " + " ".join(f"{p:>13}" for p in PARTS) + f" {'sum':>8}"]
        for name in names:
            per_shape = [med(run.get(name, 0.0) for run in threads[(r, s)]) for s in range(len(shapes))]
            if max(per_shape) <= 0:
                continue
            floor = [max(v, 1e-3) for v in per_shape]  # a thread absent from some shapes: fit on a tiny value
            parts = per_tool_call(fit(shapes, floor)[0], standard)
            lines.append(f"{name:<40} " + " ".join(f"{v:>13.1f}" for v in parts) + f" {sum(parts):>8.1f}")
            total += sum(parts)
        lines.append(f"{'(every thread: all-CPU ' + format(sum(per_tool_call(fitted[r], standard)), '.1f') + ')':<40} "
                     f"{'':>41} {total:>8.1f}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small shapes and 2 rounds")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 5; --quick 2), +1 warm-up")
    parser.add_argument("--no-relay", action="store_true", help="skip the NeMo Relay rows")
    args = parser.parse_args(argv)
    shapes = QUICK_SHAPES if args.quick else SHAPES
    rounds = args.rounds or (2 if args.quick else 5)
    with_relay = base.relay is not None and not args.no_relay
    logging.getLogger("hermes_pipeline").setLevel(logging.ERROR)
    rows = sides(with_relay)
    print(f"shapes (sessions, turns, tool calls per turn): {', '.join(map(str, shapes))}; {rounds} rounds "
          f"(+1 warm-up), medians; all-CPU = time.process_time() of the run (every thread)")
    if base.RELAY_MISSING:
        print(base.RELAY_MISSING)
    with tempfile.TemporaryDirectory(prefix="bench-cost-split-") as tmp, ReceiverProcess() as receiver:
        totals, threads, problems = measure(rows, shapes, rounds, Path(tmp), receiver)
    for line in report(rows, shapes, totals, threads):
        print(line)
    for problem in problems:
        print("PROBLEM:", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_cost_split", main))
