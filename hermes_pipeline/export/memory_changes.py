"""What a memory tool call changed: its arguments parsed into operations, replayed on the file's entries.

Hermes' ``memory`` tool has two shapes (its schema): a single operation (``action`` ``add`` /
``replace`` / ``remove`` with ``content`` and ``old_text``) and a batch (``operations``, a list of
``{action, content?, old_text?}`` applied atomically, the shape its own description recommends);
both name a ``target``, ``memory`` (``MEMORY.md``) or ``user`` (``USER.md``), ``null`` meaning
``memory``. When ``operations`` is a non-empty list it wins, as in Hermes. Providers send the
arguments as a JSON object or as a JSON string, and some send ``operations`` itself as a string:
:func:`parse_operations` takes every one of these and never raises.

Hermes keeps a memory file as entries joined by ``"\\n§\\n"``; ``replace`` and ``remove`` act on the
first entry *containing* ``old_text`` (a short search text). It reads the file as text with universal
newlines (``Path.read_text``), so a file saved with CRLF (or lone CR) line endings has the same entries as
the same file with LF: :func:`memory_text` decodes a memory file's bytes the way Hermes does, and every
reading of a memory file's entries goes through it (:func:`entries` translates the line endings of a text
that did not). :func:`replay` applies the operations to the file's entries as they were before the
call, as Hermes does, so a row quotes the real old entry and the real new one, not the search text. An
``add`` of an entry already there, or a ``replace`` by the entry's own text (Hermes writes the same entries
back), changes nothing and gives no row. When the old text of the file is unknown, the search text is the
best quote there is.

A change made to the file by other means (a hand edit a rescan finds) is compared entry by entry
the same way, :func:`entry_diff`: one change per entry added, removed or changed in place.

Other memory tools (``observability.memory_tools``) are one write each: their file is in ``path``
(else ``MEMORY.md``), their action from ``action`` or their name.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

ENTRY_DELIMITER: Final = "\n§\n"
ACTIONS: Final = {"add": "add", "replace": "modify", "remove": "delete"}
"""Hermes' ``memory`` actions → ``memory_changes.change_type`` (BOOK-22)."""
TARGETS: Final = {"memory": "MEMORY.md", "user": "USER.md"}


@dataclass(frozen=True, slots=True)
class MemoryOp:
    """One operation of a memory tool call."""

    change_type: str
    """``add``, ``modify`` or ``delete``."""
    content: str | None
    """The new entry (add / replace)."""
    old_text: str | None
    """The search text naming the entry (replace / remove)."""
    file_name: str | None
    """The file in the first memory directory (``MEMORY.md``), or ``None`` with ``path_arg``."""
    path_arg: str | None
    reason: str | None


@dataclass(frozen=True, slots=True)
class Change:
    """What one operation did to the file: the old and the new entry (``None`` for an empty side)."""

    op: MemoryOp
    before: str | None
    after: str | None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def json_mapping(value: Any) -> Mapping[str, Any] | None:
    """``value`` as a mapping: itself, or the JSON object a string holds (a tool's arguments or result as a host
    passes them, text or already decoded); ``None`` for anything else."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, Mapping) else None


def _list(value: Any) -> list[Any] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return list(value) if isinstance(value, list | tuple) else None


def parse_operations(tool: str, raw_args: Any) -> list[MemoryOp]:
    """The operations of one successful memory tool call (see the module docstring); ``[]`` when its
    arguments name none (an unknown action, a bad target, arguments that are not an object)."""
    args = json_mapping(raw_args)
    if args is None:
        return []
    reason = _str(args.get("reason"))
    if tool == "memory":
        target = args.get("target")
        file_name = "MEMORY.md" if target is None else TARGETS.get(target) if isinstance(target, str) else None
        if file_name is None:
            return []
        operations = _list(args.get("operations"))
        items: list[Any] = operations if operations else [args]
        out = []
        for item in items:
            op = json_mapping(item)
            action = op.get("action") if op is not None else None
            change = ACTIONS.get(action) if isinstance(action, str) else None
            if op is None or change is None:
                continue
            out.append(MemoryOp(change, _str(op.get("content")) if change != "delete" else None,
                                _str(op.get("old_text")) if change != "add" else None, file_name, None,
                                _str(op.get("reason")) or reason))
        return out
    action = args.get("action")
    lowered = tool.lower()
    if isinstance(action, str) and action in ACTIONS:
        change = ACTIONS[action]
    elif any(word in lowered for word in ("delete", "remove", "forget")):
        change = "delete"
    elif _str(args.get("old_text")) is not None:
        change = "modify"
    else:
        change = "add"
    path = _str(args.get("path")) or _str(args.get("file_path")) or _str(args.get("file"))
    after = next((v for v in (args.get(k) for k in ("content", "text", "new_text", "value")) if isinstance(v, str)),
                 None) if change != "delete" else None
    return [MemoryOp(change, after, _str(args.get("old_text")) if change != "add" else None,
                     None if path else "MEMORY.md", path, reason)]


def hermes_newlines(text: str) -> str:
    """``text`` with its line endings as Hermes reads them (universal newlines: ``\\r\\n`` and a lone ``\\r`` are
    ``\\n``); idempotent."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def memory_text(data: bytes, errors: str = "replace") -> str:
    """The text of a memory file's bytes as Hermes reads it: UTF-8 with universal newlines
    (:func:`hermes_newlines`). Bytes that are not UTF-8 are replaced by U+FFFD (Hermes cannot read such a
    file at all; its text is still the best quote there is); ``errors="surrogateescape"`` keeps them instead (a
    text that encodes back to the bytes, with LF endings)."""
    return hermes_newlines(data.decode("utf-8", errors=errors))


def entries(text: str) -> list[str]:
    """Hermes' entries of a memory file's text (stripped, empty and repeated ones dropped, as Hermes reloads);
    the text's line endings are taken as Hermes reads them (:func:`hermes_newlines`)."""
    return list(dict.fromkeys(e.strip() for e in hermes_newlines(text).split(ENTRY_DELIMITER) if e.strip()))


def replay(before_text: str | None, ops: list[MemoryOp], *, entry_file: bool = True) -> list[Change]:
    """What each of ``ops`` changed, replayed on the entries of ``before_text`` (see the module docstring).

    ``entry_file`` is false for files of other memory tools: their operations are quoted as given.
    """
    if before_text is None or not entry_file:
        return [Change(op, op.old_text if op.change_type != "add" else None,
                       op.content if op.change_type != "delete" else None) for op in ops]
    working = entries(before_text)
    out: list[Change] = []
    for op in ops:
        if op.change_type == "add":
            content = (op.content or "").strip()
            if not content or content in working:
                continue  # Hermes skips an entry that is already there: nothing changed
            working.append(content)
            out.append(Change(op, None, content))
            continue
        needle = (op.old_text or "").strip()
        index = next((i for i, e in enumerate(working) if needle and needle in e), None)
        if index is None:  # the file changed under the call: quote what the call said
            out.append(Change(op, op.old_text, op.content if op.change_type == "modify" else None))
            continue
        old = working[index]
        if op.change_type == "modify":
            working[index] = (op.content or "").strip()
            if working[index] != old:  # replaced by its own text: the file's entries are as they were
                out.append(Change(op, old, working[index]))
        else:
            working.pop(index)
            out.append(Change(op, old, None))
    return out


@dataclass(frozen=True, slots=True)
class EntryChange:
    """One entry a change of a memory file added, removed or changed in place (``None`` for an empty side)."""

    change_type: str
    """``add``, ``modify`` or ``delete``."""
    before: str | None
    after: str | None


SIMILAR: Final = 0.5
"""How alike (:meth:`difflib.SequenceMatcher.ratio`) an old and a new entry must be to pair as one ``modify``
when a changed run of entries lost or gained some."""
PAIR_LIMIT: Final = 1024
"""The most old × new entry pairs of one changed run compared for likeness (beyond it: removals and additions)."""
EXACT_RATIO_MAX_CHARS: Final = 4_000
"""Entry pairs longer than this together are compared by :meth:`~difflib.SequenceMatcher.quick_ratio` alone."""


def entry_diff(before_text: str, after_text: str) -> list[EntryChange]:
    """What changed between two texts of a memory file, entry by entry (:func:`entries`, quoted as the agent's
    rows quote them), in the order of the file.

    The entries are aligned with :class:`difflib.SequenceMatcher`. In a changed run, an entry that is
    still in the file elsewhere (moved) is no change; of the others, a run of as many new entries as old
    ones changed in place (``modify``, pairwise); otherwise alike entries pair up as ``modify`` (in
    order, :data:`SIMILAR`) and the rest are ``delete`` and ``add``. Applied to the old entries (a
    ``modify`` in place, an ``add`` where it stands among them), the changes give the new entries;
    texts with the same entries give none.
    """
    old, new = entries(before_text), entries(after_text)
    if old == new:
        return []
    in_old, in_new = set(old), set(new)
    out: list[EntryChange] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            out.extend(_run([e for e in old[i1:i2] if e not in in_new], [e for e in new[j1:j2] if e not in in_old]))
    return out


def _run(gone: list[str], came: list[str]) -> list[EntryChange]:
    """The changes of one changed run: ``gone`` entries replaced by ``came`` ones (see :func:`entry_diff`)."""
    if len(gone) == len(came):
        return [EntryChange("modify", a, b) for a, b in zip(gone, came, strict=True)]
    pairs = _alike_pairs(gone, came) if len(gone) * len(came) <= PAIR_LIMIT else []
    out: list[EntryChange] = []
    i = j = 0
    for pi, pj in [*pairs, (len(gone), len(came))]:
        out.extend(EntryChange("delete", e, None) for e in gone[i:pi])
        out.extend(EntryChange("add", None, e) for e in came[j:pj])
        if pi < len(gone) and pj < len(came):
            out.append(EntryChange("modify", gone[pi], came[pj]))
        i, j = pi + 1, pj + 1
    return out


def _likeness(a: str, b: str) -> float:
    matcher = difflib.SequenceMatcher(None, a, b)
    if matcher.real_quick_ratio() < SIMILAR or matcher.quick_ratio() < SIMILAR:
        return 0.0
    return matcher.ratio() if len(a) + len(b) <= EXACT_RATIO_MAX_CHARS else matcher.quick_ratio()


def _alike_pairs(gone: list[str], came: list[str]) -> list[tuple[int, int]]:
    """The order-keeping pairing of alike entries (``(index in gone, index in came)``) of the greatest total
    likeness; entries less alike than :data:`SIMILAR` never pair."""
    n, m = len(gone), len(came)
    like = [[_likeness(a, b) for b in came] for a in gone]
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            paired = best[i + 1][j + 1] + like[i][j] if like[i][j] >= SIMILAR else -1.0
            best[i][j] = max(best[i + 1][j], best[i][j + 1], paired)
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < n and j < m:
        if like[i][j] >= SIMILAR and best[i][j] == best[i + 1][j + 1] + like[i][j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs
