"""Tiny timing helpers shared by the benchmarks: medians of per-call nanoseconds, a yardstick, and one run of a row."""

from __future__ import annotations

import gc
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pluggy


def per_call_ns(fn: Callable[[], object], *, inner: int = 2000, rounds: int = 31,
                clock: Callable[[], int] = time.perf_counter_ns) -> float:
    """Median over ``rounds`` of the mean time of ``inner`` back-to-back calls, in nanoseconds.

    ``clock`` is wall time by default; ``time.thread_time_ns`` counts only the calling thread's CPU
    (what the caller itself spends, without time waiting for the GIL while writer threads work).
    """
    for _ in range(inner // 10):  # warm-up
        fn()
    samples = []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):
            start = clock()
            for _ in range(inner):
                fn()
            samples.append((clock() - start) / inner)
    finally:
        if gc_was_enabled:
            gc.enable()
    return statistics.median(samples)


def per_call_thread_ns(fn: Callable[[], object], *, inner: int = 2000, rounds: int = 31) -> float:
    """:func:`per_call_ns` on the calling thread's CPU clock."""
    return per_call_ns(fn, inner=inner, rounds=rounds, clock=time.thread_time_ns)


def interleaved(cases: list[tuple[str, Callable[[], object]]], *, inner: int = 2000,
                rounds: int = 31) -> list[tuple[str, float]]:
    """Median per-call ns of each case, measured round-robin so that load changes hit every case alike.

    Each round times ``inner`` back-to-back calls of every case in turn; the result per case is the
    median over rounds. On a shared, noisy machine this keeps the ratios between cases meaningful.
    """
    for _, fn in cases:  # warm-up
        for _ in range(inner // 10):
            fn()
    samples: dict[str, list[float]] = {name: [] for name, _ in cases}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):
            for name, fn in cases:
                start = time.perf_counter_ns()
                for _ in range(inner):
                    fn()
                samples[name].append((time.perf_counter_ns() - start) / inner)
    finally:
        if gc_was_enabled:
            gc.enable()
    return [(name, statistics.median(samples[name])) for name, _ in cases]


T = TypeVar("T")


def fresh_run(directory: Path, run: Callable[[Path], T], inspect: Callable[[Path], object] | None = None) -> T:
    """One run of a row: ``run(directory)`` in a new ``directory`` (made here), after a ``gc.collect()`` (set-up:
    each row starts from a collected heap, so the collections it pays for are its own, never a full one that the
    garbage of the rows before it made due); ``inspect(directory)`` looks at its outputs before they are deleted."""
    directory.mkdir()
    gc.collect()
    try:
        result = run(directory)
        if inspect is not None:
            inspect(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return result


def table(rows: list[tuple[str, float]], *, baseline: float | None = None) -> str:
    """Rows as text: name, median ns, ratio to the first row, added ns over the first row."""
    base = rows[0][1] if baseline is None else baseline
    width = max(len(name) for name, _ in rows)
    lines = [f"{'case':<{width}}  {'median ns':>10}  {'ratio':>7}  {'added ns':>9}"]
    for name, ns in rows:
        lines.append(f"{name:<{width}}  {ns:>10.0f}  {ns / base:>7.2f}  {ns - base:>9.0f}")
    return "\n".join(lines)


def pluggy_reference() -> Callable[[], object]:
    """A pluggy hook call with one no-op implementation: a yardstick for this machine's speed right now."""
    spec, impl = pluggy.HookspecMarker("bench"), pluggy.HookimplMarker("bench")

    class Spec:
        @spec
        def post_tool_call(self, tool_name: str, result: str) -> None: ...

    class Impl:
        @impl
        def post_tool_call(self, tool_name: str, result: str) -> None:
            return None

    manager = pluggy.PluginManager("bench")
    manager.add_hookspecs(Spec)
    manager.register(Impl())
    hook = manager.hook.post_tool_call
    return lambda: hook(tool_name="read_file", result="contents")
