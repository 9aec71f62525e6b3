"""HTML views of the dashboard, rendered from the plain data of :mod:`.queries` (no query here).

Every value goes through :func:`~.html.e`; a panel whose source is missing says so.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from .charts import bar_chart, series_values
from .html import cost, e, error_text, link, missing, num, page, qlink, table, when
from .views_runs import diff_view, trajectory_view

__all__ = ["ambiguous_view", "diff_view", "error_view", "memory_view", "overview_view", "session_view",
           "skills_view", "trajectory_view"]


def _pct(ok: Any, total: Any) -> str:
    return "n/a" if not total else f"{100 * float(ok or 0) / float(total):.0f}%"


def _size(value: Any) -> str:
    return f"{value / 1024:.1f} KiB" if isinstance(value, int) and value >= 1024 else f"{value} B"


def _anomaly(item: dict[str, Any]) -> str:
    if item["kind"] == "skill":
        return f"skill {link('/skills/' + item['skill'], item['skill'])}: {e(item['why'])}"
    if item["kind"] == "tasks":
        return f"{e(item['count'])} consecutive failed tasks{' (the latest ones)' if item.get('current') else ''} " \
               f"({qlink('/runs?outcome=failed', 'failed runs')})"
    return f"cost on {e(item['day'])}: {cost(item['cost'])}, above 3 × the 14-day mean {cost(item['mean'])}"


def _store_note(status: dict[str, Any] | None, need: str) -> str | None:
    """Why the store cannot fill a panel: ``store unreadable: <reason>`` when it exists but cannot be read,
    "not written yet" when it is enabled but absent, and the setting to turn on only when it is off;
    ``None`` when it is readable."""
    status = status or {}
    if status.get("state") == "unreadable":
        return missing(f"store unreadable: {status.get('reason')} — {need} (run hermes-pipeline doctor)")
    if status.get("state") == "missing":
        if status.get("audit_enabled"):
            return missing(f"The observability store has not been written yet (observability.audit.enabled is on): "
                           f"{need}.")
        return missing(f"No observability store (observability/observability.sqlite3): enable "
                       f"observability.audit.enabled in this profile's config.yaml: {need}.")
    return None


def _writes_note(status: dict[str, Any] | None) -> str:
    """A banner when the store's writers fail or lost rows (their record beside the database)."""
    writes = (status or {}).get("writes") or {}
    lost = int(writes.get("rows_lost") or 0)
    if writes.get("failing"):
        return missing(f"store writes failing since {writes.get('failing_since')}: {writes['failing']}; {lost} row(s) "
                       "lost so far — the numbers below are incomplete (run hermes-pipeline doctor)")
    if lost:
        return missing(f"{lost} row(s) could not be written to the store earlier (writable again since "
                       f"{writes.get('recovered_at') or 'then'}); the numbers below miss them.")
    return ""


def _trajectory_rows(files: list[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for f in files:
        run = f.get("run") or {}
        rows.append([link(f"/trajectories/{f['id']}", f["id"][:13] + "…"), e(f["date"]), e(when(f["mtime"])),
                     f'<span class="st {e(run.get("outcome") or "")}">{e(run.get("outcome") or "—")}</span>',
                     error_text(run.get("error_type"), run.get("error_message"), limit=100),
                     num(run.get("input_tokens")), num(run.get("output_tokens")), _size(f["size"])])
    return rows


def _cost_breakdown(data: dict[str, Any]) -> str:
    """Today's cost by model, by skill and by session (the ten largest of each), each linked to its runs."""
    day = data.get("day") or ""
    if data.get("cost_by_model") is None:
        return ""
    models = [[qlink(f"/runs?model={quote(str(r['model'] or ''))}&since={day}", r["model"] or "(unknown)"),
               cost(r.get("cost")), num(r.get("calls"))] for r in data.get("cost_by_model") or [] if r.get("model")]
    skills = [[link(f"/skills/{r['skill']}", r["skill"]), cost(r.get("cost")), num(r.get("runs"))]
              for r in data.get("cost_by_skill") or []]
    sessions = [[link(f"/sessions/{r['session_id']}", r["session_id"]), cost(r.get("cost")), num(r.get("runs"))]
                for r in data.get("cost_by_session") or []]
    return ('<section class="breakdown"><h2>Cost today by model, skill and session</h2>'
            + table(["model", "cost", "LLM calls"], models, empty="no LLM call today")
            + table(["skill", "cost of the runs that loaded it", "runs"], skills, empty="no skill run today")
            + table(["session", "cost", "runs"], sessions, empty="no run today") + "</section>")


def overview_view(data: dict[str, Any], home: str = "") -> str:
    """``/``: today's numbers, the charts, the latest trajectories and the anomaly panel."""
    status = data.get("store_status")
    parts = [_writes_note(status)]
    today = data.get("today")
    note = _store_note(status, "tasks, cost and tokens are unknown")
    if today is None or note is not None:
        parts.append(note or missing("No observability store: tasks, cost and tokens are unknown."))
    else:
        llm = data.get("llm_today") or {}
        cells = [("tasks", num(today.get("tasks"))), ("success rate", _pct(today.get("ok"), today.get("tasks"))),
                 ("cost", cost(today.get("cost")) if today.get("costed") else "n/a"),
                 ("input tokens", num(today.get("input"))), ("output tokens", num(today.get("output"))),
                 ("LLM calls", f"{num(llm.get('calls'))} ({num(llm.get('errors') or 0)} errors)")]
        day = data.get("day") or ""
        cells[0] = ("tasks", qlink(f"/runs?since={day}", num(today.get("tasks"))))
        failed = int(today.get("tasks") or 0) - int(today.get("ok") or 0)
        cells.insert(2, ("failed or not successful", qlink(f"/failures?since={day}", num(failed))))
        parts.append(f'<section class="cards" aria-label="today {e(data.get("day"))}">' + "".join(
            f'<div class="card"><div class="v">{v}</div><div class="k">{e(k)}</div></div>' for k, v in cells)
                     + "</section>")
    daily = data.get("daily")
    if daily is not None:
        labels = [d["day"] for d in daily]
        parts.append('<section class="charts"><h2>Last 14 days (UTC)</h2>' + bar_chart(
            "Tokens per day", labels, [("input", series_values(daily, "input")),
                                       ("output", series_values(daily, "output"))]) + bar_chart(
            "Cost per day", labels, [("cost", series_values(daily, "cost"))], unit=" USD"))
        hourly = data.get("hourly") or []
        rates = [None if h["rate"] is None else 100 * h["rate"] for h in hourly]
        parts.append("<h2>Success rate per hour (last 24 h, UTC)</h2>" + bar_chart(
            "Success rate per hour", [h["hour"][-2:] + "h" for h in hourly], [("success %", rates)],
            unit="%", maximum=100.0) + "</section>")
    parts.append(_cost_breakdown(data))
    anomalies = data.get("anomalies")
    parts.append('<section class="anomalies"><h2>Anomalies</h2>')
    if anomalies is None:
        parts.append(_store_note(status, "anomalies need it") or missing("No observability store: anomalies need it."))
    elif not anomalies:
        parts.append('<p class="ok">No anomaly: no failing skill, no failure streak, no cost spike.</p>')
    else:
        parts.append("<ul>" + "".join(f'<li class="bad">{_anomaly(a)}</li>' for a in anomalies) + "</ul>")
    parts.append("</section><section><h2>Latest trajectories</h2>")
    files = data.get("trajectories")
    if files is None:
        parts.append(missing("No trajectory directory: enable observability.trajectories.enabled to record runs."))
    else:
        parts.append(table(["run", "date", "written", "outcome", "error", "input", "output", "size"],
                           _trajectory_rows(files),
                           cls="trajectories", empty="no trajectory recorded yet"))
        parts.append(f"<p>{link('/runs', 'every run, with search and filters')} · "
                     f"{link('/failures', 'what failed in the last 7 days')}</p>")
    parts.append("</section>")
    return page(f"Today, {data.get('day')}", "".join(parts), active="/", home=home)


def _tool_calls(value: Any) -> str:
    if not value:
        return ""
    try:
        calls = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return f"<pre>{e(value)}</pre>"
    items = []
    for call in calls if isinstance(calls, list) else [calls]:
        fn = call.get("function") if isinstance(call, dict) else None
        name = (fn or {}).get("name") if isinstance(fn, dict) else (call.get("function_name") if isinstance(
            call, dict) else None)
        args = (fn or {}).get("arguments") if isinstance(fn, dict) else (call.get("arguments") if isinstance(
            call, dict) else call)
        items.append(f'<div class="call">→ <b>{e(name or "tool")}</b> <code>{e(args if isinstance(args, str) else json.dumps(args, ensure_ascii=False))}</code></div>')
    return "".join(items)


def session_view(data: dict[str, Any], home: str = "") -> str:
    """``/sessions/<id>``: the full message stream, the session's runs and trace links."""
    row = data.get("row") or {}
    head = [f'<p class="src">from {e(data.get("source"))}</p>']
    if row:
        head.append("<dl>" + "".join(f"<dt>{e(k)}</dt><dd>{e(when(v) if k.endswith('_at') else v)}</dd>"
                                     for k, v in row.items() if v is not None) + "</dl>")
    jaeger = data.get("jaeger_url")
    if jaeger:  # the traces of a session carry its id as session.id
        tags = quote(json.dumps({"session.id": data["id"]}, separators=(",", ":")))
        search = f"{jaeger.rstrip('/')}/search?service=hermes-agent&tags={tags}"
        head.append(f"<p>{link(search, 'traces of this session in Jaeger')}</p>")
    runs = []
    for r in data.get("runs") or []:
        tid = r.get("trajectory_id") or ""
        cell = link(f"/trajectories/{tid}", tid[:13] + "…") if r.get("has_file") else e(tid or "—")
        trace = link(f"{jaeger.rstrip('/')}/trace/{tid.replace('-', '')}", "trace") if jaeger and tid else ""
        runs.append([cell, e(r.get("ended_at")), f'<span class="st {e(r.get("outcome"))}">{e(r.get("outcome"))}</span>',
                     error_text(r.get("error_type"), r.get("error_message"), limit=160),
                     num(r.get("input_tokens")), num(r.get("output_tokens")), cost(r.get("cost_usd")), trace])
    note = _store_note(data.get("store_status"), "this session's runs are unknown")
    if note is not None and (data.get("store_status") or {}).get("state") == "unreadable":
        head.append(note)
    head.append("<h2>Runs</h2>" + table(["run", "ended", "outcome", "error", "input", "output", "cost", "trace"], runs,
                                        empty="no recorded run for this session"))
    messages = data.get("messages")
    stream = ["<h2>Messages</h2>"]
    if messages is None:
        stream.append(missing("No message table."))
    else:
        path = "/sessions/" + quote(str(data["id"]), safe="")
        nav = [f"messages {num(data.get('offset', 0) + 1)}–{num(data.get('offset', 0) + len(messages))}"]
        if data.get("page", 1) > 1:
            nav.append(qlink(f"{path}?page={data['page'] - 1}" if data["page"] > 2 else path, "← earlier"))
        if data.get("more"):
            nav.append(qlink(f"{path}?page={data.get('page', 1) + 1}", "later →"))
        pager = f'<p class="pager">{" · ".join(nav)}</p>' if len(nav) > 1 else ""
        stream.append(pager)
        for m in messages:
            role = str(m.get("role") or "")
            meta = " · ".join(x for x in (e(when(m.get("timestamp"))), e(m.get("tool_name")),
                                          e(m.get("tool_call_id"))) if x)
            if m.get("active") == 0:  # Hermes keeps rewound messages with active = 0
                meta += " · rewound (no longer in the conversation)"
            stream.append(f'<article class="msg {e(role)}{" inactive" if m.get("active") == 0 else ""}">'
                          f'<header><b>{e(role)}</b> <span>{meta}</span></header>'
                          f'<pre>{e(m.get("content"))}</pre>{_tool_calls(m.get("tool_calls"))}</article>')
        stream.append(pager)
    return page(f"Session {data['id']}", "".join(head + stream), active="/sessions", home=home)


def skills_view(data: dict[str, Any], home: str = "") -> str:
    """``/skills``: skill health, worst first; failure rate of 50 % or more over 5 runs or more in red."""
    notes = [_writes_note(data.get("store_status"))]
    if not data.get("skills_dir"):
        notes.append(missing("No skills directory in this profile."))
    if not data.get("store"):
        notes.append(_store_note(data.get("store_status"), "runs and changes are unknown")
                     or missing("No observability store: runs and changes are unknown."))
    rows, classes = [], []
    for r in data["rows"]:
        rows.append([link(f"/skills/{r['key']}", r["name"]), e(r.get("description")), num(r["runs"]),
                     "n/a" if r["rate"] is None else f"{100 * r['rate']:.0f}%", e(r.get("last_used") or "never"),
                     num(r["changes"]), e(r.get("category") or "")])
        classes.append("red" if r["red"] else "")
    days = data.get("window_days", 7)
    notes.append(f'<p class="src">runs and success over the last {e(days)} days (the window of the Today '
                 f"alarm too); in red: the {e(days)}-day alarm (5 latest runs failed, or half of 5 or more "
                 "runs failed)</p>")
    return page(f"Skill health ({days} days)", "".join(notes) + table(
        ["skill", "description", f"runs ({days} d)", "success", "last used", "changes", "category"], rows, cls="skills",
        row_classes=classes, empty="no skill found"), active="/skills", home=home)


def memory_view(data: dict[str, Any], home: str = "", query: Any = None) -> str:
    """``/memory``: memory files by modification time (each linked to its changes when the store has any)
    and one page of recorded changes, filtered by ``since``, ``until`` and ``q``."""
    from .params import ListQuery
    from .views_lists import _form, _pager, _stated

    query = query if query is not None else ListQuery()
    recorded = data.get("recorded") or set()
    parts = [_writes_note(data.get("store_status")), "<h2>Files</h2>"]
    if not data.get("dirs"):
        parts.append(missing("No memory directory in this profile."))
    else:
        parts.append(table(["file", "size", "modified"], [
            [link(f"/memory/{f['path']}", f["path"]) if f["path"] in recorded else e(f["path"]), _size(f["size"]),
             e(when(f["mtime"]))] for f in data["files"]], empty="no memory file"))
        if data.get("more"):
            parts.append(missing(f"{data['more']} older files not shown."))
    parts.append("<h2>Recorded changes</h2>")
    changes = data.get("changes")
    if changes is None:
        parts.append(_store_note(data.get("store_status"), "memory changes are unknown")
                     or missing("No observability store: memory changes are not recorded."))
    else:
        pager = _pager("/memory", query, len(changes), bool(data.get("changes_more")), data.get("changes_total"))
        parts.append(_form("/memory", query, ("since", "until", "q")) + _stated(query) + pager)
        parts.append(table(["time (UTC)", "file", "change", "actor", "reason", "session", "after"], [
            [e(c["changed_at"]), link(f"/memory/{c['file_path']}", c["file_path"]), e(c["change_type"]),
             e(c["actor"]), e(c.get("reason") or ""),
             link(f"/sessions/{c['trigger_session_id']}", c["trigger_session_id"]) if c.get("trigger_session_id")
             else "", f"<code>{e(c.get('excerpt'))}</code>"] for c in changes], empty="no memory change recorded")
            + pager)
    return page("Memory", "".join(parts), active="/memory", home=home)


def ambiguous_view(ref: str, candidates: tuple[str, ...], home: str = "") -> str:
    """409: an id prefix that names several runs, each listed with its link."""
    items = "".join(f"<li>{link('/trajectories/' + c, c)}</li>" for c in candidates)
    return page("409", f'<p class="missing">The id prefix {e(ref)} matches {len(candidates)} trajectories; '
                       f"choose one:</p><ul>{items}</ul>", home=home)


def unshowable_view(trajectory_id: str, problem: dict[str, str]) -> str:
    """A run whose file exists but cannot be shown: "too large" or "damaged", and why."""
    what = "too large to show" if problem.get("kind") == "too_large" else "damaged"
    return page("Run cannot be shown",
                f'<p class="missing">The file of run {e(trajectory_id)} ({e(problem.get("file", ""))}) is {what}: '
                f'{e(problem.get("reason", ""))}.</p>'
                f'<p>Inspect it with <code>hermes-pipeline trajectory show {e(trajectory_id)}</code>.</p>'
                f'<p>{link("/", "Back to today")}</p>')


def error_view(status: int, message: str) -> str:
    """A page for 404 and the other refusals."""
    return page(f"{status}", f'<p class="missing">{e(message)}</p><p>{link("/", "Back to today")}</p>')


def __getattr__(name: str) -> Any:
    """``views.sessions_view``, now in :mod:`.views_lists` with the other paged lists (which imports this one)."""
    if name == "sessions_view":
        from .views_lists import sessions_view

        return sessions_view
    raise AttributeError(name)
