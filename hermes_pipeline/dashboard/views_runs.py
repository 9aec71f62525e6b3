"""The views of recorded runs: one trajectory as a tree (steps, tool calls, subagents, with durations,
tokens and statuses; content folded in ``<details>``) and two trajectories side by side, step by step."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ..export.definitions import DEFINITIONS_KEY, resolve_request
from .html import cost, e, link, missing, num, page

__all__ = ["diff_view", "failed_commands", "trajectory_view"]

MAX_SHOWN = 20000
"""Characters of one content field shown (the file keeps everything)."""


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1, default=str)
    if len(text) > MAX_SHOWN:
        text = text[:MAX_SHOWN] + f"\n… ({len(text) - MAX_SHOWN:,} more characters in the file)"
    return text


def _seconds(stamp: Any) -> float | None:
    try:
        return datetime.fromisoformat(str(stamp)).timestamp()
    except (TypeError, ValueError):
        return None


def _ms(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:.0f} ms" if value < 10_000 else f"{value / 1000:.1f} s"


def _status(value: Any) -> str:
    return f'<span class="st {e(value)}">{e(value)}</span>' if value else ""


def _command(rx: dict[str, Any]) -> str:
    """``exit N`` for a tool that ran a command; a non-zero exit is marked as a failed command (the host's
    own status is shown beside it as it reported it)."""
    code = rx.get("exit_code")
    if not isinstance(code, int) or isinstance(code, bool):
        return ""
    return _status(f"exit {code}" + (" failed" if code != 0 else ""))


def failed_commands(doc: dict[str, Any], depth: int = 0) -> int:
    """Tool calls of the trajectory ``doc`` (subagents included) whose command exited non-zero."""
    count = 0
    for step in doc.get("steps") or []:
        results = (step.get("observation") or {}).get("results") if isinstance(step, dict) else None
        for result in results or []:
            rx = ((result.get("extra") or {}).get("hermes") or {}) if isinstance(result, dict) else {}
            code = rx.get("exit_code") if isinstance(rx, dict) else None
            count += isinstance(code, int) and not isinstance(code, bool) and code != 0
    for child in doc.get("subagent_trajectories") or []:
        if isinstance(child, dict) and depth < 8:
            count += failed_commands(child, depth + 1)
    return count


def _definitions(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The tool lists and system prompts ``doc``'s requests refer to by hash (``extra.hermes.definitions``)."""
    hermes = (doc.get("extra") or {}).get("hermes") if isinstance(doc.get("extra"), dict) else None
    found = hermes.get(DEFINITIONS_KEY) if isinstance(hermes, dict) else None
    return found if isinstance(found, dict) else None


def _step(step: dict[str, Any], duration_ms: float | None, definitions: dict[str, Any] | None = None) -> str:
    hermes = ((step.get("extra") or {}).get("hermes") or {}) if isinstance(step.get("extra"), dict) else {}
    if definitions and "llm_request" in hermes:  # shown as it was sent
        hermes = {**hermes, "llm_request": resolve_request(hermes["llm_request"], definitions)}
    metrics = step.get("metrics") if isinstance(step.get("metrics"), dict) else {}
    bits = [f"<b>step {e(step.get('step_id'))}</b>", e(step.get("source")), e(step.get("model_name"))]
    if metrics:
        bits.append(f"tokens {num(metrics.get('prompt_tokens'))} / {num(metrics.get('completion_tokens'))}")
    bits += [e(_ms(duration_ms)), _status(hermes.get("finish_reason"))]
    calls = [c for c in step.get("tool_calls") or [] if isinstance(c, dict)]
    results = {str(r.get("source_call_id")): r for r in ((step.get("observation") or {}).get("results") or [])
               if isinstance(r, dict)}
    if calls:
        bits.append("tools: " + ", ".join(e(c.get("function_name")) for c in calls))
    body = []
    message = step.get("message")
    if message:
        body.append(f'<details open><summary>message</summary><pre>{e(_text(message))}</pre></details>')
    for call in calls:
        result = results.pop(str(call.get("tool_call_id")), None)
        rx = ((result or {}).get("extra") or {}).get("hermes") or {}
        body.append(f'<details class="tool"><summary>tool <b>{e(call.get("function_name"))}</b> '
                    f'{_status(rx.get("status"))} {_command(rx)} {e(_ms(rx.get("duration_ms")))}</summary>'
                    f'<h4>arguments</h4><pre>{e(_text(call.get("arguments")))}</pre>'
                    + (f'<h4>result</h4><pre>{e(_text(result.get("content")))}</pre>' if result else "")
                    + "</details>")
    for result in results.values():
        body.append(f'<details class="tool"><summary>observation</summary><pre>{e(_text(result.get("content")))}'
                    "</pre></details>")
    for key in ("llm_request", "llm_response"):
        if key in hermes:
            body.append(f"<details><summary>{e(key)}</summary><pre>{e(_text(hermes[key]))}</pre></details>")
    return f'<details class="step"><summary>{" · ".join(b for b in bits if b)}</summary>{"".join(body)}</details>'


def _tree(doc: dict[str, Any], depth: int = 0) -> str:
    steps = [s for s in doc.get("steps") or [] if isinstance(s, dict)]
    times = [_seconds(s.get("timestamp")) for s in steps]
    items = []
    definitions = _definitions(doc)
    for i, step in enumerate(steps):
        nxt = times[i + 1] if i + 1 < len(times) else None
        here = times[i]
        items.append(_step(step, (nxt - here) * 1000 if here is not None and nxt is not None else None,
                           definitions))
    for child in doc.get("subagent_trajectories") or []:
        if isinstance(child, dict) and depth < 8:
            agent = child.get("agent") or {}
            items.append(f'<details class="sub" open><summary>subagent {e(agent.get("name"))} '
                         f'{e(child.get("trajectory_id") or child.get("session_id"))}</summary>'
                         f"{_tree(child, depth + 1)}</details>")
    return '<div class="tree">' + "".join(items) + "</div>"


def trajectory_view(data: dict[str, Any], home: str = "") -> str:
    """``/trajectories/<id>``: the run as a tree."""
    doc, run = data["doc"], data.get("run") or {}
    agent = doc.get("agent") or {}
    metrics = doc.get("final_metrics") or {}
    hermes = (doc.get("extra") or {}).get("hermes") or {} if isinstance(doc.get("extra"), dict) else {}
    steps = [s for s in doc.get("steps") or [] if isinstance(s, dict)]
    times = [t for t in (_seconds(s.get("timestamp")) for s in steps) if t is not None]
    facts = [("file", e(data.get("file"))), ("agent", e(f"{agent.get('name', '')} {agent.get('version', '')}")),
             ("model", e(agent.get("model_name"))), ("outcome", _status(run.get("outcome")) or "unknown"),
             ("steps", num(len(steps))), ("duration", e(_ms((times[-1] - times[0]) * 1000) if times else "")),
             ("tokens", f"{num(metrics.get('total_prompt_tokens'))} in / "
                        f"{num(metrics.get('total_completion_tokens'))} out"),
             ("cost", cost(run.get("cost_usd"))), ("failed commands", num(failed_commands(doc)))]
    session = run.get("session_id") or hermes.get("session_id")  # the store's row names the host's session
    if session:
        facts.append(("session", link(f"/sessions/{session}", session)))
    if data.get("jaeger_url"):
        facts.append(("trace", link(f"{data['jaeger_url'].rstrip('/')}/trace/{data['id'].replace('-', '')}",
                                    "open in Jaeger")))
    head = "<dl>" + "".join(f"<dt>{e(k)}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>"
    final = hermes.get("final_output")
    tail = f"<h2>Final output</h2><pre>{e(_text(final))}</pre>" if final else ""
    return page(f"Run {data['id']}", head + "<h2>Steps</h2>" + _tree(doc) + tail, home=home)


def _cell(step: dict[str, Any] | None) -> str:
    if step is None:
        return '<td class="none">—</td>'
    calls = "".join(f'<div class="call">→ <b>{e(name)}</b> <code>{e(args)}</code></div>'
                    for name, args in step.get("tool_calls") or [])
    obs = "".join(f"<details><summary>observation</summary><pre>{e(_text(o))}</pre></details>"
                  for o in step.get("observations") or [])
    return f'<td><b>{e(step.get("source"))}</b><pre>{e(_text(step.get("message") or ""))}</pre>{calls}{obs}</td>'


def diff_view(data: dict[str, Any], home: str = "") -> str:
    """``/trajectories/<a>/diff/<b>``: the two runs side by side, differing steps marked."""
    rows = []
    for row in data["rows"]:
        cls = ' class="differs"' if row["fields"] else ""
        what = e(", ".join(row["fields"])) if row["fields"] else "same"
        rows.append(f"<tr{cls}><th>{e(row['step'])}<br><small>{what}</small></th>{_cell(row['old'])}"
                    f"{_cell(row['new'])}</tr>")
    head = (f'<p class="verdict">{e(data["verdict"])}</p><table class="diff"><thead><tr><th>step</th>'
            f"<th>{link('/trajectories/' + data['old'], data['old'])}</th>"
            f"<th>{link('/trajectories/' + data['new'], data['new'])}</th></tr></thead><tbody>")
    finals = (f"<h2>Final answers</h2><table class=\"diff\"><tr><td><pre>{e(data['old_final'])}</pre></td>"
              f"<td><pre>{e(data['new_final'])}</pre></td></tr></table><p>tokens: "
              f"{num(data['old_tokens']['prompt'])} / {num(data['old_tokens']['completion'])} → "
              f"{num(data['new_tokens']['prompt'])} / {num(data['new_tokens']['completion'])}</p>")
    body = head + "".join(rows) + "</tbody></table>" + finals if rows else missing("Neither run has steps.")
    return page("Diff of two runs", body, home=home)
