"""All the SQL and filesystem reads of the dashboard (spec 06 §10). Views never query.

(Over 400 lines on purpose: every read of every page is here, so that "what does the dashboard read, and how
is it bounded and scrubbed" is answered in one file; the views only render.)

Every function takes :class:`~.sources.Sources` and returns plain data (dicts, lists, numbers).
A missing source is never an error: the result says it is missing (``None`` or ``available =
False``) and the page says so. Queries are bounded (``LIMIT``, time windows on indexed columns) and
the trajectory directory is listed without opening its files, so pages stay fast on large profiles.

Every string a public function returns has been through the credential scrubber (:mod:`.scrubbed`):
the pages show Hermes' own ``state.db`` messages, skill directory names and memory file names, none of
which the pipeline wrote, and this module is where that text enters the dashboard.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from ..engine.scrub import hide_printed_in_history
from .scrubbed import scrubbed
from .sources import SESSION_ID, TRAJECTORY_ID, TRAJECTORY_REF, Sources, connect_ro, inside
from .stats import SKILL_WINDOW_DAYS, anomalies_from, daily_series, hourly_series, local_day_bounds, utc_text

__all__ = ["overview", "session", "store_status", "trajectory", "trajectory_diff", "trajectory_files"]

SESSION_COLUMNS: Final = ("id", "source", "model", "title", "started_at", "ended_at", "end_reason",
                          "message_count", "tool_call_count", "input_tokens", "output_tokens")
"""Columns of Hermes' ``sessions`` table the dashboard shows (those present are read)."""
MESSAGE_COLUMNS: Final = ("role", "content", "tool_call_id", "tool_calls", "tool_name", "timestamp", "active")
"""Columns of Hermes' ``messages`` table the dashboard shows."""
MESSAGES_PER_PAGE: Final = 1000
"""Messages one page of a session shows (``/sessions/<id>?page=N`` for the next ones)."""
MAX_TRAJECTORY_BYTES: Final = 64 << 20


@contextmanager
def _db(path: Path, problems: list[str] | None = None) -> Iterator[sqlite3.Connection | None]:
    conn = connect_ro(path, problems)
    try:
        yield conn
    finally:
        if conn is not None:
            conn.close()


def _rows(conn: sqlite3.Connection | None, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]] | None:
    """The rows of ``sql`` as dicts, or ``None`` when the database or the table is missing (the error
    is kept in the connection's ``problems``, see :class:`~.sources.ReadConnection`)."""
    if conn is None:
        return None
    try:
        return [dict(row) for row in conn.execute(sql, params)]
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        problems = getattr(conn, "problems", None)
        if problems is not None:
            problems.append(str(exc) or type(exc).__name__)
        return None


def store_status(sources: Sources, problems: list[str]) -> dict[str, Any]:
    """What a page says about the observability store: ``state`` is ``ok``, ``missing`` (with
    ``audit_enabled``: enabled but not written yet) or ``unreadable`` (``reason``: the first error met);
    ``writes`` is the writers' failure record (``failing`` reason, ``rows_lost``)."""
    from ..sinks.observability_store.failures import read_failures

    present = sources.store_db.is_file()
    state = "unreadable" if problems else "ok" if present else "missing"
    return {"state": state, "reason": problems[0] if problems else None, "audit_enabled": sources.audit_enabled,
            "writes": read_failures(sources.store_db) if sources.store_db.parent.is_dir() else {}}


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    try:
        return {str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")}
    except (sqlite3.Error, UnicodeDecodeError):
        return set()


def message_column(conn: sqlite3.Connection | None, table: str, alias: str = "") -> str:
    """``error_message`` of ``table`` (as ``alias.``) for a ``SELECT`` list, or ``NULL AS error_message`` on a
    store written before schema 5 (the dashboard reads, never upgrades, so an older store must still answer)."""
    return f"{alias}error_message" if conn is not None and "error_message" in _columns(conn, table) else \
        "NULL AS error_message"


# ---- the trajectory directory -------------------------------------------------------------------

@scrubbed
def trajectory_files(sources: Sources, limit: int = 20) -> list[dict[str, Any]] | None:
    """The ``limit`` most recently written trajectory files (id, date, size, mtime), newest first,
    found by one directory scan (no file is opened); ``None`` without the directory."""
    try:
        entries = list(os.scandir(sources.trajectories))
    except OSError:
        return None
    names = sorted((e.name for e in entries if len(e.name) == 52 and e.name.endswith(".json")
                    and TRAJECTORY_ID.fullmatch(e.name[11:47])), reverse=True)
    if len(names) > limit:  # file names start with the run's date: only the newest dates need a stat
        oldest_date = names[limit - 1][:10]
        names = [n for n in names if n[:10] >= oldest_date]
    found = []
    for name in names:
        try:
            st = os.stat(sources.trajectories / name)
        except OSError:
            continue
        found.append((st.st_mtime, name, st.st_size))
    found.sort(reverse=True)
    return [{"id": name[11:47], "date": name[:10], "mtime": mtime, "size": size}
            for mtime, name, size in found[:limit]]


def _trajectory_ids(sources: Sources) -> set[str]:
    """The ids of every store-named file in the trajectory directory (one listing, no stat)."""
    try:
        return {n[11:47] for n in os.listdir(sources.trajectories)
                if len(n) == 52 and n.endswith(".json") and TRAJECTORY_ID.fullmatch(n[11:47])}
    except OSError:
        return set()


def resolve_trajectory(sources: Sources, ref: str) -> tuple[str, Path]:
    """``(full id, file)`` of the trajectory ``ref`` names: a full id or a unique prefix (the store's one lookup,
    shared with the ``replay`` and ``trajectory`` commands).

    Raises:
        TrajectoryLookupError: nothing matches, or several runs do (``candidates``).
    """
    from ..sinks.trajectory_store import TrajectoryLookupError, find_trajectory
    from .replays import replay_index

    key = ref.strip().lower()
    if len(key) >= 4 and TRAJECTORY_REF.fullmatch(key):  # the cached listing answers without a scan of the directory
        known = replay_index(sources).store_file(key)
        if known is not None:
            return known
    try:
        trajectory_id, path = find_trajectory(sources.trajectories, ref)
    except TrajectoryLookupError as exc:
        # Hermes' replays are named replay-<session>.json: found by their id through the replay index
        found = replay_index(sources).file_of(ref) if not exc.candidates else None
        if found is None:
            raise
        return found
    # an entry of the directory by its name; one that links elsewhere is never read (:func:`_read` says "damaged")
    return trajectory_id, path


def _trajectory_path(sources: Sources, trajectory_id: str) -> Path | None:
    """The file of ``trajectory_id`` (a full id, as ``task_runs`` holds it), or ``None``."""
    from ..sinks.trajectory_store import TrajectoryLookupError

    if not TRAJECTORY_ID.fullmatch(trajectory_id):
        return None
    try:
        return resolve_trajectory(sources, trajectory_id)[1]
    except TrajectoryLookupError:
        return None


def _read(path: Path) -> tuple[dict[str, Any] | None, dict[str, str] | None]:
    """``(document, None)``, or ``(None, problem)`` with the ``kind`` (``too_large`` or ``damaged``) and
    the ``reason`` of a run file the dashboard cannot show (a regular file inside the trajectory
    directory, symlinks resolved, of at most :data:`MAX_TRAJECTORY_BYTES`, JSON, ATIF, its fields of the
    types the views read). A file linking out of the directory is never read."""
    from ..readers.definitions import expand_trajectory
    from ..readers.files import InputFileError, load_json
    from ..readers.shapes import check_atif

    if not inside(path, path.parent):
        return None, {"kind": "damaged", "reason": "it links outside the trajectory directory", "file": path.name}
    try:
        doc = load_json(path, limit=MAX_TRAJECTORY_BYTES)
        if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
            raise InputFileError(path, "not an ATIF trajectory (no 'steps' list)")
        check_atif(doc, path)
        expand_trajectory(doc, path, limit=MAX_TRAJECTORY_BYTES)  # definitions kept once in the store's sidecar
    except InputFileError as exc:
        reason = f"field {exc.field}: {exc.reason}" if exc.field else exc.reason
        return None, {"kind": "too_large" if exc.kind == "too_large" else "damaged", "reason": reason,
                      "file": path.name}
    return doc, None


def _load(path: Path) -> dict[str, Any] | None:
    return _read(path)[0]


def _runs_by_trajectory(conn: sqlite3.Connection | None, ids: list[str]) -> dict[str, dict[str, Any]]:
    if conn is None or not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = _rows(conn, f"SELECT trajectory_id, session_id, outcome, input_tokens, output_tokens, cost_usd, "
                       f"started_at, ended_at, error_type, {message_column(conn, 'task_runs')} FROM task_runs "
                       f"WHERE trajectory_id IN ({marks})",
                 tuple(ids)) or []
    return {str(r["trajectory_id"]): r for r in rows}


def _turn_ids(doc: dict[str, Any]) -> list[str]:
    """The run ids of the turns a trajectory file holds (its user steps' ``extra.hermes.trajectory_id``), in order,
    without the file's own id; at most 200."""
    found: list[str] = []
    for step in doc.get("steps") or []:
        extra = step.get("extra") if isinstance(step, dict) else None
        hermes = extra.get("hermes") if isinstance(extra, dict) else None
        tid = hermes.get("trajectory_id") if isinstance(hermes, dict) else None
        if isinstance(tid, str) and TRAJECTORY_ID.fullmatch(tid) and tid not in found and len(found) < 200:
            found.append(tid)
    return [t for t in found if t != doc.get("trajectory_id")]


@scrubbed
def trajectory(sources: Sources, ref: str) -> dict[str, Any] | None:
    """The document of one trajectory (``ref``: its id or a unique prefix) with its ``task_runs`` row, or
    ``None`` (unknown id). A run whose file cannot be shown has ``problem`` (see :func:`_read`) and no ``doc``.

    Raises:
        TrajectoryLookupError: ``ref`` is a prefix of several ids (``candidates``).
    """
    from ..sinks.trajectory_store import TrajectoryLookupError

    try:
        trajectory_id, path = resolve_trajectory(sources, ref)
    except TrajectoryLookupError as exc:
        if exc.candidates:
            raise
        return None
    doc, problem = _read(path)
    if doc is None:  # _read gives either the document or the problem
        return {"id": trajectory_id, "file": path.name, "problem": problem}
    ids = json.dumps([trajectory_id, *_turn_ids(doc)])
    problems: list[str] = []
    with _db(sources.store_db, problems) as conn:
        runs = _runs_by_trajectory(conn, json.loads(ids))
        # a file of a whole host session holds several turns, each a task_runs row by its own id: the last one
        run = runs.get(trajectory_id) or next((runs[t] for t in reversed(json.loads(ids)) if t in runs), None)
        skills = _rows(conn, "SELECT DISTINCT skill_name FROM skill_runs WHERE trajectory_id IN "
                             "(SELECT value FROM json_each(?))", (ids,))
        errors = _rows(conn, "SELECT tool_call_id, tool_name, status, error_type, exit_code, "
                             f"{message_column(conn, 'tool_errors')} FROM tool_errors WHERE trajectory_id IN "
                             "(SELECT value FROM json_each(?)) LIMIT 1000", (ids,))
        previous = _rows(conn, "SELECT trajectory_id FROM task_runs WHERE session_id = ? AND ended_at < ? AND "
                               "trajectory_id IS NOT NULL AND trajectory_id != ? ORDER BY ended_at DESC, id DESC LIMIT 1",
                         (run.get("session_id"), run.get("ended_at"), trajectory_id)) if run else None
    from .replays import REPLAYS_SHOWN, replay_index, replay_summary

    replays = replay_index(sources).replays_of(trajectory_id)
    return {"id": trajectory_id, "file": path.name, "doc": doc, "run": run,
            "replays": [replay_summary(sources, doc, rid, name) for rid, name in replays[:REPLAYS_SHOWN]],
            "replay_count": len(replays),
            "skills": [str(r["skill_name"]) for r in skills or []], "tool_errors": errors or [],
            "previous": str(previous[0]["trajectory_id"]) if previous else None,
            "jaeger_url": sources.jaeger_url, "store_status": store_status(sources, problems)}


@scrubbed
def trajectory_diff(sources: Sources, old_id: str, new_id: str) -> dict[str, Any] | None:
    """Two trajectories aligned step by step (the replay package's comparison), or ``None``."""
    from ..replay.diff import comparable_steps, diff_trajectories

    a, b = trajectory(sources, old_id), trajectory(sources, new_id)
    if a is None or b is None:
        return None
    for side in (a, b):
        if "problem" in side:  # one of the two cannot be shown: say which, and why
            return side
    result = diff_trajectories(a["doc"], b["doc"])
    old_steps, new_steps = comparable_steps(a["doc"]), comparable_steps(b["doc"])
    differing = {d.step: d.fields for d in result.steps}
    rows = [{"step": i + 1, "old": old_steps[i] if i < len(old_steps) else None,
             "new": new_steps[i] if i < len(new_steps) else None, "fields": differing.get(i + 1, [])}
            for i in range(max(len(old_steps), len(new_steps)))]
    return {"old": a["id"], "new": b["id"], "rows": rows, "verdict": result.verdict,
            "old_final": result.old_final, "new_final": result.new_final,
            "old_tokens": result.old_tokens, "new_tokens": result.new_tokens}


# ---- today ---------------------------------------------------------------------------------------

def _skill_run_window(conn: sqlite3.Connection | None, now: float) -> list[dict[str, Any]] | None:
    """Each skill's 5 latest runs (``rn`` 1..5) and its runs of the skill-health window (``rn`` ``None``),
    read through the (skill_name, ended_at) index one skill at a time."""
    names = _rows(conn, "SELECT DISTINCT skill_name FROM skill_runs")
    if conn is None or names is None:
        return None
    out: list[dict[str, Any]] = []
    week = utc_text(now - SKILL_WINDOW_DAYS * 86400)
    for row in names:
        name = row["skill_name"]
        latest = _rows(conn, "SELECT skill_name, outcome, ended_at FROM skill_runs WHERE skill_name = ? "
                             "ORDER BY ended_at DESC LIMIT 5", (name,)) or []
        out += [{**r, "rn": i + 1} for i, r in enumerate(latest)]
        out += [{**r, "rn": None} for r in _rows(conn, "SELECT skill_name, outcome, ended_at FROM skill_runs WHERE "
                                                       "skill_name = ? AND ended_at >= ?", (name, week)) or []]
    return out


@scrubbed
def overview(sources: Sources, now: float | None = None) -> dict[str, Any]:
    """The ``/`` page: today's tasks, success rate, cost and tokens (``task_runs``), today's LLM calls,
    14 days of tokens and cost, 24 hours of success rate, the latest trajectories, the anomalies."""
    now = time.time() if now is None else now
    start, end = local_day_bounds(now)
    out: dict[str, Any] = {"store": sources.store_db.is_file(), "day": time.strftime("%Y-%m-%d", time.localtime(now))}
    problems: list[str] = []
    with _db(sources.store_db, problems) as conn:
        today = _rows(conn, "SELECT COUNT(*) AS tasks, SUM(outcome = 'success') AS ok, SUM(cost_usd) AS cost, "
                            "COUNT(cost_usd) AS costed, SUM(input_tokens) AS input, SUM(output_tokens) AS output "
                            "FROM task_runs WHERE ended_at >= ? AND ended_at < ?", (start, end))
        out["today"] = today[0] if today else None
        calls = _rows(conn, "SELECT COUNT(*) AS calls, SUM(status = 'error') AS errors FROM llm_calls "
                            "WHERE ended_at >= ? AND ended_at < ?", (start, end))
        out["llm_today"] = calls[0] if calls else None
        days = _rows(conn, "SELECT substr(ended_at, 1, 10) AS day, SUM(input_tokens) AS input, "
                           "SUM(output_tokens) AS output, SUM(cost_usd) AS cost, COUNT(cost_usd) AS costed, "
                           "COUNT(*) AS tasks FROM task_runs WHERE ended_at >= ? GROUP BY day",
                     (utc_text(now - 29 * 86400),))
        hours = _rows(conn, "SELECT substr(ended_at, 1, 13) AS hour, COUNT(*) AS tasks, "
                            "SUM(outcome = 'success') AS ok FROM task_runs WHERE ended_at >= ? GROUP BY hour",
                      (utc_text(now - 24 * 3600),))
        latest = _rows(conn, "SELECT outcome FROM task_runs ORDER BY ended_at DESC LIMIT 200")
        skill_runs = _skill_run_window(conn, now)
        first = _rows(conn, "SELECT MIN(ended_at) AS first FROM task_runs")
        out["cost_by_model"] = _rows(conn, "SELECT model, SUM(cost_usd) AS cost, COUNT(*) AS calls FROM llm_calls "
                                           "WHERE ended_at >= ? AND ended_at < ? GROUP BY model ORDER BY cost DESC "
                                           "LIMIT 10", (start, end))
        out["cost_by_session"] = _rows(conn, "SELECT session_id, SUM(cost_usd) AS cost, COUNT(*) AS runs FROM "
                                             "task_runs WHERE ended_at >= ? AND ended_at < ? AND session_id IS NOT "
                                             "NULL GROUP BY session_id ORDER BY cost DESC LIMIT 10", (start, end))
        day_runs = _rows(conn, "SELECT trajectory_id, cost_usd FROM task_runs WHERE ended_at >= ? AND ended_at < ? "
                               "AND trajectory_id IS NOT NULL", (start, end))
        day_skills = _rows(conn, "SELECT DISTINCT skill_name, trajectory_id FROM skill_runs WHERE ended_at >= ? AND "
                                 "ended_at < ?", (start, end))
        files = trajectory_files(sources, 20)
        runs = _runs_by_trajectory(conn, [f["id"] for f in files or []])
    out["daily"] = daily_series(days, now, 14) if days is not None else None
    out["hourly"] = hourly_series(hours, now) if hours is not None else None
    out["store_status"] = status = store_status(sources, problems)
    first_day = str(first[0]["first"])[:10] if first and first[0].get("first") else None
    out["anomalies"] = anomalies_from(days, latest, skill_runs, now, first_day) if conn is not None and \
        status["state"] == "ok" else None
    out["trajectories"] = None if files is None else [{**f, "run": runs.get(f["id"])} for f in files]
    run_cost = {str(r["trajectory_id"]): r["cost_usd"] for r in day_runs or []}
    by_skill: dict[str, dict[str, Any]] = {}
    for row in day_skills or []:  # a run that loaded several skills counts for each of them
        entry = by_skill.setdefault(str(row["skill_name"]), {"skill": row["skill_name"], "cost": 0.0, "runs": 0})
        entry["runs"] += 1
        value = run_cost.get(str(row["trajectory_id"]))
        entry["cost"] += value if isinstance(value, int | float) else 0.0
    out["cost_by_skill"] = None if day_skills is None else \
        sorted(by_skill.values(), key=lambda r: (-r["cost"], str(r["skill"])))[:10]
    return out


# ---- sessions ------------------------------------------------------------------------------------

@scrubbed
def session(sources: Sources, session_id: str, page: int = 1) -> dict[str, Any] | None:
    """One session: its ``state.db`` row and one page (:data:`MESSAGES_PER_PAGE`) of its message stream in stored
    order, else of the steps of its recorded runs (``more``: a next page exists); with its runs (trajectories)
    from the store. ``None`` for an unknown id."""
    offset = (max(1, page) - 1) * MESSAGES_PER_PAGE
    if not SESSION_ID.fullmatch(session_id):
        return None
    out: dict[str, Any] = {"id": session_id, "row": None, "messages": None, "runs": [],
                           "jaeger_url": sources.jaeger_url, "source": None}
    with _db(sources.state_db) as conn:
        if conn is not None:
            cols = [c for c in SESSION_COLUMNS if c in _columns(conn, "sessions")]
            found = _rows(conn, f"SELECT {', '.join(cols)} FROM sessions WHERE id = ?", (session_id,)) if cols else []
            if found:
                out["row"], out["source"] = found[0], "state.db"
                mcols = [c for c in MESSAGE_COLUMNS if c in _columns(conn, "messages")]
                out["messages"] = _rows(conn, f"SELECT {', '.join(mcols)} FROM messages WHERE session_id = ? "
                                              f"ORDER BY id LIMIT ? OFFSET ?",
                                        (session_id, MESSAGES_PER_PAGE + 1, offset))
                _hide_printed(conn, session_id, out["messages"])
    problems: list[str] = []
    with _db(sources.store_db, problems) as conn:
        runs = _rows(conn, "SELECT trajectory_id, turn_id, platform, started_at, ended_at, outcome, error_type, "
                           f"{message_column(conn, 'task_runs')}, "
                           "input_tokens, output_tokens, cost_usd FROM task_runs WHERE session_id = ? ORDER BY ended_at, id "
                           "LIMIT 1000", (session_id,)) or []
    present = _trajectory_ids(sources) if runs else set()
    for run in runs:
        run["has_file"] = run.get("trajectory_id") in present
    out["runs"] = runs
    out["store_status"] = store_status(sources, problems)
    if out["row"] is None:
        if not runs:
            return None
        out["source"] = "store"
        out["messages"] = _messages_from_runs(sources, runs)[offset:offset + MESSAGES_PER_PAGE + 1]
    messages = out["messages"]
    out["more"] = messages is not None and len(messages) > MESSAGES_PER_PAGE
    out["messages"] = messages[:MESSAGES_PER_PAGE] if messages is not None else None
    out["page"], out["offset"] = max(1, page), offset
    return out


_CALLS_LOOKED_AT: Final = 2000
"""The most assistant messages with tool calls of a session read to tell what each tool result's call ran."""


def _hide_printed(conn: sqlite3.Connection, session_id: str, messages: list[dict[str, Any]] | None) -> None:
    """Each ``tool`` message of ``messages`` read with its call's arguments (:func:`hide_printed_in_history`: a
    command that printed a credential, a file named for one), its call found among the session's assistant messages
    (the page's or an earlier one's), in place; the rest is scrubbed as every page is."""
    tools = [m for m in messages or () if m.get("role") == "tool" and isinstance(m.get("content"), str)]
    if not tools:
        return
    rows = _rows(conn, "SELECT tool_calls FROM messages WHERE session_id = ? AND tool_calls IS NOT NULL "
                       "ORDER BY id DESC LIMIT ?", (session_id, _CALLS_LOOKED_AT)) or []
    history: list[object] = []
    for row in reversed(rows):
        try:
            calls = json.loads(row["tool_calls"])
        except (TypeError, ValueError):
            continue
        if isinstance(calls, list):
            history.append({"role": "assistant", "tool_calls": calls})
    given = [{"role": "tool", "tool_call_id": m.get("tool_call_id"), "content": m["content"]} for m in tools]
    hidden = hide_printed_in_history(history + given)
    for message, before, after in zip(tools, given, hidden[len(history):]):
        if after is not before:
            message["content"] = after["content"]  # type: ignore[index]


def _messages_from_runs(sources: Sources, runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A session's messages rebuilt from the steps of its recorded trajectories (no ``state.db``)."""
    messages: list[dict[str, Any]] = []
    for run in runs[:200]:
        path = _trajectory_path(sources, str(run.get("trajectory_id") or ""))
        doc = _load(path) if path is not None else None
        for step in (doc or {}).get("steps") or []:
            if not isinstance(step, dict):
                continue
            role = "user" if step.get("source") == "user" else "assistant" if step.get("source") == "agent" \
                else str(step.get("source"))
            calls = step.get("tool_calls") or None
            messages.append({"role": role, "content": step.get("message"), "timestamp": step.get("timestamp"),
                             "tool_calls": json.dumps(calls, ensure_ascii=False) if calls else None})
            for result in ((step.get("observation") or {}).get("results") or []):
                if isinstance(result, dict):
                    messages.append({"role": "tool", "content": result.get("content"),
                                     "tool_call_id": result.get("source_call_id"), "timestamp": step.get("timestamp")})
    return messages


def __getattr__(name: str) -> Any:
    """The page queries that live in their own modules, under the names callers have always used
    (``queries.sessions``, ``queries.skills``, ``queries.memory``), resolved on first use (those modules
    import this one)."""
    if name in ("skills", "memory"):
        from . import queries_pages

        return getattr(queries_pages, name)
    if name == "sessions":
        from .queries_lists import sessions_first_page

        return sessions_first_page
    raise AttributeError(name)
