"""The paged, filtered lists of the dashboard: ``/runs``, ``/sessions`` and ``/failures``.

Every list reads one page (:data:`~.params.PAGE_SIZE` rows, ``OFFSET`` by page) and the total count of
its filter, so any row is reachable by a bookmarkable URL and a page stays small however large the
profile. Filters are bound parameters only. Two databases take part and are never joined by SQL: a
filter that needs the other one (a session's title or tool use in Hermes' ``state.db``; a run's
outcome, skill or error in the store) is turned into a set of session ids first and handed over as one
JSON parameter (``IN (SELECT value FROM json_each(?))``), so no statement grows with the set.

Text a user may search (``?q=``): the session title and the users' messages of Hermes' ``state.db`` (a
run's task text is its session's user message); without ``state.db`` the store's session id, trajectory
id and task class.
"""

from __future__ import annotations

import calendar
import json
import os
import re
import sqlite3
import time
from typing import Any, Final

from .params import PAGE_SIZE, ListQuery, time_range
from .queries import SESSION_COLUMNS, _columns, _db, _rows, _trajectory_ids, message_column, store_status
from .scrubbed import scrubbed
from .sources import Sources, read_part

__all__ = ["DEFAULT_FAILURE_WINDOW", "failures", "runs", "sessions_first_page", "sessions_page"]

DEFAULT_FAILURE_WINDOW: Final = "7d"
"""The time range ``/failures`` shows when the URL names none."""
FAILED_OUTCOMES: Final = ("failed", "timed_out")


def _epoch(stamp: str | None) -> float | None:
    """Epoch seconds of a store timestamp (``YYYY-MM-DD HH:MM:SS`` UTC)."""
    if not stamp:
        return None
    try:
        return float(calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%d %H:%M:%S")))
    except ValueError:
        return None


def _state_session_filter(conn: sqlite3.Connection | None, query: ListQuery) -> set[str] | None:
    """Ids of Hermes sessions matching ``q`` (title or a user message) and ``tool`` (a tool message of
    that tool); ``None`` when neither filter is set or there is no ``state.db``."""
    if conn is None or (query.q is None and query.tool is None):
        return None
    found: set[str] | None = None
    if query.q is not None:
        needle = query.q.lower()
        titled = _rows(conn, "SELECT id FROM sessions WHERE instr(lower(coalesce(title, '')), ?) > 0", (needle,)) or []
        said = _rows(conn, "SELECT DISTINCT session_id AS id FROM messages WHERE role = 'user' AND "
                           "instr(lower(coalesce(content, '')), ?) > 0", (needle,)) or []
        found = {str(r["id"]) for r in titled + said}
    if query.tool is not None:
        used = {str(r["id"]) for r in _rows(conn, "SELECT DISTINCT session_id AS id FROM messages WHERE tool_name = ?",
                                            (query.tool,)) or []}
        found = used if found is None else found & used
    return found


def _run_where(query: ListQuery, sessions: set[str] | None, *, text_in_store: bool) -> tuple[str, list[Any]]:
    """The ``WHERE`` clause over ``task_runs t`` for ``query`` (``sessions``: ids the ``state.db`` filters kept)."""
    where, params = time_range(query, "t.ended_at")
    where.insert(0, "1")
    if query.outcome:
        where.append("t.outcome = ?")
        params.append(query.outcome)
    if query.error:
        where.append("(t.error_type = ? OR t.trajectory_id IN (SELECT trajectory_id FROM tool_errors WHERE "
                     "error_type = ?) OR t.turn_id IN (SELECT turn_id FROM llm_calls WHERE status = 'error' AND "
                     "error_type = ?))")
        params += [query.error] * 3
    if query.model:
        where.append("t.turn_id IN (SELECT turn_id FROM llm_calls WHERE model = ?)")
        params.append(query.model)
    if query.skill:
        where.append("t.trajectory_id IN (SELECT trajectory_id FROM skill_runs WHERE skill_name = ?)")
        params.append(query.skill)
    if sessions is not None:
        if query.tool:  # a tool's failed calls are in the store too
            where.append("(t.session_id IN (SELECT value FROM json_each(?)) OR t.trajectory_id IN "
                         "(SELECT trajectory_id FROM tool_errors WHERE tool_name = ?))")
            params += [json.dumps(sorted(sessions)), query.tool]
        else:
            where.append("t.session_id IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(sorted(sessions)))
    elif query.tool:
        where.append("t.trajectory_id IN (SELECT trajectory_id FROM tool_errors WHERE tool_name = ?)")
        params.append(query.tool)
    if query.q and text_in_store:
        where.append("(instr(lower(coalesce(t.session_id, '')), ?) > 0 OR instr(lower(coalesce(t.trajectory_id, "
                     "'')), ?) > 0 OR instr(lower(coalesce(t.task_class, '')), ?) > 0)")
        params += [query.q.lower()] * 3
    return " AND ".join(where), params


def _page(rows: list[dict[str, Any]] | None) -> tuple[list[dict[str, Any]], bool]:
    rows = rows or []
    return rows[:PAGE_SIZE], len(rows) > PAGE_SIZE


def _task_texts(conn: sqlite3.Connection | None, runs: list[dict[str, Any]]) -> None:
    """Each run's task text: the first user message of its session at or after its start (``state.db``)."""
    if conn is None:
        return
    for run in runs:
        start = _epoch(run.get("started_at") or run.get("ended_at"))
        if not run.get("session_id") or start is None:
            continue
        found = _rows(conn, "SELECT substr(content, 1, 300) AS text FROM messages WHERE session_id = ? AND role = "
                            "'user' AND timestamp >= ? ORDER BY timestamp LIMIT 1", (run["session_id"], start - 1))
        if not found:
            found = _rows(conn, "SELECT substr(content, 1, 300) AS text FROM messages WHERE session_id = ? AND "
                                "role = 'user' ORDER BY timestamp DESC LIMIT 1", (run["session_id"],))
        if found:
            run["task"] = found[0]["text"]


def _duration(run: dict[str, Any]) -> None:
    a, b = _epoch(run.get("started_at")), _epoch(run.get("ended_at"))
    run["duration_s"] = b - a if a is not None and b is not None and b >= a else None


@scrubbed
def runs(sources: Sources, query: ListQuery) -> dict[str, Any]:
    """One page of ``task_runs`` (newest first) matching ``query``, with the total, each run's task text,
    duration, skills loaded and whether its trajectory file exists; ``store_status`` for the page's note."""
    problems: list[str] = []
    with _db(sources.state_db) as state:
        sessions = _state_session_filter(state, query)
        with _db(sources.store_db, problems) as conn:
            where, params = _run_where(query, sessions, text_in_store=state is None)
            total = _rows(conn, f"SELECT COUNT(*) AS n FROM task_runs t WHERE {where}", tuple(params))
            rows, more = _page(_rows(conn, "SELECT t.id, t.trajectory_id, t.session_id, t.turn_id, t.task_class, "
                                           "t.started_at, t.ended_at, t.outcome, t.error_type, "
                                           f"{message_column(conn, 'task_runs', 't.')}, t.llm_calls, "
                                           "t.tool_calls, t.input_tokens, t.output_tokens, t.cost_usd FROM task_runs t "
                                           f"WHERE {where} ORDER BY t.ended_at DESC, t.id DESC LIMIT ? OFFSET ?",
                                     (*params, PAGE_SIZE + 1, query.offset)))
            tids = [r["trajectory_id"] for r in rows if r.get("trajectory_id")]
            skills = _rows(conn, "SELECT trajectory_id, skill_name FROM skill_runs WHERE trajectory_id IN "
                                 "(SELECT value FROM json_each(?))", (json.dumps(tids),)) if tids else []
        _task_texts(state, rows)
    by_run: dict[str, list[str]] = {}
    for s in skills or []:
        names = by_run.setdefault(str(s["trajectory_id"]), [])
        if s["skill_name"] not in names:
            names.append(s["skill_name"])
    present = _trajectory_ids(sources) if rows else set()
    for run in rows:
        _duration(run)
        run["skills"] = by_run.get(str(run.get("trajectory_id")), [])
        run["has_file"] = run.get("trajectory_id") in present
    return {"rows": rows, "more": more, "total": int(total[0]["n"]) if total else None,
            "store_status": store_status(sources, problems)}


def _store_session_ids(conn: sqlite3.Connection | None, query: ListQuery) -> set[str] | None:
    """Session ids of the store's runs matching the run filters of ``query`` (``None``: none is set)."""
    if conn is None or not (query.outcome or query.error or query.skill):
        return None
    where, params = _run_where(ListQuery(outcome=query.outcome, error=query.error, skill=query.skill), None,
                               text_in_store=False)
    return {str(r["session_id"]) for r in _rows(conn, f"SELECT DISTINCT session_id FROM task_runs t WHERE {where} "
                                                      "AND session_id IS NOT NULL", tuple(params)) or []}


def _session_totals(conn: sqlite3.Connection | None, ids: list[str]) -> dict[str, dict[str, Any]]:
    """Per session of ``ids``: runs, failed runs, cost, tokens, first start and last end (the store)."""
    if conn is None or not ids:
        return {}
    rows = _rows(conn, "SELECT session_id, COUNT(*) AS runs, SUM(outcome IN ('failed', 'timed_out')) AS failed, "
                       "SUM(outcome = 'success') AS ok, SUM(cost_usd) AS cost, COUNT(cost_usd) AS costed, "
                       "SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, "
                       "MIN(started_at) AS started_at, MAX(ended_at) AS ended_at, MAX(platform) AS source "
                       "FROM task_runs WHERE session_id IN (SELECT value FROM json_each(?)) GROUP BY session_id",
                 (json.dumps(ids),)) or []
    return {str(r["session_id"]): r for r in rows}


def _outcome(totals: dict[str, Any]) -> str | None:
    if not totals.get("runs"):
        return None
    if totals.get("failed"):
        return "failed"
    return "success" if totals.get("ok") == totals.get("runs") else "mixed"


@scrubbed
def sessions_page(sources: Sources, query: ListQuery) -> dict[str, Any]:
    """One page of sessions (newest first) matching ``query``: Hermes' ``state.db`` when present, else
    grouped from the store's ``task_runs``; each with outcome, runs, cost, tokens and duration from the
    store. ``source`` says where the rows came from (``None``: neither database)."""
    problems: list[str] = []
    with _db(sources.state_db) as state, _db(sources.store_db, problems) as store:
        cols = [c for c in SESSION_COLUMNS if c in _columns(state, "sessions")] if state is not None else []
        if state is not None and "id" in cols:
            from_store = _store_session_ids(store, query)
            from_state = _state_session_filter(state, query)
            where, params = ["1"], []  # type: tuple[list[str], list[Any]]
            for name, op in (("since", ">="), ("until_before", "<")):
                value = _epoch(getattr(query, name))
                if value is not None:
                    where.append(f"started_at {op} ?")
                    params.append(value)
            if query.model:
                where.append("model = ?")
                params.append(query.model)
            for kept in (from_store, from_state):
                if kept is not None:
                    where.append("id IN (SELECT value FROM json_each(?))")
                    params.append(json.dumps(sorted(kept)))
            clause = " AND ".join(where)
            total = _rows(state, f"SELECT COUNT(*) AS n FROM sessions WHERE {clause}", tuple(params))
            found = _rows(state, f"SELECT {', '.join(cols)} FROM sessions WHERE {clause} ORDER BY started_at DESC, "
                                 "id DESC LIMIT ? OFFSET ?", (*params, PAGE_SIZE + 1, query.offset))
            if found is not None:
                rows, more = _page(found)
                totals = _session_totals(store, [str(r["id"]) for r in rows])
                for row in rows:
                    t = totals.get(str(row["id"]), {})
                    row.update({"runs": t.get("runs"), "outcome": _outcome(t), "cost": t.get("cost")
                                if t.get("costed") else None, "failed": t.get("failed")})
                    started, ended = row.get("started_at"), row.get("ended_at")
                    row["duration_s"] = ended - started if isinstance(started, int | float) and \
                        isinstance(ended, int | float) else None
                return {"source": "state.db", "rows": rows, "more": more, "total": int(total[0]["n"]) if total else None,
                        "store_status": store_status(sources, problems)}
        if store is None:
            return {"source": None, "rows": [], "more": False, "total": 0,
                    "store_status": store_status(sources, problems)}
        where_sql, params = _run_where(query, None, text_in_store=True)
        group = (f"FROM task_runs t WHERE {where_sql} AND t.session_id IS NOT NULL GROUP BY t.session_id")
        total = _rows(store, f"SELECT COUNT(*) AS n FROM (SELECT 1 {group})", tuple(params))
        found = _rows(store, f"SELECT t.session_id AS id, MAX(t.ended_at) AS last {group} ORDER BY last DESC, id DESC "
                             "LIMIT ? OFFSET ?", (*params, PAGE_SIZE + 1, query.offset))
        if found is None:  # the store exists but cannot be read: the page says so, not "no session"
            return {"source": None, "rows": [], "more": False, "total": None,
                    "store_status": store_status(sources, problems)}
        rows, more = _page(found)
        ids = [str(r["id"]) for r in rows]
        totals = _session_totals(store, ids)
        models = _rows(store, "SELECT session_id, model, COUNT(*) AS n FROM llm_calls WHERE session_id IN (SELECT value "
                              "FROM json_each(?)) AND model IS NOT NULL GROUP BY session_id, model", (json.dumps(ids),)) \
            if ids else []
        titles = _rows(store, "SELECT session_id, task_class FROM task_runs WHERE session_id IN (SELECT value FROM "
                              "json_each(?)) AND task_class IS NOT NULL ORDER BY started_at", (json.dumps(ids),)) \
            if ids else []
        runs_of = _rows(store, "SELECT session_id, trajectory_id FROM task_runs WHERE session_id IN (SELECT value "
                               "FROM json_each(?)) AND trajectory_id IS NOT NULL ORDER BY started_at, id",
                        (json.dumps(ids),)) if ids else []
        last = _rows(store, "SELECT session_id, outcome, error_type, MAX(ended_at) AS ended FROM task_runs WHERE "
                            "session_id IN (SELECT value FROM json_each(?)) GROUP BY session_id", (json.dumps(ids),)) \
            if ids else []
    first_run: dict[str, str] = {}
    for t in runs_of or []:
        first_run.setdefault(str(t["session_id"]), str(t["trajectory_id"]))
    asked = _first_user_messages(sources, first_run)
    model_of: dict[str, tuple[int, str]] = {}
    for m in models or []:  # the model a session called most
        if int(m["n"]) > model_of.get(str(m["session_id"]), (0, ""))[0]:
            model_of[str(m["session_id"])] = (int(m["n"]), str(m["model"]))
    end_of = {str(r["session_id"]): f"last run {r['outcome']}" + (f" ({r['error_type']})" if r.get("error_type") else "")
              for r in last or [] if r.get("outcome")}
    title_of: dict[str, str] = {}
    for t in titles or []:
        title_of.setdefault(str(t["session_id"]), str(t["task_class"]))
    out = []
    for row in rows:
        t = totals.get(str(row["id"]), {})
        a, b = _epoch(t.get("started_at")), _epoch(t.get("ended_at"))
        out.append({"id": row["id"], "source": t.get("source"), "model": model_of.get(str(row["id"]), (0, None))[1],
                    "title": asked.get(str(row["id"])) or title_of.get(str(row["id"])),
                    "started_at": t.get("started_at"), "ended_at": t.get("ended_at"),
                    "end_reason": end_of.get(str(row["id"])), "runs": t.get("runs"), "outcome": _outcome(t),
                    "failed": t.get("failed"), "cost": t.get("cost") if t.get("costed") else None,
                    "input_tokens": t.get("input_tokens"), "output_tokens": t.get("output_tokens"),
                    "duration_s": b - a if a is not None and b is not None else None})
    return {"source": "store", "rows": out, "more": more, "total": int(total[0]["n"]) if total else None,
            "store_status": store_status(sources, problems)}


_USER_MESSAGE: Final = re.compile(rb'"source"\s*:\s*"user"\s*,\s*"message"\s*:\s*("(?:[^"\\]|\\.)*")')
TITLE_HEAD_BYTES: Final = 65536
"""Bytes read from the start of a run file to find its first user message (a session's title without state.db)."""


def _first_user_messages(sources: Sources, first_run: dict[str, str]) -> dict[str, str]:
    """Per session of ``first_run`` (session id → its first run's id): the first user message of that run's file,
    cut to 160 characters, read from the file's first :data:`TITLE_HEAD_BYTES` bytes (one page: at most
    :data:`~.params.PAGE_SIZE` files)."""
    if not first_run:
        return {}
    try:
        names = {n[11:47]: n for n in os.listdir(sources.trajectories) if len(n) == 52 and n.endswith(".json")}
    except OSError:
        return {}
    out: dict[str, str] = {}
    for session, tid in first_run.items():
        name = names.get(tid)
        if name is None:
            continue
        head = read_part(sources.trajectories / name, TITLE_HEAD_BYTES)
        found = _USER_MESSAGE.search(head) if head is not None else None
        if found is None:
            continue
        try:
            text = json.loads(found.group(1))
        except ValueError:
            continue
        if isinstance(text, str) and text.strip():
            text = " ".join(text.split())
            out[session] = text if len(text) <= 160 else text[:159] + "…"
    return out


@scrubbed
def failures(sources: Sources, query: ListQuery) -> dict[str, Any]:
    """What failed in the time range of ``query`` (default: the last 7 days): failed runs, failed tool
    calls (non-zero exits included) and failed provider attempts, counted by error type, and one page of
    each, newest first, each with the run (and the step anchor) it belongs to."""
    window, params = [], []  # type: tuple[list[str], list[Any]]
    if query.since:
        window.append("{t} >= ?")
        params.append(query.since)
    if query.until:
        window.append("{t} < ?")
        params.append(query.until_before)

    def by_type_and_page(conn: sqlite3.Connection | None, table: str, condition: str, columns: str, key: str,
                         types: str) -> None:
        """``out[types]``: the rows of ``table`` matching ``condition``, the time range and the error filter,
        counted by error type; ``out[key]`` / ``out[key + "_more"]``: one page of them, newest first, with
        ``columns`` and the error message (one shape for the three lists of the page)."""
        parts, values = [w.format(t="ended_at") for w in window] + [condition], list(params)
        if query.error:
            parts.append("coalesce(error_type, '(not recorded)') = ?")
            values.append(query.error)
        w, p = " AND ".join(parts), tuple(values)
        out[types] = _rows(conn, "SELECT coalesce(error_type, '(not recorded)') AS type, COUNT(*) AS n "
                                 f"FROM {table} WHERE {w} GROUP BY type ORDER BY n DESC", p)
        out[key], out[f"{key}_more"] = _page(_rows(
            conn, f"SELECT {columns}, {message_column(conn, table)} FROM {table} "
                  f"WHERE {w} ORDER BY ended_at DESC, id DESC LIMIT ? OFFSET ?", (*p, PAGE_SIZE + 1, query.offset)))

    problems: list[str] = []
    out: dict[str, Any] = {}
    with _db(sources.store_db, problems) as conn:
        by_type_and_page(conn, "task_runs", "outcome IN ('failed', 'timed_out')",
                         "trajectory_id, session_id, ended_at, outcome, error_type, cost_usd", "runs", "run_types")
        by_type_and_page(conn, "tool_errors", "1", "ended_at, session_id, trajectory_id, tool_call_id, tool_name, "
                         "status, error_type, exit_code", "tools", "tool_types")
        by_type_and_page(conn, "llm_calls", "status = 'error'", "ended_at, session_id, turn_id, api_request_id, "
                         "provider, model, error_type", "llm", "llm_types")
        turns = sorted({str(r["turn_id"]) for r in out["llm"] if r.get("turn_id")})
        owners = _rows(conn, "SELECT turn_id, trajectory_id FROM task_runs WHERE turn_id IN (SELECT value FROM "
                             "json_each(?))", (json.dumps(turns),)) if turns else []
    run_of = {str(r["turn_id"]): r["trajectory_id"] for r in owners or []}
    for call in out["llm"]:
        call["trajectory_id"] = run_of.get(str(call.get("turn_id")))
    present = _trajectory_ids(sources)
    for key in ("runs", "tools", "llm"):
        for row in out[key]:
            row["has_file"] = row.get("trajectory_id") in present
    out["store_status"] = store_status(sources, problems)
    return out


def sessions_first_page(sources: Sources) -> dict[str, Any]:
    """The first page of sessions, unfiltered (``queries.sessions``)."""
    return sessions_page(sources, ListQuery())
