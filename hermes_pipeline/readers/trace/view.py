"""Read an exported trace (ATOF JSON Lines or an ATIF trajectory) and render it as a tree.

The "which step was slow / heavy / failed" view behind ``hermes-pipeline trace show``:

    trace = load_trace(Path("hermes-events-20260901T101500Z.jsonl"))   # or an ATIF .json file
    print(render_trace(trace, color=False, slowest=5))

Reading lives in :mod:`~hermes_pipeline.readers.trace.formats` (ATOF pairing and nesting, ATIF steps,
tool results and embedded subagents), the tree in :mod:`~hermes_pipeline.readers.trace.model`; this
module renders.

The slowest LLM call or tool call and the heaviest LLM call (most tokens) are marked, and failed,
blocked and cancelled scopes are flagged. Problems reading a file raise :class:`TraceFileError`
with a one-line message. Reads files only; imports no sink.
"""

from __future__ import annotations

from typing import Any, Final

from .formats import load_trace
from .model import PROBLEMS, WORK_KINDS, Trace, TraceFileError, TraceNode

__all__ = ["Trace", "TraceFileError", "TraceNode", "load_trace", "mark_outliers", "render_trace", "trace_data"]

_RESET: Final = "\033[0m"
_RED: Final = "\033[31m"
_YELLOW: Final = "\033[33m"
_GREEN: Final = "\033[32m"
_MAGENTA: Final = "\033[35;1m"
_DIM: Final = "\033[2m"


def _duration(node: TraceNode) -> str:
    if node.duration_ms is None:
        return ""
    ms = node.duration_ms
    text = f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.3f} s"
    return ("~" if node.approx else "") + text


def _paint(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{_RESET}" if color and text else text


def mark_outliers(trace: Trace) -> tuple[TraceNode | None, TraceNode | None]:
    """Flag the slowest LLM/tool call and the heaviest LLM call (most tokens); returns them."""
    work = [n for n in trace.nodes() if n.kind in WORK_KINDS]
    timed = [n for n in work if n.duration_ms is not None]
    slowest = max(timed, key=lambda n: n.duration_ms or 0.0, default=None)
    weighed = [n for n in work if n.tokens is not None]
    heaviest = max(weighed, key=lambda n: n.tokens or 0, default=None)
    if slowest is not None and "slowest" not in slowest.flags:
        slowest.flags.append("slowest")
    if heaviest is not None and heaviest.tokens and "heaviest" not in heaviest.flags:
        heaviest.flags.append("heaviest")
    return slowest, heaviest


def _line(node: TraceNode, color: bool) -> str:
    parts = [node.label]
    if node.status:
        problem = PROBLEMS.get(node.status)
        if problem:
            parts.append(_paint(f"✗ {problem}" if problem != "OPEN" else "OPEN",
                                _RED if problem == "FAILED" else _YELLOW, color))
        else:
            parts.append(_paint(node.status, _GREEN if node.status == "ok" else "", color))
    if node.detail:
        parts.append(_paint(node.detail, _DIM, color))
    if node.tokens is not None:
        parts.append(f"tokens in {node.tokens_in or 0} / out {node.tokens_out or 0}")
    if node.duration_ms is not None:
        parts.append(_duration(node))
    if "slowest" in node.flags:
        parts.append(_paint("◀ slowest", _MAGENTA, color))
    if "heaviest" in node.flags:
        parts.append(_paint(f"◀ heaviest ({node.tokens} tokens)", _MAGENTA, color))
    return "  ".join(parts)


def render_trace(trace: Trace, *, color: bool = False, slowest: int = 0) -> str:
    """The tree as text, a problem summary and, with ``slowest > 0``, the N slowest scopes."""
    mark_outliers(trace)
    lines = [trace.summary]

    def emit(node: TraceNode, prefix: str, last: bool, top: bool) -> None:
        lines.append((prefix + ("└─ " if last else "├─ ") if not top else "") + _line(node, color))
        inner = prefix + ("   " if last else "│  ") if not top else ""
        for index, child in enumerate(node.children):
            emit(child, inner, index == len(node.children) - 1, False)

    for root in trace.roots:
        emit(root, "", True, True)
    problems: dict[str, int] = {}
    for node in trace.nodes():
        problem = PROBLEMS.get(node.status or "")
        if problem:
            problems[problem] = problems.get(problem, 0) + 1
    lines.append("problems: " + (", ".join(f"{count} {name.lower()}" for name, count in sorted(problems.items()))
                                 if problems else "none"))
    if slowest > 0:
        timed = sorted((n for n in trace.nodes() if n.duration_ms is not None and n.kind != "mark"),
                       key=lambda n: -(n.duration_ms or 0.0))[:slowest]
        lines.append(f"slowest {len(timed)} scope(s):")
        for rank, node in enumerate(timed, 1):
            lines.append(f"  {rank:>2}. {_duration(node):>10}  {node.label}")
    return "\n".join(lines) + "\n"


def _node_data(node: TraceNode) -> dict[str, Any]:
    return {"kind": node.kind, "label": node.label, "status": node.status,
            "problem": PROBLEMS.get(node.status or ""), "detail": node.detail or None,
            "duration_ms": node.duration_ms, "approximate_duration": node.approx, "tokens_in": node.tokens_in,
            "tokens_out": node.tokens_out, "tokens": node.tokens, "flags": list(node.flags),
            "children": [_node_data(child) for child in node.children]}


def _problem_counts(trace: Trace) -> dict[str, int]:
    problems: dict[str, int] = {}
    for node in trace.nodes():
        problem = PROBLEMS.get(node.status or "")
        if problem:
            problems[problem.lower()] = problems.get(problem.lower(), 0) + 1
    return dict(sorted(problems.items()))


def trace_data(trace: Trace, *, slowest: int = 0) -> dict[str, Any]:
    """The tree of :func:`render_trace` as JSON-compatible data (``trace show --json``).

    Keys: ``format``, ``path``, ``summary``, ``roots`` (nested nodes: ``kind``, ``label``, ``status``,
    ``problem``, ``detail``, ``duration_ms``, ``approximate_duration``, ``tokens_in`` / ``tokens_out`` /
    ``tokens``, ``flags`` with ``slowest`` / ``heaviest``, ``children``), ``problems`` (count per kind)
    and, with ``slowest > 0``, ``slowest`` (the N slowest scopes: ``label`` and ``duration_ms``).
    """
    mark_outliers(trace)
    data: dict[str, Any] = {"format": trace.format, "path": str(trace.path), "summary": trace.summary,
                            "roots": [_node_data(root) for root in trace.roots], "problems": _problem_counts(trace)}
    if slowest > 0:
        timed = sorted((n for n in trace.nodes() if n.duration_ms is not None and n.kind != "mark"),
                       key=lambda n: -(n.duration_ms or 0.0))[:slowest]
        data["slowest"] = [{"label": n.label, "duration_ms": n.duration_ms} for n in timed]
    return data
