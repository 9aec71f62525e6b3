"""``skill_history`` rows: a lifecycle change, and what a rescan of the skills finds (BOOK-18, BOOK-19).

Every row has the skill's ``version`` (1, 2, … per skill), the SHA-256 of ``SKILL.md`` before and
after (``NULL`` on ``create`` / when gone), where the skill lives (``skill_path``, relative to the
skills directory: ``data/my-skill`` for a categorised one) and which of its files changed
(``changed_files``, a JSON list of paths relative to the skill: ``["SKILL.md"]``,
``["references/api.md"]``), so a change of a supporting file is a version too. ``files`` holds the SHA-256 of
every file of the version (JSON, by path relative to the skill), and the text of each is kept once per distinct
content beside the store (:mod:`hermes_pipeline.export.blobs`): a version can be shown and compared later.

- A lifecycle change (the host's ``on_skill_lifecycle``; for Hermes, the bridge reports each
  successful ``skill_manage`` call) carries the action, the reason given with it, the session. When the
  probe saw the call (:class:`~.skill_probe.SkillSeen`: Hermes' ``skill_manage`` names the file it writes), the
  version is the previous version (the skill's newest row, whatever process wrote it) with *that call's*
  files as the call left them: its ``changed_files`` are what the call wrote (``file_path``, ``SKILL.md``;
  every file for ``create`` / ``delete``), never another writer's files that changed meanwhile, so versions
  written by two processes or two sessions at once each hold their own change and the chain stays whole.
  A ``SKILL.md`` the call wrote below the skill (``sub/SKILL.md``) is named too, and the skill it makes
  (``sub``, when Hermes resolves that name to it) gets its own ``created`` row with the session.
- Before the agent's row, what changed since the newest row and before the call (the skill as the probe read
  it just before the call) is someone else's: a hand edit made while Hermes runs. It is a row of its own, as a
  rescan would write it (no session), unless another call (any process) is writing those files or a row newer
  than that look already covers them.
- A rescan (at process start and daily) compares every skill on disk, in any layout, with the
  scan state: a changed skill is a ``refine`` row ``external_edit``, a skill seen for the first
  time a ``create`` row ``discovered`` (never a silent baseline: the first scan of a profile
  records every skill it finds, unless the store already has that skill at that hash), a skill
  gone a ``deprecate`` row ``external_delete``, a skill back after a recorded deletion (Hermes'
  curator restore, a hand restore from a backup) a ``restore`` row ``external_restore`` at its new path;
  these rows have no session. A skill some call of any process is changing right now is left for the next
  rescan.
- A change of a skill whose rows the store lost (it could not write them, :class:`~.unrecorded.Unrecorded`) may
  be the agent's: its rescan row is ``unattributed`` (provenance ``unknown`` for a skill first seen) and its
  ``reason`` says why, instead of an edit blamed on the user.

Who wins when both see one change is :mod:`.attribution`.

Over 400 lines on purpose: the rules of one table (versions, the hashes chain, hand edits found before a
call or by a rescan, nested skills, restores and lost changes) read best side by side.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, Final

from ...engine.scrub import safe_scrub
from ...export.atomic import write_atomically
from ...export.blobs import blob_path, keep_file
from . import attribution
from ...export.task_runs import SkillChange
from ...host.profile_files import MAX_SMALL_FILE_BYTES, read_regular_bytes
from .skill_probe import WHOLE, SkillSeen
from .scan import ScanState
from .schema import sqlite_utc
from .skill_tree import Roots, SkillRoots, SkillTree, all_skills, changed_files, find_skill, public_name

TABLE: Final = "skill_history"
SCAN_ACTIONS: Final = ("external_edit", "discovered", "external_delete", "external_restore", "unattributed")
UNATTRIBUTED: Final = "unattributed"
MOVED: Final = "."
"""In the times kept with the newest row (:func:`_recorded`): the skill's place."""
"""The action of a rescan's row for a change the store may have lost the agent's row of (see the module docstring)."""
BUNDLED_MANIFEST: Final = ".bundled_manifest"
HUB_LOCK: Final = ".hub/lock.json"

Busy = Callable[[str, str], Collection[str]]
"""``(public skill name, own call id) → files`` other calls (any process) are writing without their rows in."""


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


def _keep_bytes(home: Path, data: bytes, sha: str) -> None:
    """Keep ``data`` (a file's bytes read when the change happened) as the text of content ``sha``."""
    target = blob_path(home, sha)
    if target is None or target.is_file():
        return
    try:
        text = safe_scrub(data.decode("utf-8"))
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_atomically(target, text.encode("utf-8"))
    except (OSError, ValueError):
        return


def _keep_texts(tree: SkillTree | None, home: Path | None, held: Mapping[str, bytes] | None = None) -> str | None:
    """``files`` of a row: the version's file hashes (JSON); their texts are kept under ``home``'s blobs, from the
    files on disk, else from ``held`` (bytes by SHA-256 read when the change happened: the file changed since)."""
    if tree is None or not tree.files:
        return None
    if home is not None:
        for rel, sha in tree.files.items():
            path = tree.disk_path(rel)
            kept = keep_file(home, path, sha) if path is not None else False
            if kept is False and held and sha in held:
                _keep_bytes(home, held[sha], sha)
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


def _chain(conn: sqlite3.Connection, state: ScanState,
           name: str) -> tuple[SkillTree | None, tuple[str | None, str | None, str | None] | None]:
    """The skill as its newest row left it (``None``: gone, or unknown) and that row (:func:`_last`; ``None``: the
    skill has no row). The row's ``files`` are the version (any process wrote it); the scan state is the fallback
    for rows of older versions."""
    row = conn.execute("SELECT after_hash, provenance, skill_path, files FROM skill_history WHERE skill_name = ? "
                       "ORDER BY version DESC LIMIT 1", (name,)).fetchone()
    if row is None:
        return _prior(conn, state, name, recorded=True), None
    last = (row[0], row[1], row[2])
    if row[0] is None:
        return None, last
    try:
        files = json.loads(row[3]) if row[3] else None
    except ValueError:
        files = None
    if isinstance(files, dict) and files.get("SKILL.md") == row[0]:
        return SkillTree(row[2] or name, row[0], {str(k): str(v) for k, v in files.items()}), last
    recorded = SkillTree.from_state(state.recorded.get(name))
    if recorded is not None and recorded.skill_md == row[0]:
        return recorded, last
    return SkillTree(row[2] or name, row[0], {}), last


def _remember(state: ScanState, name: str, tree: SkillTree | None) -> None:
    if tree is None:
        state.skills.pop(name, None)
    else:
        state.skills[name] = tree.to_state()


def _recorded(state: ScanState, name: str, tree: SkillTree | None, changed: Collection[str] = (),
              at: float | None = None) -> None:
    """The skill's newest row is now ``tree``; with ``at``: the files ``changed`` (and the skill's place, when it
    moved) took the values of ``tree`` as read at ``at`` (epoch seconds), kept beside it as ``at``."""
    if tree is None:
        state.recorded.pop(name, None)
        return
    old = state.recorded.get(name)
    known = old.get("at") if isinstance(old, dict) else None
    times = {str(k): float(v) for k, v in known.items() if isinstance(v, int | float)} \
        if isinstance(known, dict) and at is not None else {}
    if at is not None:
        for rel in changed:
            times[rel] = at
        if not isinstance(old, dict) or old.get("path") != tree.path:
            times[MOVED] = at
        horizon = at - attribution.WINDOW
        times = {k: v for k, v in times.items() if k in tree.files or k == MOVED or v >= horizon}
    raw = tree.to_state()
    if times:
        raw["at"] = times
    state.recorded[name] = raw


def _times(state: ScanState, name: str, chain: SkillTree) -> dict[str, float] | None:
    """When each file of the skill's newest row took its value (:func:`_recorded`), when the scan state knows it for
    exactly that row; ``None`` otherwise."""
    raw = state.recorded.get(name)
    if not isinstance(raw, dict) or not isinstance(raw.get("at"), dict):
        return None
    tree = SkillTree.from_state(raw)
    if tree is None or tree.skill_md != chain.skill_md or tree.files != chain.files:
        return None
    return {str(k): float(v) for k, v in raw["at"].items() if isinstance(v, int | float)}


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


def _noted(state: ScanState, name: str, trees: Collection[SkillTree | None], now: float) -> None:
    """The agent's row is in: what it made explains what a rescan finds (a deletion ends the older notes)."""
    key = _key(name)
    if any(tree is None for tree in trees):
        attribution.forget(state, key)
    for digest in dict.fromkeys(_digest(tree) for tree in trees):
        attribution.note_agent(state, key, digest, now)


def _after_call(chain: SkillTree | None, tree: SkillTree | None, paths: tuple[str, ...] | None,
                create: bool) -> SkillTree | None:
    """The version an agent's call makes: the newest version with the call's own files as the call left them
    (``tree``: the skill right after it); the whole tree when the call's files are not known or it made the
    skill."""
    if tree is None:
        return None
    if create or paths is None or WHOLE in paths or chain is None or not chain.files:
        return tree
    files = dict(chain.files)
    for rel in paths:
        if rel in tree.files:
            files[rel] = tree.files[rel]
        else:
            files.pop(rel, None)  # removed (or a file of a skill below this one: not this skill's)
    return SkillTree(tree.path, files.get("SKILL.md", tree.skill_md), files, tree.on_disk, tree.disk_names)


def record_change(conn: sqlite3.Connection, state: ScanState, change: SkillChange, root: Roots,
                  seen: SkillSeen | None = None, home: Path | None = None, *, busy: Busy | None = None,
                  unrecorded: Any = None) -> int:
    """The rows of one lifecycle change (see the module docstring): a row for what changed before the call when
    someone else changed it, the agent's version (or a rescan's row it takes over, :mod:`.attribution`), and the
    creation of a skill the call wrote below this one. ``seen``: what the probe saw (else the skill as it is now);
    the version's texts are kept under ``home``'s blobs when it is given. ``busy``: files other calls are writing
    (:data:`Busy`); ``unrecorded``: the store's lost changes (:class:`~.unrecorded.Unrecorded`). Returns the rows
    written."""
    name = change.skill_name
    if seen is None:
        seen = SkillSeen(find_skill(root, name))
    tree = seen.tree
    now = time.time()
    claimed = attribution.take_claim(state, TABLE, _key(name), _digest(tree), now)
    if claimed is not None and _drop(conn, int(claimed["id"])):
        # a rescan saw this change first: it is the tool's, the rescan's row goes, and the newest row is
        # again the one that rescan started from
        _recorded(state, name, SkillTree.from_state(claimed.get("prior")))
    rows = _before_call(conn, state, name, seen, home, busy, unrecorded, now) if seen.before_known else 0
    create = change.change_type == "create"
    chain, last = _chain(conn, state, name)  # each version starts where the skill's newest row ended
    after = _after_call(chain, tree, seen.paths, create)
    provenance = change.provenance or (last[1] if last else None)
    if create and provenance is None:
        provenance = "agent_created" if change.session_id else None
    if seen.paths is not None and WHOLE not in seen.paths:
        files = sorted(set(seen.paths))  # what the call wrote, even where the content is as it was
    else:
        files = changed_files(None if create else chain, after)
    before = None if create else (chain.skill_md if chain is not None else last[0] if last is not None else None)
    location = after.path if after is not None else (chain.path if chain is not None and chain.path else
                                                     last[2] if last is not None else None)
    _insert(conn, {"skill_name": name, "change_type": change.change_type, "reason": change.reason,
                   "trigger_session_id": change.session_id, "changed_at": change.changed_at,
                   "hermes_action": change.action, "provenance": provenance, "trajectory_id": change.trajectory_id,
                   "turn_id": change.turn_id, "before_hash": before,
                   "after_hash": after.skill_md if after is not None else None, "skill_path": location,
                   "changed_files": _files_json(files), "files": _keep_texts(after, home, seen.texts),
                   **_approval(change)})
    _recorded(state, name, after, changed_files(chain, after), seen.after_at or now)
    _noted(state, name, (after, tree), now)
    _remember_if_current(state, name, after, root)
    for nested, nested_tree in seen.nested.items():
        if nested != name:
            rows += _nested(conn, state, nested, nested_tree, change, root, home, seen.texts, now)
    return rows + 1


def _approval(change: SkillChange) -> dict[str, Any]:
    """``approved_by`` / ``pending_id`` of a change the user approved (a staged write, :mod:`.staged`)."""
    by, pending = getattr(change, "approved_by", None), getattr(change, "pending_id", None)
    return {"approved_by": safe_scrub(by), "pending_id": pending} if isinstance(by, str) else {}


def _nested(conn: sqlite3.Connection, state: ScanState, name: str, tree: SkillTree | None, change: SkillChange,
            root: Roots, home: Path | None, held: Mapping[str, bytes], now: float) -> int:
    """The row of a skill an agent's call wrote (or removed) the ``SKILL.md`` of below another skill: ``created`` when
    it has no live version yet, ``deprecate`` when the call removed it, else a version of it with the call's action."""
    chain, last = _chain(conn, state, name)
    if tree is None and chain is None:
        return 0  # removed, and it had no live version: nothing to say
    create = chain is None
    change_type = "create" if create else "deprecate" if tree is None else "refine"
    provenance = (last[1] if last is not None else None) or ("agent_created" if change.session_id else None)
    _insert(conn, {"skill_name": name, "change_type": change_type,
                   "hermes_action": "created" if create else change.action, "reason": change.reason,
                   "trigger_session_id": change.session_id, "changed_at": change.changed_at,
                   "provenance": "agent_created" if create and change.session_id else provenance,
                   "trajectory_id": change.trajectory_id, "turn_id": change.turn_id,
                   "before_hash": None if create else chain.skill_md if chain is not None else None,
                   "after_hash": tree.skill_md if tree is not None else None,
                   "skill_path": tree.path if tree is not None else chain.path if chain is not None else None,
                   "changed_files": _files_json(changed_files(chain, tree)), "files": _keep_texts(tree, home, held),
                   **_approval(change)})
    _recorded(state, name, tree, changed_files(chain, tree), now)
    _noted(state, name, (tree,), now)
    _remember_if_current(state, name, tree, root)
    return 1


def _touched(rows: list[Any]) -> tuple[set[str], bool]:
    """The files rows name in ``changed_files``, and whether one of them may have changed more (a row naming no
    file, or too many to list)."""
    out: set[str] = set()
    for raw in rows:
        try:
            listed = json.loads(raw) if raw else None
        except ValueError:
            listed = None
        if not isinstance(listed, list) or any(str(p).startswith("… and ") for p in listed):
            return out, True
        out.update(str(p) for p in listed)
    return out, False


def _before_call(conn: sqlite3.Connection, state: ScanState, name: str, seen: SkillSeen, home: Path | None,
                 busy: Busy | None, unrecorded: Any, now: float) -> int:
    """A row for what changed between the skill's newest row and the skill just before the agent's call, when
    nobody's recorded or pending write explains it (see the module docstring); the rows written (0 or 1)."""
    pre = seen.before
    key = _key(name)
    if attribution.explained(state, key, _digest(pre), now):
        return 0  # an agent's write (any process) left the skill so
    chain, last = _chain(conn, state, name)
    if chain is None and pre is None:
        return 0
    others = set(busy(name, seen.call_id)) if busy is not None else set()
    if WHOLE in others:
        return 0
    since = sqlite_utc(int((seen.before_at - 1) * 1_000_000))  # rows of the second before the look on: maybe later
    recent = [r[0] for r in conn.execute("SELECT changed_files FROM skill_history WHERE skill_name = ? "
                                         "AND changed_at >= ?", (name, since))]
    if chain is None or pre is None or not chain.files:
        if others or recent or (chain is not None and pre is not None and pre.skill_md == chain.skill_md):
            return 0
        new = pre
    else:
        times = _times(state, name, chain)
        if times is not None:  # when each file took its value: later than the look, it may be what it missed
            touched, everything = {p for p, t in times.items() if t >= seen.before_at}, False
        else:
            touched, everything = _touched(recent)
        if everything:
            return 0
        paths = [p for p in changed_files(chain, pre) if p not in others and p not in touched]
        moved = bool(chain.path) and pre.path != chain.path and not others and \
            (MOVED not in touched if times is not None else not recent)
        if not paths and not moved:
            return 0
        files = dict(chain.files)
        for rel in paths:
            if rel in pre.files:
                files[rel] = pre.files[rel]
            else:
                files.pop(rel, None)
        new = SkillTree(pre.path if moved else chain.path, files.get("SKILL.md", chain.skill_md), files,
                        pre.on_disk, pre.disk_names)
    stamp = sqlite_utc(int(seen.before_at * 1_000_000))
    return _out_of_band(conn, state, name, chain, new, last, stamp, now, home, unrecorded, held=seen.texts,
                        seen_at=seen.before_at)


def _out_of_band(conn: sqlite3.Connection, state: ScanState, name: str, prior: SkillTree | None,
                 tree: SkillTree | None, last: tuple[str | None, str | None, str | None] | None, stamp: str,
                 now: float, home: Path | None, unrecorded: Any, *, bundled: Callable[[], set[str]] | None = None,
                 held: Mapping[str, bytes] | None = None, seen_at: float | None = None) -> int:
    """A row, with no session, for a change nobody's row explains: from ``prior`` (the skill as its rows have it)
    to ``tree`` (``None``: gone); a claim an agent row with this content takes over (:mod:`.attribution`)."""
    key = _key(name)
    inherited = (last[1] if last else None) or "unknown"
    if tree is None:
        values: dict[str, Any] = {"change_type": "deprecate", "hermes_action": "external_delete",
                                  "before_hash": prior.skill_md if prior is not None else None,
                                  "skill_path": prior.path if prior is not None and prior.path else None,
                                  "provenance": inherited}
        attribution.forget(state, key)  # what agents wrote before explains no reappearance
    elif prior is None and last is not None and last[0] is None:
        values = {"change_type": "restore", "hermes_action": "external_restore", "before_hash": None,
                  "skill_path": tree.path, "provenance": inherited}
    elif prior is None:
        values = {"change_type": "create", "hermes_action": "discovered", "before_hash": None,
                  "skill_path": tree.path,
                  "provenance": "installed" if bundled is not None and name in bundled() else "unknown"}
    else:
        values = {"change_type": "refine", "hermes_action": "external_edit", "before_hash": prior.skill_md,
                  "skill_path": tree.path, "provenance": inherited}
    why = unrecorded.why(key) if unrecorded is not None else None
    if why is not None and values["provenance"] != "installed":
        values["hermes_action"] = UNATTRIBUTED
    row_id = _insert(conn, {"skill_name": name, **values, "reason": why if values["hermes_action"] == UNATTRIBUTED
                            else None, "trigger_session_id": None,
                            "after_hash": tree.skill_md if tree is not None else None, "changed_at": stamp,
                            "changed_files": _files_json(changed_files(prior, tree)),
                            "files": _keep_texts(tree, home, held)})
    attribution.add_claim(state, TABLE, row_id, key, _digest(tree), now, _state_of(state, name, prior))
    _recorded(state, name, tree, changed_files(prior, tree), seen_at if seen_at is not None else now)
    return 1


def _bundled(root: Path) -> set[str]:
    """Skills Hermes put there itself: its bundled skills (``.bundled_manifest``, ``name:hash`` lines) and
    the ones installed from its hub (``.hub/lock.json``, ``installed``): their provenance is ``installed``."""
    names: set[str] = set()
    try:
        text = read_regular_bytes(root / BUNDLED_MANIFEST, MAX_SMALL_FILE_BYTES).decode("utf-8")
        names.update(line.partition(":")[0].strip() for line in text.splitlines() if line.strip())
    except (OSError, ValueError):  # gone, a FIFO, too large, not UTF-8: never read with a blocking read
        pass
    try:
        lock = json.loads(read_regular_bytes(root / HUB_LOCK, MAX_SMALL_FILE_BYTES))
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


def scan(conn: sqlite3.Connection, state: ScanState, root: Roots, home: Path | None = None, *,
         busy: Collection[str] = (), unrecorded: Any = None) -> int:
    """Rows for every skill change no lifecycle change explains (see the module docstring); the texts of each new
    version are kept under ``home``'s blobs when it is given. ``busy``: skills some call (any process) is changing
    right now, left for the next scan; ``unrecorded``: the store's lost changes (:class:`~.unrecorded.Unrecorded`)."""
    current = all_skills(root)
    for table in ("skills", "recorded"):  # a state written before skills were known by their public names
        names = getattr(state, table)
        if any(public_name(name) != name for name in names):
            setattr(state, table, {public_name(name): raw for name, raw in names.items()})
    now = time.time()
    stamp = sqlite_utc()
    rows = 0
    found: set[str] | None = None

    def bundled() -> set[str]:
        nonlocal found
        if found is None:
            found = _bundled(root.local if isinstance(root, SkillRoots) else root)
        return found

    for name, tree in current.items():
        if name in busy:
            continue
        last = _last(conn, name)
        if last is not None and last[0] is None:
            prior = None  # back after a recorded deletion: no older note or state explains that
        else:
            seen = _prior(conn, state, name)
            if seen is not None and _same(seen, tree):
                continue
            prior = _prior(conn, state, name, recorded=True)  # the row continues the skill's newest row
            if prior is not None and _same(prior, tree):
                continue  # the newest row (of any process) already says this is how it is
            if attribution.explained(state, _key(name), tree.digest(), now):
                continue  # an agent write (this or another process) made exactly this
        rows += _out_of_band(conn, state, name, prior, tree, last, stamp, now, home, unrecorded, bundled=bundled)
    for name, raw in list(state.skills.items()):
        if name in current or name in busy:
            continue
        prior = SkillTree.from_state(raw)
        if prior is None or attribution.explained(state, _key(name), None, now):
            continue
        last = _last(conn, name)
        if last is not None and last[0] is None:
            continue  # its last row already says it is gone
        rows += _out_of_band(conn, state, name, prior, None, last, stamp, now, home, unrecorded)
    kept = {name: raw for name, raw in state.skills.items() if name in busy}
    state.skills = {name: tree.to_state() for name, tree in current.items() if name not in busy} | kept
    return rows
