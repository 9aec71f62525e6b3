"""Agent-thread CPU of the sanitized ``request`` field per LLM call on real payloads (issue #29).

The host builds ``pre_api_request``'s ``request`` on the agent's thread at every provider call. On the recorded
Hermes session of ``bench_real_payloads.py`` (55 KB of tool schemas and a 6.6 KB system prompt in every
request, the history growing, KB tool results new in every session) this compares, in one process:

- ``fresh``: :func:`hermes_pipeline.engine.sanitize.build_request_field`, the whole request converted each call;
- ``parts``: :func:`hermes_pipeline.engine.request_field.build_request_field`, each message and tool schema
  converted once per distinct content, the passes put together from the parts (same result, checked here).

Each side gets sessions of its own (each session's user message and tool results carry a session tag, so both
scrub the same amount of new text); the rows alternate per round. Figures: thread CPU (``time.thread_time``)
per LLM call, median over rounds. Run: ``python bench/bench_request_field.py`` (``--sessions``, ``--rounds``;
``--write-results``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_real_payloads import RealWorkload, load_fixture  # noqa: E402

from hermes_pipeline.engine.request_field import build_request_field as parts  # noqa: E402
from hermes_pipeline.engine.sanitize import build_request_field as fresh  # noqa: E402


def _run(build: Callable[[Any], Any], w: RealWorkload, first: int, sessions: int) -> float:
    """Thread CPU per LLM call over ``sessions`` sessions from index ``first``."""
    requests = [request for i in range(first, first + sessions) for request, _, _ in w.session(i).calls]
    start = time.thread_time()
    for request in requests:
        build(request)
    return (time.thread_time() - start) / len(requests)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=10, help="sessions per side and round (default 10)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    args = parser.parse_args(argv)
    w = RealWorkload(load_fixture(), 2 * args.sessions * (args.rounds + 1))
    for i in range(2):  # warm-up session, then the check that both give the same field
        for request, _, _ in w.session(i).calls:
            if parts(request) != fresh(request):
                raise SystemExit("the request fields differ")
    figures: dict[str, list[float]] = {"fresh": [], "parts": []}
    index = 2
    for round_ in range(args.rounds):
        order = [("fresh", fresh), ("parts", parts)]
        for name, build in order if round_ % 2 == 0 else order[::-1]:
            figures[name].append(_run(build, w, index, args.sessions))
            index += args.sessions
    llm_calls = w.llm_calls
    print(f"real payloads: {llm_calls} LLM calls per session, {args.sessions} sessions per side and round, "
          f"{args.rounds} rounds")
    for name, values in figures.items():
        print(f"{name:6s} request field, agent-thread CPU per LLM call: {statistics.median(values) * 1e6:8.1f} us")
    ratio = statistics.median(figures["fresh"]) / statistics.median(figures["parts"])
    print(f"fresh / parts: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_request_field", main))
