"""The paged list pages: ``/runs``, ``/sessions`` and ``/failures``, each with a filter form (a plain GET
form: no script), the filters it shows stated, and previous / next links that keep the filters."""

from __future__ import annotations

from typing import Any

from .html import cost, e, error_text, link, missing, num, page, qlink, table, when
from .params import PAGE_SIZE, ListQuery
from .views import _store_note, _writes_note

__all__ = ["failures_view", "runs_view", "sessions_view"]

FIELDS = {"since": "since (UTC date, or 24h / 7d)", "until": "until", "outcome": "outcome", "model": "model",
          "skill": "skill", "tool": "tool", "error": "error type", "q": "search task text and title"}


def _form(path: str, query: ListQuery, names: tuple[str, ...]) -> str:
    inputs = "".join(f'<label>{e(FIELDS[n])} <input name="{e(n)}" value="{e(getattr(query, n) or "")}"></label> '
                     for n in names)
    return f'<form class="filters" method="get" action="{e(path)}">{inputs}<button>filter</button> ' \
           f'{link(path, "clear")}</form>'


def _pager(path: str, query: ListQuery, shown: int, more: bool, total: int | None) -> str:
    first = query.offset + 1 if shown else 0
    bits = [f"rows {num(first)}–{num(query.offset + shown)}" + (f" of {num(total)}" if total is not None else "")]
    if query.page > 1:
        bits.append(qlink(query.url(path, page=query.page - 1), "← newer"))
    if more:
        bits.append(qlink(query.url(path, page=query.page + 1), "older →"))
    return f'<p class="pager">{" · ".join(bits)}</p>'


def _stated(query: ListQuery) -> str:
    active = query.active()
    return "" if not active else '<p class="src">filtered by ' + ", ".join(f"{e(k)} = {e(v)}" for k, v in active) + \
        "</p>"


def _duration(seconds: Any) -> str:
    if not isinstance(seconds, int | float):
        return "n/a"
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _status(value: Any) -> str:
    return f'<span class="st {e(value)}">{e(value)}</span>' if value else "—"


def _run_link(tid: Any, has_file: bool, anchor: str = "") -> str:
    if not tid:
        return "—"
    if not has_file:  # no file recorded for the run: its id, not a link to a missing page
        return f'<code>{e(str(tid)[:8])}</code>'
    return f'<a href="/trajectories/{e(tid)}{e(anchor)}">{e(str(tid)[:8])}</a>'


def runs_view(data: dict[str, Any], query: ListQuery, home: str = "") -> str:
    """``/runs``: one page of runs with task, outcome, error type, skills, tokens, cost and duration."""
    notes = [_writes_note(data.get("store_status"))]
    note = _store_note(data.get("store_status"), "runs are unknown")
    if note:
        notes.append(note)
    rows = []
    for r in data["rows"]:
        skills = ", ".join(link(f"/skills/{s}", s) for s in r.get("skills") or [])
        rows.append([_run_link(r.get("trajectory_id"), r.get("has_file", False)),
                     e((r.get("task") or r.get("task_class") or "")[:160]),
                     link(f"/sessions/{r['session_id']}", r["session_id"]) if r.get("session_id") else "—",
                     e(r.get("ended_at")), _status(r.get("outcome")),
                     error_text(r.get("error_type"), r.get("error_message"), limit=120), skills,
                     num(r.get("input_tokens")), num(r.get("output_tokens")), cost(r.get("cost_usd")),
                     _duration(r.get("duration_s"))])
    body = _form("/runs", query, ("since", "until", "outcome", "model", "skill", "tool", "error", "q")) + \
        _stated(query) + _pager("/runs", query, len(rows), data["more"], data.get("total")) + \
        table(["run", "task", "session", "ended (UTC)", "outcome", "error", "skills", "input", "output", "cost",
               "duration"], rows, cls="runs", empty="no run matches") + \
        _pager("/runs", query, len(rows), data["more"], data.get("total"))
    return page("Runs", "".join(notes) + body, active="/runs", home=home)


def sessions_view(data: dict[str, Any], home: str = "", query: ListQuery | None = None) -> str:
    """``/sessions``: one page of sessions (``state.db``, else the store) with outcome, runs, cost, tokens and
    duration."""
    query = query or ListQuery()
    source = data.get("source")
    if source is None:
        status = data.get("store_status") or {}
        text = missing(f"store unreadable: {status.get('reason')} — and no state.db (Hermes) in this profile "
                       "(run hermes-pipeline doctor)") if status.get("state") == "unreadable" else \
            missing("No session store: neither state.db (Hermes) nor the observability store exists in this profile.")
        return page("Sessions", text, active="/sessions", home=home)
    rows = []
    for r in data["rows"]:
        rows.append([link(f"/sessions/{r['id']}", r["id"]), e(r.get("title") or ""), e(r.get("source")),
                     e(when(r.get("started_at"))), e(when(r.get("ended_at"))), e(r.get("model")),
                     _status(r.get("outcome")), num(r.get("runs")), cost(r.get("cost")),
                     num(r.get("input_tokens")), num(r.get("output_tokens")), _duration(r.get("duration_s")),
                     e(r.get("end_reason") or "")])
    notes = _writes_note(data.get("store_status")) + f'<p class="src">from {e(source)}</p>'
    if source == "state.db":
        note = _store_note(data.get("store_status"), "outcome, runs and cost are unknown")
        if note and (data.get("store_status") or {}).get("state") == "unreadable":
            notes += note
    body = _form("/sessions", query, ("since", "until", "outcome", "model", "skill", "tool", "error", "q")) + \
        _stated(query) + _pager("/sessions", query, len(rows), data.get("more", False), data.get("total")) + \
        table(["session", "title", "source", "started", "ended", "model", "outcome", "runs", "cost", "input",
               "output", "duration", "end"], rows, cls="sessions", empty="no session matches") + \
        _pager("/sessions", query, len(rows), data.get("more", False), data.get("total"))
    return page("Sessions", notes + body, active="/sessions", home=home)


def _types(kind: str, rows: list[dict[str, Any]] | None, query: ListQuery) -> str:
    return "".join(f"<li>{e(kind)}: {qlink(query.url('/failures', error=r['type'], page=1), r['type'])} "
                   f"× {num(r['n'])}</li>" for r in rows or [])


def failures_view(data: dict[str, Any], query: ListQuery, home: str = "") -> str:
    """``/failures``: counts by error type, then the failed runs, tool calls and provider attempts, each
    linked to its run (and step)."""
    note = _store_note(data.get("store_status"), "failures are unknown")
    if note:
        return page("Failures", _writes_note(data.get("store_status")) + note, active="/failures", home=home)
    groups = _types("run", data["run_types"], query) + _types("tool", data["tool_types"], query) + \
        _types("provider", data["llm_types"], query)
    parts = [_writes_note(data.get("store_status")),
             _form("/failures", query, ("since", "until", "error")), _stated(query),
             "<h2>By error type</h2>", f'<ul class="types">{groups}</ul>' if groups else
             '<p class="ok">Nothing failed in this range.</p>']
    runs = [[_run_link(r.get("trajectory_id"), r.get("has_file", False)), e(r.get("ended_at")),
             _status(r.get("outcome")), error_text(r.get("error_type") or "(not recorded)", r.get("error_message")),
             link(f"/sessions/{r['session_id']}", r["session_id"]) if r.get("session_id") else "",
             cost(r.get("cost_usd"))] for r in data["runs"]]
    parts.append("<h2>Failed runs</h2>" + table(["run", "ended (UTC)", "outcome", "error", "session", "cost"],
                                                runs, empty="no failed run"))
    tools = [[_run_link(r.get("trajectory_id"), r.get("has_file", False), f"#call-{r.get('tool_call_id')}"),
              e(r.get("ended_at")), e(r.get("tool_name")), _status(r.get("status")),
              error_text(r.get("error_type") or "(not recorded)", r.get("error_message")),
              "" if r.get("exit_code") is None else num(r["exit_code"])]
             for r in data["tools"]]
    parts.append("<h2>Failed tool calls</h2>" + table(["run · step", "ended (UTC)", "tool", "status", "error",
                                                       "exit code"], tools, empty="no failed tool call"))
    llm = [[_run_link(r.get("trajectory_id"), r.get("has_file", False), f"#req-{r.get('api_request_id')}"),
            e(r.get("ended_at")), e(r.get("provider")), e(r.get("model")),
            error_text(r.get("error_type") or "(not recorded)", r.get("error_message")),
            e(r.get("api_request_id") or "")] for r in data["llm"]]
    parts.append("<h2>Failed provider attempts</h2>" + table(["run · step", "ended (UTC)", "provider", "model",
                                                              "error", "request"], llm,
                                                             empty="no failed provider attempt"))
    more = data["runs_more"] or data["tools_more"] or data["llm_more"]
    nav = []
    if query.page > 1:
        nav.append(qlink(query.url("/failures", page=query.page - 1), "← newer"))
    if more:
        nav.append(qlink(query.url("/failures", page=query.page + 1), f"older (next {PAGE_SIZE} of each) →"))
    parts.append(f'<p class="pager">{" · ".join(nav)}</p>' if nav else "")
    return page("Failures", "".join(parts), active="/failures", home=home)
