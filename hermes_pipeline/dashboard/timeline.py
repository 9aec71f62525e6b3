"""A run's steps on a time axis with their real durations (no I/O, no HTML but the timeline's own table).

A step's timestamp in ATIF is when it ended (an agent step: when the provider answered), so the gap to
the next step is not the step's duration. The timeline rebuilds what took the time:

- LLM latency: from the end of what came before (the user's message, or the previous step's tools)
  to the agent step's timestamp;
- tool time: each tool result's own ``duration_ms``, one after the other from the agent step;
- waiting for approval: a tool's ``approval.waited_ms`` (inside the tool's time, shown apart).

Cost per step is the run's stored cost shared by the step's tokens (marked "≈": the store keeps cost
per provider call, not per step in the file).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from .html import cost, e, num

__all__ = ["segments", "timeline_html"]

WIDTH: Final = 420
"""Pixels of the time axis in each row's bar."""


def _seconds(stamp: Any) -> float | None:
    try:
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except (TypeError, ValueError):
        return None


def _ms(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0 else None


def segments(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The timed segments of ``doc``'s top-level steps, in order: ``kind`` (``llm``, ``tool``, ``approval``,
    ``user``), ``step``, ``label``, ``start`` and ``end`` in seconds from the run's first step, ``tokens``."""
    steps = [s for s in doc.get("steps") or [] if isinstance(s, dict)]
    times = [_seconds(s.get("timestamp")) for s in steps]
    known = [t for t in times if t is not None]
    if not known:
        return []
    origin, cursor = known[0], known[0]
    out: list[dict[str, Any]] = []
    for step, at in zip(steps, times):
        if at is None:
            continue
        if step.get("source") != "agent":
            out.append({"kind": "user", "step": step.get("step_id"), "label": str(step.get("source")),
                        "start": at - origin, "end": at - origin, "tokens": None})
            cursor = max(cursor, at)
            continue
        metrics = step.get("metrics") if isinstance(step.get("metrics"), dict) else {}
        tokens = sum(v for v in (metrics.get("prompt_tokens"), metrics.get("completion_tokens"))
                     if isinstance(v, int) and not isinstance(v, bool)) if metrics else None
        out.append({"kind": "llm", "step": step.get("step_id"), "label": str(step.get("model_name") or "LLM"),
                    "start": min(cursor, at) - origin, "end": at - origin, "tokens": tokens})
        cursor = at
        names = {str(c.get("tool_call_id")): c.get("function_name") for c in step.get("tool_calls") or []
                 if isinstance(c, dict)}
        for result in (step.get("observation") or {}).get("results") or []:
            if not isinstance(result, dict):
                continue
            rx = (result.get("extra") or {}).get("hermes") or {}
            rx = rx if isinstance(rx, dict) else {}
            took = _ms(rx.get("duration_ms"))
            approval = rx.get("approval")
            approval = approval if isinstance(approval, dict) else {}
            waited = _ms(approval.get("waited_ms"))
            name = str(names.get(str(result.get("source_call_id"))) or "tool")
            if waited:
                out.append({"kind": "approval", "step": step.get("step_id"), "label": f"approval for {name}",
                            "start": cursor - origin, "end": cursor + waited / 1000 - origin, "tokens": None})
            if took is not None:
                out.append({"kind": "tool", "step": step.get("step_id"), "label": name, "start": cursor - origin,
                            "end": cursor + max(took, waited or 0) / 1000 - origin, "tokens": None})
                cursor += max(took, waited or 0) / 1000
    return out


def _duration(seconds: float) -> str:
    ms = seconds * 1000
    return f"{ms:.0f} ms" if ms < 10_000 else f"{ms / 1000:.1f} s"


def timeline_html(doc: dict[str, Any], run_cost: Any) -> str:
    """The timeline table: one row per segment with its bar on the run's time axis, duration, tokens and
    the step's share of the run's cost."""
    parts = segments(doc)
    if not parts:
        return '<p class="empty">no timed step</p>'
    total = max(p["end"] for p in parts) or 1.0
    tokens = sum(p["tokens"] or 0 for p in parts)
    rows = []
    for p in parts:
        x = WIDTH * p["start"] / total
        w = max(2.0, WIDTH * (p["end"] - p["start"]) / total)
        bar = (f'<svg class="tl" width="{WIDTH + 4}" height="12" role="img" aria-label="{e(p["kind"])} '
               f'{e(_duration(p["end"] - p["start"]))}"><rect class="tl-{e(p["kind"])}" x="{x:.1f}" y="1" '
               f'width="{w:.1f}" height="10"/></svg>')
        share = cost(run_cost * p["tokens"] / tokens) if p["tokens"] and tokens and isinstance(run_cost, int | float) \
            else ""
        rows.append(f"<tr><td>{e(p['step'])}</td><td>{e(p['kind'])}</td><td>{e(p['label'])}</td><td>{bar}</td>"
                    f"<td>+{e(_duration(p['start']))}</td><td>{'' if p['kind'] == 'user' else e(_duration(p['end'] - p['start']))}"
                    f"</td><td>{num(p['tokens']) if p['tokens'] is not None else ''}</td>"
                    f"<td>{'≈ ' + share if share else ''}</td></tr>")
    return ('<table class="timeline"><thead><tr><th>step</th><th>kind</th><th>what</th><th>time axis</th>'
            "<th>starts</th><th>duration</th><th>tokens</th><th>cost (share of the run's)</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")
