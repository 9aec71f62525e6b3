"""``hermes-pipeline replay --batch`` and ``--ab``: replay a selection of recorded runs on a pool of workers
(spec 06 BOOK-32; issue #28 item 4).

The selection (:mod:`hermes_pipeline.replay.selection`) is read and checked first: bad input is exit 2 with
nothing written. The runs are then replayed on ``--workers`` threads (default: the machine's cores); a Hermes
replay is a ``hermes`` process of its own, so the cores are kept busy. One line per run (verdict, first
divergence, final answer changed, token and cost deltas, in the selection's order) and a summary; ``--diff
json`` gives the same as one JSON document. Exit 0 every run identical, 1 some diverged, 2 bad input.

``--ab A B`` replays every selected run twice, under setting A and under setting B, and says, side by side,
which runs changed outcome (verdict or final answer) between the two. A setting is ``recorded`` (the run as
recorded) or items joined by ``;``: ``skill:NAME=PATH``, ``memory:FILE=PATH``, ``set:KEY=VALUE`` (with
``--live-from N`` for ``set``). Exit 0 no run changed outcome, 1 some did, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

__all__ = ["AB_HELP", "check_selection", "parse_side", "run_ab", "run_batch"]

AB_HELP: Final = ("replay each selected run under setting A and under setting B and show which changed outcome; "
                  "a setting is 'recorded' or items joined by ';': skill:NAME=PATH, memory:FILE=PATH, set:KEY=VALUE "
                  "(e.g. --ab 'skill:notes=v2/SKILL.md' 'skill:notes=v3/SKILL.md', or --live-from 1 --set "
                  "base_url=URL --ab set:model=a set:model=b)")
_KINDS: Final = {"skill": "skill", "memory": "memory", "set": "set"}

One = Callable[[argparse.Namespace, Path, Path | None], Any]
"""Replays one file with the given options and output path (a :class:`~..replay.runner.ReplayResult`)."""


def parse_side(text: str) -> dict[str, list[str]]:
    """One ``--ab`` setting → ``{"skill": [...], "memory": [...], "set": [...]}`` option values.

    Raises:
        TrajectoryError: an item that is not ``KIND:VALUE`` of a known kind.
    """
    from ..replay.errors import TrajectoryError

    out: dict[str, list[str]] = {kind: [] for kind in _KINDS}
    if text.strip() in ("recorded", ""):
        return out
    for item in (part.strip() for part in text.split(";")):
        kind, sep, value = item.partition(":")
        if not item:
            continue
        if not sep or kind.strip() not in _KINDS or not value.strip():
            raise TrajectoryError(f"--ab {item!r}: use recorded, or skill:NAME=PATH, memory:FILE=PATH, "
                                  "set:KEY=VALUE (joined by ';')", key="--ab")
        out[_KINDS[kind.strip()]].append(value.strip())
    return out


def _with_side(args: argparse.Namespace, side: Mapping[str, list[str]]) -> argparse.Namespace:
    copy = argparse.Namespace(**vars(args))
    copy.skill = [*(args.skill or []), *side["skill"]]
    copy.memory = [*(args.memory or []), *side["memory"]]
    copy.set = [*(args.set or []), *side["set"]]
    return copy


def _row(path: Path, result: Any) -> dict[str, Any]:
    """What one line says about a replay."""
    diff = result.diff
    divergence = result.replay.divergences[0] if result.replay.divergences else None
    # the replay's own first divergence (an LLM call whose request differs) says more than the step diff after it
    verdict = diff.verdict if divergence is None else f"diverged at agent step {divergence.step}"
    cost = None if diff.old_cost is None and diff.new_cost is None else \
        round((diff.new_cost or 0.0) - (diff.old_cost or 0.0), 9)
    identical = diff.identical and divergence is None and not result.error
    return {"file": str(path), "id": result.recording.trajectory_id, "identical": identical, "verdict": verdict,
            "first_divergence": {"step": divergence.step, "reason": divergence.reason} if divergence else
            ({"step": diff.diverged_at, "reason": "the new run differs"} if diff.diverged_at else None),
            "answer_changed": diff.old_final != diff.new_final, "old_final": diff.old_final,
            "new_final": diff.new_final,
            "tokens_delta": {key: diff.new_tokens[key] - diff.old_tokens[key] for key in ("prompt", "completion")},
            "cost_delta_usd": cost, "error": result.error,
            "written": str(result.path) if result.path is not None else None}


def _run_all(jobs: list[Callable[[], dict[str, Any]]], workers: int) -> list[dict[str, Any]]:
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(jobs) or 1))) as pool:
        return list(pool.map(lambda job: job(), jobs))


def _job(one: One, args: argparse.Namespace, path: Path, output: Path | None) -> Callable[[], dict[str, Any]]:
    from ..replay.errors import TrajectoryError

    def run() -> dict[str, Any]:
        try:
            return _row(path, one(args, path, output))
        except TrajectoryError as exc:
            return {"file": str(path), "id": path.stem, "identical": False, "verdict": "error", "error": str(exc),
                    "answer_changed": False, "tokens_delta": {"prompt": 0, "completion": 0}, "cost_delta_usd": None,
                    "first_divergence": None}

    return run


def _usd(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.6f}"


def _line(row: Mapping[str, Any]) -> str:
    if row["verdict"] == "error":
        return f"error      {row['id'][:13]:13}  {row['error']}"
    first = row.get("first_divergence")
    where = f": {first['reason'][:200]}" if first and row["verdict"].startswith("diverged at agent") else ""
    mark = "same" if row["identical"] else "DIVERGED"
    tokens = row["tokens_delta"]
    return (f"{mark:10} {row['id'][:13]:13}  {row['verdict']}{where}; answer "
            f"{'CHANGED' if row['answer_changed'] else 'same'}; tokens {tokens['prompt']:+d}/{tokens['completion']:+d}; "
            f"cost {_usd(row['cost_delta_usd'])}")


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    costs = [r["cost_delta_usd"] for r in rows if r.get("cost_delta_usd") is not None]
    return {"total": len(rows), "identical": sum(1 for r in rows if r["identical"]),
            "diverged": sum(1 for r in rows if not r["identical"] and r["verdict"] != "error"),
            "errors": sum(1 for r in rows if r["verdict"] == "error"),
            "changed": sum(1 for r in rows if r.get("answer_changed")),
            "tokens_delta": {k: sum(r["tokens_delta"][k] for r in rows) for k in ("prompt", "completion")},
            "cost_delta_usd": round(sum(costs), 9) if costs else None}


def run_batch(args: argparse.Namespace, files: list[Path], one: One) -> int:
    """Replay ``files`` (already selected and checked) and print the report; the exit code."""
    out_dir = Path(args.output).expanduser() if args.output else None
    jobs = [_job(one, args, path, out_dir / path.name if out_dir is not None else None) for path in files]
    rows = _run_all(jobs, args.workers or os.cpu_count() or 1)
    summary = _summary(rows)
    if args.diff == "json":
        print(json.dumps({"runs": rows, **summary}, indent=2, ensure_ascii=False))
    else:
        for row in rows:
            print(_line(row))
        tokens = summary["tokens_delta"]
        print(f"{summary['total']} runs: {summary['identical']} identical, {summary['diverged']} diverged, "
              f"{summary['errors']} errors; tokens {tokens['prompt']:+d}/{tokens['completion']:+d}; "
              f"cost {_usd(summary['cost_delta_usd'])}")
        print(f"{summary['changed']} of {summary['total']} final answers changed")
    if summary["errors"]:
        return 2
    return 0 if summary["identical"] == summary["total"] else 1


def _outcome(row: Mapping[str, Any]) -> tuple[str, Any]:
    return (row["verdict"] if row["verdict"] == "error" else ("identical" if row["identical"] else "diverged"),
            row.get("new_final"))


def run_ab(args: argparse.Namespace, files: list[Path], one: One, sides: tuple[str, str]) -> int:
    """Replay ``files`` under the two settings and print, side by side, which runs changed outcome."""
    from ..replay.errors import TrajectoryError
    from ..replay.runner import parse_overrides

    parsed = [parse_side(side) for side in sides]  # a bad setting is exit 2 before anything runs
    for side in parsed:
        parse_overrides(side["set"])
        if side["set"] and args.live_from is None:
            raise TrajectoryError("--ab set:KEY=VALUE changes the live steps: give --live-from N and --set "
                                  "base_url=URL too", key="--ab")
    out_dir = Path(args.output).expanduser() if args.output else None
    jobs = [_job(one, _with_side(args, side), path,
                 out_dir / f"{path.stem}.{label}.json" if out_dir is not None else None)
            for path in files for label, side in zip("AB", parsed, strict=True)]
    results = _run_all(jobs, args.workers or os.cpu_count() or 1)
    runs = []
    for index, path in enumerate(files):
        a, b = results[2 * index], results[2 * index + 1]
        runs.append({"file": str(path), "id": a["id"], "a": a, "b": b, "outcome_changed": _outcome(a) != _outcome(b)})
    changed = sum(1 for run in runs if run["outcome_changed"])
    errors = sum(1 for run in runs if "error" in (run["a"]["verdict"], run["b"]["verdict"]))
    if args.diff == "json":
        print(json.dumps({"a": sides[0], "b": sides[1], "runs": runs, "changed": changed, "errors": errors,
                          "total": len(runs)}, indent=2, ensure_ascii=False))
    else:
        print(f"A = {sides[0]}\nB = {sides[1]}")
        for run in runs:
            cells = []
            for row in (run["a"], run["b"]):
                answer = json.dumps(row.get("new_final"), ensure_ascii=False)
                cells.append(f"{_outcome(row)[0]} {answer[:40]}" if row["verdict"] != "error" else "error")
            mark = "CHANGED" if run["outcome_changed"] else "same"
            print(f"{mark:8} {run['id'][:13]:13}  A: {cells[0]:50}  B: {cells[1]}")
        print(f"{changed} of {len(runs)} runs changed outcome between A and B")
    if errors:
        return 2
    return 1 if changed else 0


def check_selection(files: list[Path]) -> None:
    """Nothing to replay is bad input (exit 2)."""
    from ..replay.errors import TrajectoryError

    if not files:
        raise TrajectoryError("the selection holds no recorded run (check the ids, the directory, --since, --skill "
                              "and --failed)", key="--batch")
