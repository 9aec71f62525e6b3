"""The reads of the skill and memory pages: ``/skills`` and ``/skills/<name>``, ``/memory`` and ``/memory/<file>``.

A skill's runs are attributed to a version by time: ``skill_runs`` names the skill, not the version, and
a version is in force from its ``changed_at`` until the next version's. The store keeps each version's
hashes, reason and changed files, not the skill's text, so "the diff between two versions" is what the
store knows of them: files, hashes, reasons, and the runs' success and cost on each side. A memory
change is linked to its run by its session and time (the run of that session whose span holds the
change, else the session's latest run before it).
"""

from __future__ import annotations

import difflib
import json
import os
import time
from pathlib import Path
from typing import Any, Final

from ..engine.scrub import safe_scrub
from ..host.profile_files import read_regular_bytes
from .params import PAGE_SIZE, ListQuery, time_range
from .queries import _db, _rows, _skill_run_window, _trajectory_ids, store_status
from .scrubbed import scrubbed
from .sources import Sources
from .stats import SKILL_WINDOW_DAYS, skill_alarm, utc_text

__all__ = ["memory", "memory_file", "skill", "skills"]

RUNS_PER_VERSION: Final = 20
"""Latest runs listed under each version (the counts cover all of them)."""
DIFF_LINES: Final = 2000
"""Lines of one file's diff a skill page shows (the rest is counted)."""
SCAN_ACTIONS: Final = {"external_edit": "someone outside Hermes (found by a rescan)",
                       "discovered": "found on disk by a rescan", "external_delete": "deleted outside Hermes",
                       "external_restore": "restored outside Hermes (found by a rescan)",
                       "unattributed": "not known: the store lost rows then (see the reason)"}
UNKNOWN_ACTOR: Final = "unknown (the store lost rows then)"
"""A memory change whose ``actor`` is NULL: found where the store had given up rows, so it cannot say whose."""


def _actor(row: dict[str, Any]) -> str:
    """Who made a version: a rescan's finding, else the agent (with a session) or an installer."""
    action = str(row.get("hermes_action") or "")
    if action in SCAN_ACTIONS:
        return SCAN_ACTIONS[action]
    if row.get("provenance") == "installed":
        return "installed (bundled or from the hub)"
    return "agent" if row.get("trigger_session_id") else (row.get("provenance") or "unknown")


@scrubbed
def skill(sources: Sources, name: str, a: int | None = None, b: int | None = None) -> dict[str, Any] | None:
    """A skill's versions (reason, actor, date, files), the runs of each version with their outcomes and a
    success and cost trend per version, and the comparison of versions ``a`` and ``b`` (default: the two
    latest). ``None`` when neither the store nor the skills directory knows the name."""
    problems: list[str] = []
    keys = list(dict.fromkeys((name, safe_scrub(name))))  # the store keeps names scrubbed
    with _db(sources.store_db, problems) as conn:
        versions = _rows(conn, "SELECT version, change_type, reason, trigger_session_id, changed_at, hermes_action, "
                               "provenance, skill_path, changed_files, before_hash, after_hash FROM skill_history "
                               "WHERE skill_name IN (SELECT value FROM json_each(?)) ORDER BY version",
                         (json.dumps(keys),))
        runs = _rows(conn, "SELECT s.trajectory_id, s.started_at, s.ended_at, s.outcome, t.cost_usd, t.session_id "
                           "FROM skill_runs s LEFT JOIN task_runs t ON t.trajectory_id = s.trajectory_id AND "
                           "t.trajectory_id IS NOT NULL WHERE s.skill_name IN (SELECT value FROM json_each(?)) "
                           "ORDER BY s.ended_at DESC", (json.dumps(keys),))
    from ..host.skill_layout import skill_dirs

    on_disk = sources.skills.is_dir() and any(p.name == name for p in skill_dirs(sources.skills))
    if not versions and not runs and not on_disk:
        if problems:
            return {"name": name, "versions": [], "store_status": store_status(sources, problems)}
        return None
    versions = versions or []
    starts = [str(v["changed_at"]) for v in versions]
    buckets: dict[int | None, dict[str, Any]] = {}
    for run in runs or []:
        stamp = str(run.get("started_at") or run.get("ended_at") or "")
        index = max((i for i, s in enumerate(starts) if s <= stamp), default=None)
        version = versions[index]["version"] if index is not None else None
        bucket = buckets.setdefault(version, {"runs": 0, "ok": 0, "cost": 0.0, "costed": 0, "latest": []})
        bucket["runs"] += 1
        bucket["ok"] += run.get("outcome") == "success"
        if isinstance(run.get("cost_usd"), int | float):
            bucket["cost"] += run["cost_usd"]
            bucket["costed"] += 1
        if len(bucket["latest"]) < RUNS_PER_VERSION:
            bucket["latest"].append(run)
    present = _trajectory_ids(sources) if runs else set()
    for bucket in buckets.values():
        bucket["rate"] = bucket["ok"] / bucket["runs"] if bucket["runs"] else None
        bucket["mean_cost"] = bucket["cost"] / bucket["costed"] if bucket["costed"] else None
        for run in bucket["latest"]:
            run["has_file"] = run.get("trajectory_id") in present
    for v in versions:
        v["actor"] = _actor(v)
        try:
            files = json.loads(v["changed_files"]) if v.get("changed_files") else []
        except ValueError:
            files = [str(v["changed_files"])]
        v["files"] = [str(f) for f in files] if isinstance(files, list) else [str(files)]
        v["stats"] = buckets.get(v["version"], {"runs": 0, "ok": 0, "rate": None, "mean_cost": None, "latest": []})
    numbers = [int(v["version"]) for v in versions]
    compare: dict[str, Any] | None = None
    if len(numbers) >= 2:
        a = a if a in numbers else numbers[-2]
        b = b if b in numbers else numbers[-1]
        compare = {"a": next(v for v in versions if v["version"] == a),
                   "b": next(v for v in versions if v["version"] == b)}
    if compare is not None:
        compare["text_diff"] = _text_diff(sources, name, int(compare["a"]["version"]), int(compare["b"]["version"]))
    return {"name": name, "versions": versions, "before_history": buckets.get(None), "compare": compare,
            "store_status": store_status(sources, problems)}


def _text_diff(sources: Sources, name: str, a: int, b: int) -> list[dict[str, Any]] | None:
    """The line diff of every file of skill ``name`` between versions ``a`` and ``b`` (``{file, status, lines,
    cut}``, files in name order; ``lines`` as :func:`_diff` gives them, at most :data:`DIFF_LINES` per file),
    from the skill's kept texts (:mod:`hermes_pipeline.readers.skill_versions`, imported when first needed);
    ``None`` when that reader is not installed, fails, or does not know either version (the page then
    compares what the store's rows say)."""
    try:
        from ..readers.skill_versions import skill_files

        old, new = skill_files(sources.home, name, a), skill_files(sources.home, name, b)
    except Exception:  # noqa: BLE001 - a reader that is absent or fails leaves the metadata comparison
        return None
    if not isinstance(old, dict) or not isinstance(new, dict):
        return None
    out = []
    for path in sorted(set(old) | set(new), key=str):
        before, after = old.get(path), new.get(path)
        if before == after:
            continue
        lines = _diff(before, after)
        out.append({"file": str(path), "status": "added" if before is None else "deleted" if after is None
                    else "changed", "lines": lines[:DIFF_LINES], "cut": max(0, len(lines) - DIFF_LINES)})
    return out


def _diff(before: Any, after: Any) -> list[tuple[str, str]]:
    """``(kind, line)`` pairs of a line diff of two excerpts: ``-`` removed, ``+`` added, `` `` kept."""
    old = str(before or "").splitlines()
    new = str(after or "").splitlines()
    out = []
    for line in difflib.ndiff(old, new):
        if line.startswith(("- ", "+ ", "  ")):
            out.append((line[0], line[2:]))
    return out


@scrubbed
def memory_file(sources: Sources, path: str, query: ListQuery) -> dict[str, Any] | None:
    """One page of the recorded changes to the memory file ``path`` (as the store names it), newest first,
    each with actor, reason, session, the run it happened in and the before/after line diff; ``None`` when
    the store has no change to that file."""
    problems: list[str] = []
    with _db(sources.store_db, problems) as conn:
        total = _rows(conn, "SELECT COUNT(*) AS n FROM memory_changes WHERE file_path = ?", (path,))
        rows = _rows(conn, "SELECT id, changed_at, change_type, actor, trigger_session_id, reason, before_excerpt, "
                           "after_excerpt FROM memory_changes WHERE file_path = ? ORDER BY changed_at DESC, id DESC "
                           "LIMIT ? OFFSET ?", (path, PAGE_SIZE + 1, query.offset))
        sessions = sorted({str(r["trigger_session_id"]) for r in rows or [] if r.get("trigger_session_id")})
        owners = _rows(conn, "SELECT trajectory_id, session_id, started_at, ended_at FROM task_runs WHERE session_id IN "
                             "(SELECT value FROM json_each(?)) AND trajectory_id IS NOT NULL ORDER BY started_at",
                       (json.dumps(sessions),)) if sessions else []
    if rows is None and problems:
        return {"path": path, "rows": [], "more": False, "total": None, "store_status": store_status(sources, problems)}
    if not rows and query.page == 1:
        return None
    rows = rows or []
    present = _trajectory_ids(sources) if owners else set()
    for row in rows[:PAGE_SIZE]:
        row["actor"] = row.get("actor") or UNKNOWN_ACTOR
        stamp = str(row["changed_at"])
        candidates = [o for o in owners or [] if str(o["session_id"]) == str(row.get("trigger_session_id"))]
        inside = [o for o in candidates if str(o.get("started_at") or "") <= stamp <= str(o.get("ended_at") or "~")]
        before = [o for o in candidates if str(o.get("started_at") or "") <= stamp]
        run = next(reversed(inside or before), None)
        row["trajectory_id"] = run["trajectory_id"] if run else None
        row["has_file"] = row["trajectory_id"] in present
        row["diff"] = _diff(row.get("before_excerpt"), row.get("after_excerpt"))
    return {"path": path, "rows": rows[:PAGE_SIZE], "more": len(rows) > PAGE_SIZE,
            "total": int(total[0]["n"]) if total else None, "store_status": store_status(sources, problems)}


# ---- skills and memory ---------------------------------------------------------------------------

def _front_matter(path: Path) -> dict[str, str]:
    """``name`` and ``description`` from the ``---`` front matter of a ``SKILL.md`` (simple ``key: value``)."""
    try:  # a FIFO or a device named SKILL.md is refused at once: the page's request never waits on it
        head = read_regular_bytes(path)[:65536].decode("utf-8", errors="replace")[:16384]
    except OSError:
        return {}
    lines = head.splitlines()
    if not lines or lines[0].strip() != "---":  # no front matter: the first line of text describes it
        first = next((line.strip().lstrip("#").strip() for line in lines if line.strip()), "")
        return {"description": first[:200]} if first else {}
    out: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() == "---":
            break
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("name", "description") and not line.startswith((" ", "\t")):
            out[key.strip()] = value.strip().strip("'\"")
    return out


@scrubbed
def skills(sources: Sources, now: float | None = None) -> dict[str, Any]:
    """Every skill of the profile, in any layout Hermes uses (``skills/<name>/``, category folders
    ``skills/<category>/<name>/``, deeper), with runs and success over the skill-health window
    (:data:`~.stats.SKILL_WINDOW_DAYS`, as the Today alarm), last use, change count, and ``red`` by the
    Today alarm's own rule."""
    from ..host.skill_layout import skill_dirs

    now = time.time() if now is None else now
    dirs = [p.relative_to(sources.skills).as_posix() for p in skill_dirs(sources.skills)] \
        if sources.skills.is_dir() else None
    problems: list[str] = []
    with _db(sources.store_db, problems) as conn:
        runs = _rows(conn, "SELECT skill_name, COUNT(*) AS runs, SUM(outcome = 'success') AS ok, "
                           "MAX(ended_at) AS last_used FROM skill_runs WHERE ended_at >= ? GROUP BY skill_name",
                     (utc_text(now - SKILL_WINDOW_DAYS * 86400),))
        last_used = _rows(conn, "SELECT skill_name, MAX(ended_at) AS last_used FROM skill_runs GROUP BY skill_name")
        window = _skill_run_window(conn, now)
        changes = _rows(conn, "SELECT skill_name, COUNT(*) AS changes FROM skill_history GROUP BY skill_name")
    by_run = {str(r["skill_name"]): r for r in runs or []}
    by_change = {str(r["skill_name"]): int(r["changes"]) for r in changes or []}
    ever = {str(r["skill_name"]): r["last_used"] for r in last_used or []}
    latest: dict[str, list[tuple[int, str]]] = {}
    recent: dict[str, list[str]] = {}
    for r in window or []:
        if isinstance(r.get("rn"), int):
            latest.setdefault(str(r["skill_name"]), []).append((r["rn"], str(r["outcome"])))
        else:
            recent.setdefault(str(r["skill_name"]), []).append(str(r["outcome"]))
    rows = []
    for rel in dirs or []:
        manifest = sources.skills / rel / "SKILL.md"
        if not manifest.is_file():
            continue
        name = rel.rsplit("/", 1)[-1]  # the skill's name is its directory's name, as in Hermes
        meta = _front_matter(manifest)
        # the store keeps the name scrubbed (a secret-looking directory name is redacted in its rows)
        key = name if name in by_run or name in ever else safe_scrub(name)
        run = by_run.get(key, {})
        count, ok = int(run.get("runs") or 0), int(run.get("ok") or 0)
        why = skill_alarm([o for _, o in sorted(latest.get(key, []))], recent.get(key, []))
        rows.append({"key": name, "dir": rel, "category": rel.rsplit("/", 1)[0] if "/" in rel else None,
                     "name": meta.get("name") or name, "description": meta.get("description"),
                     "runs": count, "ok": ok, "rate": ok / count if count else None,
                     "last_used": ever.get(key), "why": why,
                     "changes": by_change.get(name, by_change.get(safe_scrub(name), 0)),
                     "red": why is not None})
    rows.sort(key=lambda r: (r["rate"] is None, r["rate"] if r["rate"] is not None else 0.0, r["name"]))
    return {"skills_dir": dirs is not None, "store": runs is not None and changes is not None, "rows": rows,
            "window_days": SKILL_WINDOW_DAYS,
            "store_status": store_status(sources, problems)}


@scrubbed
def memory(sources: Sources, limit: int = 500, query: Any = None) -> dict[str, Any]:
    """Memory files (``*.md`` under the memory directories, newest first) and one page of the
    ``memory_changes`` rows matching ``query`` (a :class:`~.params.ListQuery`: ``since``, ``until``, ``q`` over
    the file, the reason and the excerpts; ``page``), newest first, with the total."""

    query = query if query is not None else ListQuery()
    files: list[dict[str, Any]] = []
    found_dir = False
    for directory in sources.memory_dirs:
        if not directory.is_dir():
            continue
        found_dir = True
        for root, subdirs, names in os.walk(directory):
            subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
            for name in names:
                if not name.endswith(".md"):
                    continue
                path = Path(root) / name
                try:
                    st = path.lstat()
                except OSError:
                    continue
                files.append({"path": path.relative_to(sources.home).as_posix()
                              if path.is_relative_to(sources.home) else path.as_posix(),
                              "size": st.st_size, "mtime": st.st_mtime})
    files.sort(key=lambda f: f["mtime"], reverse=True)
    where, params = time_range(query, "changed_at")
    where.insert(0, "1")
    if query.q:
        where.append("(instr(lower(file_path), ?) > 0 OR instr(lower(coalesce(reason, '')), ?) > 0 OR "
                     "instr(lower(coalesce(before_excerpt, '')), ?) > 0 OR instr(lower(coalesce(after_excerpt, '')), ?) > 0)")
        params += [query.q.lower()] * 4
    clause = " AND ".join(where)
    problems: list[str] = []
    with _db(sources.store_db, problems) as conn:
        total = _rows(conn, f"SELECT COUNT(*) AS n FROM memory_changes WHERE {clause}", tuple(params))
        changes = _rows(conn, "SELECT changed_at, file_path, change_type, actor, trigger_session_id, reason, "
                              f"substr(after_excerpt, 1, 120) AS excerpt FROM memory_changes WHERE {clause} "
                              "ORDER BY changed_at DESC, id DESC LIMIT ? OFFSET ?",
                        (*params, PAGE_SIZE + 1, query.offset))
        recorded = _rows(conn, "SELECT DISTINCT file_path FROM memory_changes")
    for change in changes or []:
        change["actor"] = change.get("actor") or UNKNOWN_ACTOR
    return {"dirs": found_dir, "files": files[:limit], "more": max(0, len(files) - limit),
            "changes": None if changes is None else changes[:PAGE_SIZE],
            "changes_more": changes is not None and len(changes) > PAGE_SIZE,
            "changes_total": int(total[0]["n"]) if total else None,
            "recorded": {str(r["file_path"]) for r in recorded or []},
            "store_status": store_status(sources, problems)}
