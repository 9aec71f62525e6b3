"""The views of recorded runs: one trajectory as a tree (steps, tool calls, subagents, with durations,
tokens and statuses; content folded in ``<details>``) and two trajectories side by side, step by step."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ..export.definitions import DEFINITIONS_KEY, resolve_request
from .html import cost, e, error_text, link, missing, num, page

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


def _attempts(hermes: dict[str, Any]) -> str:
    """The provider attempts that failed before this step's answer (retries), each with its error type,
    HTTP status and message where the recording has them."""
    failed = [a for a in hermes.get("failed_attempts") or [] if isinstance(a, dict)]
    if not failed:
        return ""
    items = "".join(f'<li class="bad">attempt {e(a.get("attempt", "?"))}: <b>{e(a.get("error_type") or "error")}</b>'
                    + (f" (HTTP {e(a.get('status_code'))})" if a.get("status_code") is not None else "")
                    + (f": {e(_text(a.get('message')))}" if a.get("message") else "") + "</li>" for a in failed)
    return f'<div class="attempts"><h4>failed provider attempts</h4><ul>{items}</ul></div>'


def _failed(rx: dict[str, Any], tool_error: dict[str, Any] | None) -> bool:
    code = rx.get("exit_code")
    return rx.get("status") in ("error", "blocked", "timed_out") or bool(tool_error) or \
        (isinstance(code, int) and not isinstance(code, bool) and code != 0)


def _step(step: dict[str, Any], duration_ms: float | None, tool_errors: dict[str, dict[str, Any]] | None = None,
          definitions: dict[str, Any] | None = None) -> str:
    tool_errors = tool_errors or {}
    hermes = ((step.get("extra") or {}).get("hermes") or {}) if isinstance(step.get("extra"), dict) else {}
    if definitions and "llm_request" in hermes:  # shown as it was sent
        hermes = {**hermes, "llm_request": resolve_request(hermes["llm_request"], definitions)}
    metrics = step.get("metrics") if isinstance(step.get("metrics"), dict) else {}
    bits = [f"<b>step {e(step.get('step_id'))}</b>", e(step.get("source")), e(step.get("model_name"))]
    if metrics:
        bits.append(f"tokens {num(metrics.get('prompt_tokens'))} / {num(metrics.get('completion_tokens'))}")
    bits += [f"LLM {e(_ms(duration_ms))}" if duration_ms is not None else "", _status(hermes.get("finish_reason"))]
    if hermes.get("turn_status") in ("error", "cancelled"):  # the turn this user step opened ended in error
        bits.append(_status("failed" if hermes["turn_status"] == "error" else "cancelled")
                    + (f' <b class="errtype">{e(hermes.get("error_type"))}</b>' if hermes.get("error_type") else ""))
    failed_attempts = [a for a in hermes.get("failed_attempts") or [] if isinstance(a, dict)]
    if failed_attempts:
        bits.append(f'<span class="st error">{len(failed_attempts)} failed attempt(s)</span>')
    calls = [c for c in step.get("tool_calls") or [] if isinstance(c, dict)]
    results = {str(r.get("source_call_id")): r for r in ((step.get("observation") or {}).get("results") or [])
               if isinstance(r, dict)}
    if calls:
        bits.append("tools: " + ", ".join(e(c.get("function_name")) for c in calls))
    body = [_attempts(hermes)]
    if hermes.get("turn_status") in ("error", "cancelled") and hermes.get("error_message"):
        why = error_text(hermes.get("error_type"), hermes["error_message"], limit=None)
        body.append(f'<p class="turnerr">the turn failed: {why}</p>')
    message = step.get("message")
    if message:
        body.append(f'<details open><summary>message</summary><pre>{e(_text(message))}</pre></details>')
    any_failed = bool(failed_attempts) or hermes.get("turn_status") == "error"
    for call in calls:
        result = results.pop(str(call.get("tool_call_id")), None)
        rx = ((result or {}).get("extra") or {}).get("hermes") or {}
        error = tool_errors.get(str(call.get("tool_call_id")))
        failed = _failed(rx, error)
        any_failed = any_failed or failed
        kind = (error or {}).get("error_type") or rx.get("error_type") or (
            "command_timeout" if rx.get("command_timed_out") else "command_failed" if rx.get("command_failed") else None)
        reason = (error or {}).get("error_message") or rx.get("error_message")
        anchor = f' id="call-{e(call.get("tool_call_id"))}"' if call.get("tool_call_id") else ""
        body.append(f'<details class="tool"{anchor}{" open" if failed else ""}><summary>tool '
                    f'<b>{e(call.get("function_name"))}</b> {_status(rx.get("status"))} {_command(rx)} '
                    + (error_text(kind, reason, limit=200) + " " if failed and (kind or reason) else "")
                    + f'{e(_ms(rx.get("duration_ms")))}</summary>'
                    f'<h4>arguments</h4><pre>{e(_text(call.get("arguments")))}</pre>'
                    + (f'<h4>{"error" if failed else "result"}</h4><pre>{e(_text(result.get("content")))}</pre>'
                       if result else "")
                    + "</details>")
    for result in results.values():
        body.append(f'<details class="tool"><summary>observation</summary><pre>{e(_text(result.get("content")))}'
                    "</pre></details>")
    for key in ("llm_request", "llm_response"):
        if key in hermes:
            body.append(f"<details><summary>{e(key)}</summary><pre>{e(_text(hermes[key]))}</pre></details>")
    ids = [f'step-{e(step.get("step_id"))}']
    for request in (hermes.get("api_request_id"), *(a.get("api_request_id") for a in failed_attempts)):
        if isinstance(request, str) and request and f"req-{e(request)}" not in ids:
            ids.append(f"req-{e(request)}")  # a request that only failed is found on the step that holds it
    marks = "".join(f'<a id="{i}"></a>' for i in ids[1:])  # a failed provider attempt links to its request
    return f'{marks}<details class="step{" failed" if any_failed else ""}" id="{ids[0]}"{" open" if any_failed else ""}>' \
           f'<summary>{" · ".join(b for b in bits if b)}</summary>{"".join(body)}</details>'


def _tree(doc: dict[str, Any], depth: int = 0, tool_errors: dict[str, dict[str, Any]] | None = None) -> str:
    from .timeline import segments

    steps = [s for s in doc.get("steps") or [] if isinstance(s, dict)]
    # an agent step's timestamp is when the provider answered: its LLM time runs from the end of what came before
    llm = [seg for seg in segments(doc) if seg["kind"] == "llm"]
    agents = [s for s in steps if s.get("source") == "agent" and _seconds(s.get("timestamp")) is not None]
    latency = {id(s): (seg["end"] - seg["start"]) * 1000 for s, seg in zip(agents, llm)}
    items = []
    definitions = _definitions(doc)
    for step in steps:
        items.append(_step(step, latency.get(id(step)), tool_errors, definitions))
    for child in doc.get("subagent_trajectories") or []:
        if isinstance(child, dict) and depth < 8:
            agent = child.get("agent") or {}
            items.append(f'<details class="sub" open><summary>subagent {e(agent.get("name"))} '
                         f'{e(child.get("trajectory_id") or child.get("session_id"))}</summary>'
                         f"{_tree(child, depth + 1, tool_errors)}</details>")
    return '<div class="tree">' + "".join(items) + "</div>"


def _compare(data: dict[str, Any], hermes: dict[str, Any]) -> str:
    """"Compare with…": the original of a replay, the previous run of the same session, any run by id (a
    plain GET form to ``/compare``)."""
    tid = data["id"]
    items = []
    replay = hermes.get("replay")
    replay = replay if isinstance(replay, dict) else {}
    original = replay.get("of") if isinstance(replay.get("of"), str) else None
    if original:
        items.append(f"this run replays {link('/trajectories/' + original, original)}: "
                     f"{link(f'/trajectories/{original}/diff/{tid}', 'compare with the original')}")
    replays = data.get("replays") or []
    if replays:
        rows = "".join(
            f"<li>{link('/trajectories/' + r['id'], r['id'][:8])} ({e(r.get('agent'))}, {e(r.get('mode'))}"
            + (f", {e(r['date'])}" if r.get("date") else "") + f"): <b>{e(r.get('verdict'))}</b>"
            + (f" — requests differ from agent step {e(r['diverged_at_step'])}"
               if r.get("diverged_at_step") is not None else "")
            + f" · {link(f'/trajectories/{tid}/diff/' + r['id'], 'compare with this replay')}</li>" for r in replays)
        more = data.get("replay_count", len(replays)) - len(replays)
        items.append(f"replays of this run ({num(data.get('replay_count', len(replays)))}):"
                     f'<ul class="replays">{rows}</ul>' + (f"<p>… and {num(more)} older</p>" if more > 0 else ""))
    if data.get("previous"):
        prev = data["previous"]
        items.append(f"{link(f'/trajectories/{prev}/diff/{tid}', 'compare with the previous run of this session')} "
                     f"({e(prev[:8])})")
    form = (f'<form class="filters" method="get" action="/compare"><input type="hidden" name="a" value="{e(tid)}">'
            '<label>compare with the run (id or prefix) <input name="b"></label><button>compare</button></form>')
    return '<section class="compare"><h2>Compare with…</h2>' + \
        ("<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>" if items else "") + form + "</section>"


def _turn_message(steps: list[dict[str, Any]]) -> str | None:
    """The recorded message of the last turn of ``steps`` that ended in error (a run file without a store row)."""
    for step in reversed(steps):
        hermes = (step.get("extra") or {}).get("hermes") if isinstance(step.get("extra"), dict) else None
        if isinstance(hermes, dict) and hermes.get("turn_status") == "error" and hermes.get("error_message"):
            return str(hermes["error_message"])
    return None


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
    if run.get("error_type") or run.get("outcome") in ("failed", "timed_out"):
        why = run.get("error_message") or _turn_message(steps)
        facts.insert(4, ("error", error_text(run.get("error_type") or "(not recorded)", why, limit=None)))
    skills = data.get("skills") or []
    if skills:
        facts.append(("skills loaded", ", ".join(link(f"/skills/{s}", s) for s in skills)))
    session = run.get("session_id") or hermes.get("session_id")  # the store's row names the host's session
    if session:
        facts.append(("session", link(f"/sessions/{session}", session)))
    if data.get("jaeger_url"):
        facts.append(("trace", link(f"{data['jaeger_url'].rstrip('/')}/trace/{data['id'].replace('-', '')}",
                                    "open in Jaeger")))
    from .views import _store_note

    status = data.get("store_status") or {}
    note = _store_note(status, "this run's outcome, cost, error message and skills are unknown") \
        if status.get("state") == "unreadable" else None
    head = (note or "") + "<dl>" + "".join(f"<dt>{e(k)}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>" + \
        _compare(data, hermes)
    final = hermes.get("final_output")
    tail = f"<h2>Final output</h2><pre>{e(_text(final))}</pre>" if final else ""
    errors = {str(t.get("tool_call_id")): t for t in data.get("tool_errors") or [] if t.get("tool_call_id")}
    from .timeline import timeline_html

    timeline = "<h2>Timeline</h2>" + timeline_html(doc, run.get("cost_usd"))
    return page(f"Run {data['id']}", head + timeline + "<h2>Steps</h2>" + _tree(doc, 0, errors) + tail, home=home)


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
