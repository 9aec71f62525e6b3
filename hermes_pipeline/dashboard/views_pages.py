"""One skill's page and one memory file's page: versions with their runs and trend, and a file's changes
with their before/after diff."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, quote

from .charts import bar_chart
from .html import cost, e, link, num, page, qlink, table
from .params import BadParameter, ListQuery
from .views import _store_note, _writes_note

__all__ = ["memory_file_view", "skill_view", "versions_param"]


def versions_param(raw: str) -> tuple[int | None, int | None]:
    """The versions ``?a=&b=`` a skill page compares (checked strictly; ``None``: the default).

    Raises:
        BadParameter: another name, a repeated name, or not a whole number.
    """
    try:
        pairs = parse_qsl(raw, keep_blank_values=True, strict_parsing=bool(raw), max_num_fields=4)
    except ValueError as exc:
        raise BadParameter("(query string)", "malformed") from exc
    out: dict[str, int | None] = {}
    for name, value in pairs:
        if name not in ("a", "b"):
            raise BadParameter(name[:40] or "(empty name)", "unknown here; this page accepts a and b (two version numbers)")
        if name in out:
            raise BadParameter(name, "given more than once")
        if value and not (value.isdigit() and len(value) <= 6):
            raise BadParameter(name, "expected a version number")
        out[name] = int(value) if value else None
    return out.get("a"), out.get("b")


def _rate(stats: dict[str, Any]) -> str:
    return "n/a" if stats.get("rate") is None else f"{100 * stats['rate']:.0f}% of {num(stats['runs'])}"


def _run_cell(run: dict[str, Any]) -> str:
    tid = run.get("trajectory_id")
    label = f'{str(tid)[:8]} <span class="st {e(run.get("outcome"))}">{e(run.get("outcome"))}</span>' \
        if tid else f'<span class="st {e(run.get("outcome"))}">{e(run.get("outcome"))}</span>'
    if tid and run.get("has_file"):
        return f'<a href="/trajectories/{e(tid)}">{e(str(tid)[:8])}</a> <span class="st {e(run.get("outcome"))}">' \
               f'{e(run.get("outcome"))}</span>'
    return label if not tid else f'<code>{e(str(tid)[:8])}</code> <span class="st {e(run.get("outcome"))}">' \
                                 f'{e(run.get("outcome"))}</span>'


def _text_diff_html(files: list[dict[str, Any]], a: Any, b: Any) -> str:
    """The text diff of two versions, file by file (removed lines ``-``, added ``+``, kept `` ``)."""
    if not files:
        return f'<p class="empty">the files of v{e(a)} and v{e(b)} have the same text</p>'
    parts = [f"<h3>Text diff v{e(a)} → v{e(b)}</h3>"]
    for f in files:
        lines = "".join(f'<div class="d{"a" if k == "+" else "r" if k == "-" else "k"}">{e(k)} {e(line)}</div>'
                        for k, line in f["lines"])
        cut = f'<p class="src">… {num(f["cut"])} more lines</p>' if f.get("cut") else ""
        parts.append(f'<h4>{e(f["file"])} ({e(f["status"])})</h4><div class="diff-lines skill-diff">{lines}</div>{cut}')
    return "".join(parts)


def skill_view(data: dict[str, Any], home: str = "") -> str:
    """``/skills/<name>``: versions, the trend per version, the comparison of two, the runs of each."""
    name = data["name"]
    status = data.get("store_status")
    parts = [_writes_note(status)]
    note = _store_note(status, "versions and runs are unknown")
    if note:
        parts.append(note)
    versions = data.get("versions") or []
    rows = [[f'<a id="v{e(v["version"])}"></a>v{e(v["version"])}', e(v.get("changed_at")), e(v.get("change_type")),
             e(v.get("actor")), e(v.get("reason") or "—"),
             link(f"/sessions/{v['trigger_session_id']}", v["trigger_session_id"]) if v.get("trigger_session_id")
             else "", e(", ".join(v.get("files") or [])), _rate(v["stats"]), cost(v["stats"].get("mean_cost"))]
            for v in reversed(versions)]
    parts.append("<h2>Versions (newest first)</h2>" + table(
        ["version", "date (UTC)", "change", "actor", "reason", "session", "files changed", "success",
         "mean cost per run"], rows, cls="versions", empty="no version recorded in the store"))
    if versions:
        labels = [f"v{v['version']}" for v in versions]
        parts.append('<section class="charts"><h2>Trend per version</h2>' + bar_chart(
            "Success rate per version", labels,
            [("success %", [None if v["stats"].get("rate") is None else 100 * v["stats"]["rate"] for v in versions])],
            unit="%", maximum=100.0) + bar_chart(
            "Mean cost per run, per version", labels, [("cost", [v["stats"].get("mean_cost") for v in versions])],
            unit=" USD") + "</section>")
    compare = data.get("compare")
    if compare:
        a, b = compare["a"], compare["b"]
        facts = [("date", e(a.get("changed_at")), e(b.get("changed_at"))),
                 ("change", e(a.get("change_type")), e(b.get("change_type"))),
                 ("actor", e(a.get("actor")), e(b.get("actor"))), ("reason", e(a.get("reason")), e(b.get("reason"))),
                 ("files changed", e(", ".join(a["files"])), e(", ".join(b["files"]))),
                 ("SKILL.md hash after", f"<code>{e((a.get('after_hash') or '')[:12])}</code>",
                  f"<code>{e((b.get('after_hash') or '')[:12])}</code>"),
                 ("success", _rate(a["stats"]), _rate(b["stats"])),
                 ("mean cost per run", cost(a["stats"].get("mean_cost")), cost(b["stats"].get("mean_cost")))]
        verdict = ""
        ra, rb = a["stats"].get("rate"), b["stats"].get("rate")
        if ra is not None and rb is not None:
            verdict = "better" if rb > ra else "worse" if rb < ra else "unchanged"
            verdict = f'<p class="verdict">success rate {e(verdict)} after v{e(b["version"])} ' \
                      f'({100 * ra:.0f}% → {100 * rb:.0f}%)</p>'
        base = "/skills/" + quote(name, safe="")
        others = " ".join(qlink(f"{base}?a={p['version']}&b={v['version']}", f"v{p['version']}→v{v['version']}")
                          for p, v in zip(versions, versions[1:]))
        texts = compare.get("text_diff")
        source = "the text diff is of the files kept for each version" if texts is not None else \
            "this store keeps each version's hashes, reason and changed files, not its text"
        parts.append(f"<h2>v{e(a['version'])} compared with v{e(b['version'])}</h2>" + verdict + table(
            ["", f"v{a['version']}", f"v{b['version']}"], [[e(k), x, y] for k, x, y in facts], cls="compare") +
            (_text_diff_html(texts, a["version"], b["version"]) if texts is not None else "") +
            f'<p class="src">{e(source)}; compare other versions: {others}</p>')
    parts.append("<h2>Runs of each version (latest first)</h2>")
    for v in reversed(versions):
        latest = v["stats"].get("latest") or []
        parts.append(f"<h3>v{e(v['version'])}: {_rate(v['stats'])}</h3>" + (
            '<p class="runs">' + " · ".join(_run_cell(r) for r in latest) + "</p>" if latest
            else '<p class="empty">no run of this version</p>'))
    early = data.get("before_history")
    if early:
        parts.append(f"<h3>before the first recorded version: {_rate(early)}</h3>" + '<p class="runs">' +
                     " · ".join(_run_cell(r) for r in early.get("latest") or []) + "</p>")
    parts.append(f'<p>{qlink(ListQuery(skill=name).url("/runs"), "every run that loaded this skill")}</p>')
    return page(f"Skill {name}", "".join(parts), active="/skills", home=home)


def memory_file_view(data: dict[str, Any], query: ListQuery, home: str = "") -> str:
    """``/memory/<file>``: the file's changes, newest first, each with its before/after diff."""
    status = data.get("store_status")
    parts = [_writes_note(status)]
    note = _store_note(status, "memory changes are unknown")
    if note:
        parts.append(note)
    path = "/memory/" + quote(data["path"], safe="/")
    for c in data["rows"]:
        run = c.get("trajectory_id")
        run_cell = (f'<a href="/trajectories/{e(run)}">{e(str(run)[:8])}</a>' if c.get("has_file") else
                    f"<code>{e(str(run)[:8])}</code>") if run else "—"
        session = link(f"/sessions/{c['trigger_session_id']}", c["trigger_session_id"]) \
            if c.get("trigger_session_id") else "—"
        lines = "".join(f'<div class="d{"a" if k == "+" else "r" if k == "-" else "k"}">{e(k)} {e(line)}</div>'
                        for k, line in c["diff"]) or '<p class="empty">no excerpt recorded</p>'
        parts.append(f'<article class="change"><dl><dt>time (UTC)</dt><dd>{e(c.get("changed_at"))}</dd>'
                     f'<dt>change</dt><dd>{e(c.get("change_type"))}</dd><dt>actor</dt><dd>{e(c.get("actor"))}</dd>'
                     f'<dt>reason</dt><dd>{e(c.get("reason") or "—")}</dd><dt>session</dt><dd>{session}</dd>'
                     f'<dt>run</dt><dd>{run_cell}</dd></dl><div class="diff-lines">{lines}</div></article>')
    if not data["rows"]:
        parts.append('<p class="empty">no change on this page</p>')
    nav = [f"changes {num(query.offset + 1)}–{num(query.offset + len(data['rows']))} of {num(data.get('total'))}"]
    if query.page > 1:
        nav.append(qlink(query.url(path, page=query.page - 1), "← newer"))
    if data.get("more"):
        nav.append(qlink(query.url(path, page=query.page + 1), "older →"))
    parts.insert(1, f'<p class="pager">{" · ".join(nav)}</p>')
    return page(f"Memory file {data['path']}", "".join(parts), active="/memory", home=home)
