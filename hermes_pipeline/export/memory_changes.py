"""What a memory tool call changed: its arguments parsed into operations, replayed on the file's entries.

Hermes' ``memory`` tool has two shapes (its schema): a single operation (``action`` ``add`` /
``replace`` / ``remove`` with ``content`` and ``old_text``) and a batch (``operations``, a list of
``{action, content?, old_text?}`` applied atomically, the shape its own description recommends);
both name a ``target``, ``memory`` (``MEMORY.md``) or ``user`` (``USER.md``), ``null`` meaning
``memory``. When ``operations`` is a non-empty list it wins, as in Hermes. Providers send the
arguments as a JSON object or as a JSON string, and some send ``operations`` itself as a string:
:func:`parse_operations` takes every one of these and never raises.

Hermes keeps a memory file as entries joined by ``"\\n§\\n"``; ``replace`` and ``remove`` act on the
first entry *containing* ``old_text`` (a short search text). :func:`replay` applies the operations to
the file's entries as they were before the call, as Hermes does, so a row quotes the real old
entry and the real new one, not the search text. An ``add`` of an entry already there changes
nothing and gives no row. When the old text of the file is unknown, the search text is the best
quote there is.

Other memory tools (``observability.memory_tools``) are one write each: their file is in ``path``
(else ``MEMORY.md``), their action from ``action`` or their name.
"""

from __future__ import annotations

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


def entries(text: str) -> list[str]:
    """Hermes' entries of a memory file's text (stripped, empty and repeated ones dropped, as Hermes reloads)."""
    return list(dict.fromkeys(e.strip() for e in text.split(ENTRY_DELIMITER) if e.strip()))


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
            out.append(Change(op, old, working[index]))
        else:
            working.pop(index)
            out.append(Change(op, old, None))
    return out
