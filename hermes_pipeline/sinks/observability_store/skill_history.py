"""``skill_history`` rows: a lifecycle change, and what a rescan of the skills finds (BOOK-18, BOOK-19).

Every row has the skill's ``version`` (1, 2, … per skill), the SHA-256 of ``SKILL.md`` before and
after (``NULL`` on ``create`` / when gone), where the skill lives (``skill_path``, relative to the
skills directory: ``data/my-skill`` for a categorised one) and which of its files changed
(``changed_files``, a JSON list of paths relative to the skill: ``["SKILL.md"]``,
``["references/api.md"]``), so a change of a supporting file is a version too. ``files`` holds the SHA-256 of
every file of the version (JSON, by path relative to the skill), and the text of each is kept once per distinct
content beside the store (:mod:`hermes_pipeline.export.blobs`): a version can be shown and compared later.

- A lifecycle change (the host's ``on_skill_lifecycle``; for Hermes, the bridge reports each
  successful ``skill_manage`` call) carries the action, the reason given with it, the session.
- A rescan (at process start and daily) compares every skill on disk, in any layout, with the
  scan state: a changed skill is a ``refine`` row ``external_edit``, a skill seen for the first
  time a ``create`` row ``discovered`` (never a silent baseline: the first scan of a profile
  records every skill it finds, unless the store already has that skill at that hash), a skill
  gone a ``deprecate`` row ``external_delete``; these rows have no session.

Who wins when both see one change is :mod:`.attribution`.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any, Final

from ...engine.scrub import safe_scrub
from ...export.blobs import keep_file
from . import attribution
from ...export.task_runs import SkillChange
from .scan import ScanState
from .schema import sqlite_utc
from .skill_tree import Roots, SkillRoots, SkillTree, all_skills, changed_files, find_skill, public_name

TABLE: Final = "skill_history"
SCAN_ACTIONS: Final = ("external_edit", "discovered", "external_delete")
BUNDLED_MANIFEST: Final = ".bundled_manifest"
HUB_LOCK: Final = ".hub/lock.json"


def _key(name: str) -> str:
    return f"skill:{name}"


def _digest(tree: SkillTree | None) -> str | None:
    return tree.digest() if tree is not None else None


MAX_LISTED: Final = 100
"""At most this many changed files are named in a row; a last item ``"… and N more"`` counts the rest."""


def _files_json(files: list[str]) -> str | None:
    if len(files) > MAX_LISTED:
        files = files[:MAX_LISTED] + [f"… and {len(files) - MAX_LISTED} more"]
    return json.dumps(files, ensure_ascii=False) if files else None


def _keep_texts(tree: SkillTree | None, home: Path | None) -> str | None:
    """``files`` of a row: the version's file hashes (JSON); their texts are kept under ``home``'s blobs."""
    if tree is None or not tree.files:
        return None
    if home is not None:
        for rel, sha in tree.files.items():
            path = tree.disk_path(rel)
            if path is not None:
                keep_file(home, path, sha)
    return json.dumps(tree.files, ensure_ascii=False, sort_keys=True)


def _insert(conn: sqlite3.Connection, values: dict[str, Any]) -> int:
    # names and paths come from directory names on disk: scrubbed where they enter the store
    for field in ("skill_name", "skill_path"):
        if isinstance(values.get(field), str):
            values[field] = safe_scrub(values[field])
    version = conn.execute("SELECT COALESCE(MAX(version), 0) + 1 FROM skill_history WHERE skill_name = ?",
                           (values["skill_name"],)).fetchone()[0]
    values["version"] = version
    cursor = conn.execute(f"INSERT INTO skill_history ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
                          tuple(values.values()))
    return int(cursor.lastrowid or 0)


def _drop(conn: sqlite3.Connection, row_id: int) -> bool:
    """Delete a rescan's row that an agent change explains; the skill's later versions move down one, so
    versions stay 1, 2, … in the order the changes were recorded (one row at a time: UNIQUE holds).
    ``True`` when it was the skill's newest row."""
    row = conn.execute("SELECT skill_name, version, before_hash FROM skill_history WHERE id = ? "
                       "AND trigger_session_id IS NULL", (row_id,)).fetchone()
    if row is None:
        return False
    conn.execute("DELETE FROM skill_history WHERE id = ?", (row_id,))
    later = conn.execute("SELECT id FROM skill_history WHERE skill_name = ? AND version > ? ORDER BY version",
                         (row[0], row[1])).fetchall()
    for (later_id,) in later:
        conn.execute("UPDATE skill_history SET version = version - 1 WHERE id = ?", (later_id,))
    if later:  # the next version now follows the one before the dropped row
        conn.execute("UPDATE skill_history SET before_hash = ? WHERE id = ?", (row[2], later[0][0]))
    return not later


def _last(conn: sqlite3.Connection, name: str) -> tuple[str | None, str | None, str | None] | None:
    """``(after_hash, provenance, skill_path)`` of the skill's newest row."""
    row = conn.execute("SELECT after_hash, provenance, skill_path FROM skill_history WHERE skill_name = ? "
                       "ORDER BY version DESC LIMIT 1", (name,)).fetchone()
    return (row[0], row[1], row[2]) if row else None


def _prior(conn: sqlite3.Connection, state: ScanState, name: str, *, recorded: bool = False) -> SkillTree | None:
    tree = SkillTree.from_state(state.recorded.get(name)) if recorded else None
    tree = tree or SkillTree.from_state(state.skills.get(name))
    if tree is not None:
        return tree
    last = _last(conn, name)  # the state was lost: the store still knows the last SKILL.md hash
    if last is not None and last[0] is not None:
        return SkillTree(last[2] or name, last[0], {})
    return None


def _remember(state: ScanState, name: str, tree: SkillTree | None) -> None:
    if tree is None:
        state.skills.pop(name, None)
    else:
        state.skills[name] = tree.to_state()


def _recorded(state: ScanState, name: str, tree: SkillTree | None) -> None:
    if tree is None:
        state.recorded.pop(name, None)
    else:
        state.recorded[name] = tree.to_state()


def _state_of(state: ScanState, name: str, seen: SkillTree | None) -> Any:
    """Where a rescan's row starts from: the skill's newest row, else what the rescan compared with."""
    recorded = state.recorded.get(name)
    return recorded if recorded is not None else (seen.to_state() if seen is not None else None)


def _remember_if_current(state: ScanState, name: str, tree: SkillTree | None, root: Roots) -> None:
    """The change is explained: the next scan starts from it, unless the skill changed again since (another
    process, the user): then the state must not go back in time, and that later change is the scan's."""
    now = find_skill(root, name)
    if now == tree:
        _remember(state, name, tree)


def record_change(conn: sqlite3.Connection, state: ScanState, change: SkillChange, root: Roots, probe: Any,
                  home: Path | None = None) -> int:
    """The row of one lifecycle change (or a rescan's row it takes over, :mod:`.attribution`); the version's
    texts are kept under ``home``'s blobs when it is given."""
    name = change.skill_name
    known, tree = probe.take(name) if probe is not None else (False, None)
    if not known:
        tree = find_skill(root, name)
    now = time.time()
    digest = _digest(tree)
    attribution.note_agent(state, _key(name), digest, now)
    claimed = attribution.take_claim(state, TABLE, _key(name), digest, now)
    if claimed is not None and _drop(conn, int(claimed["id"])):
        # a rescan saw this change first: it is the tool's, the rescan's row goes, and the newest row is
        # again the one that rescan started from
        _recorded(state, name, SkillTree.from_state(claimed.get("prior")))
    prior = None if change.change_type == "create" else _prior(conn, state, name, recorded=True)
    last = _last(conn, name)
    provenance = change.provenance or (last[1] if last else None)
    if change.change_type == "create" and provenance is None:
        provenance = "agent_created" if change.session_id else None
    values: dict[str, Any] = {"change_type": change.change_type, "reason": change.reason,
                              "trigger_session_id": change.session_id, "changed_at": change.changed_at,
                              "hermes_action": change.action, "provenance": provenance,
                              "trajectory_id": change.trajectory_id, "turn_id": change.turn_id}
    # each version starts where the skill's newest row ended (whatever process wrote it)
    before = None if change.change_type == "create" else \
        (last[0] if last is not None else prior.skill_md if prior is not None else None)
    location = tree.path if tree is not None else (prior.path if prior is not None and prior.path else None)
    _insert(conn, {"skill_name": name, **values, "before_hash": before,
                   "after_hash": tree.skill_md if tree is not None else None,
                   "skill_path": location, "changed_files": _files_json(changed_files(prior, tree)),
                   "files": _keep_texts(tree, home)})
    _recorded(state, name, tree)
    _remember_if_current(state, name, tree, root)
    return 1


def _bundled(root: Path) -> set[str]:
    """Skills Hermes put there itself: its bundled skills (``.bundled_manifest``, ``name:hash`` lines) and
    the ones installed from its hub (``.hub/lock.json``, ``installed``): their provenance is ``installed``."""
    names: set[str] = set()
    try:
        text = (root / BUNDLED_MANIFEST).read_text(encoding="utf-8")
        names.update(line.partition(":")[0].strip() for line in text.splitlines() if line.strip())
    except OSError:
        pass
    try:
        lock = json.loads((root / HUB_LOCK).read_text(encoding="utf-8"))
        installed = lock.get("installed") if isinstance(lock, dict) else None
        if isinstance(installed, dict):
            names.update(str(n) for n in installed)
    except (OSError, ValueError):
        pass
    return names


def _same(prior: SkillTree, tree: SkillTree) -> bool:
    if prior.path and prior.path != tree.path:
        return False  # moved (to another category, say): a change even when no file changed
    if prior.files:
        return prior.files == tree.files
    return prior.skill_md == tree.skill_md  # an older state (or the store) knew only SKILL.md


def scan(conn: sqlite3.Connection, state: ScanState, root: Roots, home: Path | None = None) -> int:
    """Rows for every skill change no lifecycle change explains (see the module docstring); the texts of each new
    version are kept under ``home``'s blobs when it is given."""
    current = all_skills(root)
    for table in ("skills", "recorded"):  # a state written before skills were known by their public names
        names = getattr(state, table)
        if any(public_name(name) != name for name in names):
            setattr(state, table, {public_name(name): raw for name, raw in names.items()})
    now = time.time()
    stamp = sqlite_utc()
    rows = 0
    bundled: set[str] | None = None
    for name, tree in current.items():
        seen = _prior(conn, state, name)
        if seen is not None and _same(seen, tree):
            continue
        prior = _prior(conn, state, name, recorded=True)  # the row continues the skill's newest row
        if prior is not None and _same(prior, tree):
            continue  # the newest row (of any process) already says this is how it is
        if attribution.explained(state, _key(name), tree.digest(), now):
            continue  # an agent write (this or another process) made exactly this
        last = _last(conn, name)
        if prior is None:
            if bundled is None:
                bundled = _bundled(root.local if isinstance(root, SkillRoots) else root)
            values = {"change_type": "create", "hermes_action": "discovered", "before_hash": None,
                      "provenance": "installed" if name in bundled else "unknown"}
        else:
            values = {"change_type": "refine", "hermes_action": "external_edit", "before_hash": prior.skill_md,
                      "provenance": (last[1] if last else None) or "unknown"}
        row_id = _insert(conn, {"skill_name": name, **values, "reason": None, "trigger_session_id": None,
                                "after_hash": tree.skill_md, "changed_at": stamp, "skill_path": tree.path,
                                "changed_files": _files_json(changed_files(prior, tree)),
                                "files": _keep_texts(tree, home)})
        attribution.add_claim(state, TABLE, row_id, _key(name), tree.digest(), now,
                              _state_of(state, name, prior))
        _recorded(state, name, tree)
        rows += 1
    for name, raw in list(state.skills.items()):
        if name in current:
            continue
        prior = SkillTree.from_state(raw)
        if prior is None or attribution.explained(state, _key(name), None, now):
            continue
        last = _last(conn, name)
        if last is not None and last[0] is None:
            continue  # its last row already says it is gone
        row_id = _insert(conn, {"skill_name": name, "change_type": "deprecate", "hermes_action": "external_delete",
                                "reason": None, "trigger_session_id": None, "before_hash": prior.skill_md,
                                "after_hash": None, "changed_at": stamp, "skill_path": prior.path or None,
                                "provenance": (last[1] if last else None) or "unknown",
                                "changed_files": _files_json(changed_files(prior, None))})
        attribution.add_claim(state, TABLE, row_id, _key(name), None, now, _state_of(state, name, prior))
        _recorded(state, name, None)
        rows += 1
    state.skills = {name: tree.to_state() for name, tree in current.items()}
    return rows
