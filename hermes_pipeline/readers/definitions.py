"""Reading back the definitions an output keeps in its ``definitions/`` sidecar.

The trajectory store and the ATOF file sink write each tool list and system prompt once for all the
sessions of their directory (:mod:`hermes_pipeline.export.definition_files`) and refer to it by
``{"$ref": "sha256:…"}``. Readers get the requests back exactly as they were sent:

- :func:`expand_trajectory` turns a stored trajectory's ``extra.hermes.shared_definitions`` (and its
  subagents') into ``extra.hermes.definitions``, and its step histories written as deltas into whole ones,
  the form every trajectory reader already resolves
  (:func:`hermes_pipeline.export.definitions.resolve_request`): ``load_trajectory`` and the dashboard call it
  on every file they read, so replay, ``trajectory show|diff|redact`` and the run pages see the same document
  as before;
- :func:`resolve_atof_requests` gives the ``llm.call`` start events of an ATOF file with their requests whole
  (the definitions written in the file, ``data.definitions``, then the sidecar beside it).

Each sidecar file is checked against its name (the SHA-256 of its bytes); a missing, unreadable, damaged or
mismatching file is a :class:`DefinitionFileError` (an :class:`~.files.InputFileError`) naming that file and
the field that referred to it, never a traceback.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from ..export.definition_files import SHARED_KEY, definition_path
from ..export.definitions import DEFINITIONS_KEY, is_ref, resolve_request
from ..export.history_delta import OFFSET_KEY, HistoryError, whole_steps
from .files import MAX_DEPTH, MAX_FILE_BYTES, InputFileError, field_path, parse_json, read_limited

__all__ = ["DefinitionFileError", "Fallback", "expand_trajectory", "load_definitions", "resolve_atof_requests"]

_PREFIX: Final = "sha256:"
_MAX_NESTING: Final = 16
"""How deep ``subagent_trajectories`` are followed (the readers' own limit on nesting)."""


class DefinitionFileError(InputFileError):
    """A definition a recorded file refers to cannot be read from its sidecar.

    Attributes:
        path: the sidecar file (``…/definitions/<hex>.json``).
        referenced_by: the trajectory or event file that refers to it.
        field: where in that file the reference is (``extra.hermes.shared_definitions[0]``).
        missing: the file does not exist (another sidecar may have it).
    """

    def __init__(self, path: str | Path, reason: str, *, referenced_by: str | Path, field: str | None,
                 kind: str = "damaged", missing: bool = False) -> None:
        self.referenced_by = str(referenced_by)
        self.missing = missing
        super().__init__(path, f"definition file {path} (referred to by {Path(referenced_by).name}): {reason}",
                         field=field, kind=kind)


Fallback = Sequence[Path] | Callable[[], Sequence[Path]]
"""Further sidecar owners to look in when the file's own directory lacks a definition (a store file copied
elsewhere: the profile's store directory), or a callable giving them (called only when needed)."""


def load_definitions(directory: Path, refs: Iterable[tuple[str, Any]], *, referenced_by: str | Path,
                     limit: int = MAX_FILE_BYTES, fallback: Fallback = ()) -> dict[str, Any]:
    """``{ref: value}`` read from ``directory/definitions/`` (else from the ``definitions/`` of the
    ``fallback`` directories) for each ``(field, ref)`` of ``refs``.

    Raises:
        DefinitionFileError: a reference is not ``sha256:<hex>``, or its file is missing (everywhere), not a
            regular file, too large, not JSON, or does not hash to its name (the error names the file beside
            the referring one).
    """
    out: dict[str, Any] = {}
    others: list[Path] | None = None
    for field, ref in refs:
        if not isinstance(ref, str):
            raise DefinitionFileError(directory, "the reference is not a string", referenced_by=referenced_by,
                                      field=field)
        if ref in out:
            continue
        try:
            out[ref] = _read_one(directory, ref, field, referenced_by, limit)
            continue
        except DefinitionFileError as exc:
            if not exc.missing:
                raise
            first = exc
        if others is None:
            try:
                others = [Path(d) for d in (fallback() if callable(fallback) else fallback)]
            except Exception:  # an unreadable profile: nowhere else to look
                others = []
        for other in others:
            try:
                out[ref] = _read_one(other, ref, field, referenced_by, limit)
                break
            except DefinitionFileError:
                continue
        else:
            raise first
    return out


def _read_one(directory: Path, ref: str, field: str, referenced_by: str | Path, limit: int) -> Any:
    try:
        path = definition_path(directory, ref)
    except ValueError as exc:
        raise DefinitionFileError(directory, str(exc), referenced_by=referenced_by, field=field) from None
    try:
        data = read_limited(path, limit)
    except InputFileError as exc:
        hint = " (the output's definitions/ directory was removed, or not copied with the file)"
        missing = exc.reason == "no such file"
        raise DefinitionFileError(path, exc.reason + (hint if missing else ""), referenced_by=referenced_by,
                                  field=field, kind=exc.kind, missing=missing) from None
    if _PREFIX + hashlib.sha256(data).hexdigest() != ref:
        raise DefinitionFileError(path, "damaged: its content does not match its name (SHA-256)",
                                  referenced_by=referenced_by, field=field)
    try:
        return parse_json(data.decode("utf-8", "surrogatepass"), path, max_depth=MAX_DEPTH)
    except (InputFileError, UnicodeDecodeError) as exc:
        raise DefinitionFileError(path, getattr(exc, "reason", "not UTF-8 text"), referenced_by=referenced_by,
                                  field=field) from None


def expand_trajectory(doc: dict[str, Any], path: str | Path, *, limit: int = MAX_FILE_BYTES,
                      fallback: Fallback = ()) -> dict[str, Any]:
    """``doc`` (read from ``path``; changed in place and returned) with each trajectory's
    ``extra.hermes.shared_definitions`` replaced by the values, in ``extra.hermes.definitions``, and each agent
    step's history whole again where it was written as what it adds to the previous step's
    (``extra.hermes.messages_offset``, :mod:`hermes_pipeline.export.history_delta`).

    A document without shared definitions (an exported ATIF file, an older store file) is returned as it is.
    ``fallback``: where else to look (see :data:`Fallback`).

    Raises:
        DefinitionFileError: see :func:`load_definitions`; also a ``shared_definitions`` that is not a list.
        InputFileError: a ``messages_offset`` that does not fit the previous step's history (naming the field).
    """
    directory = Path(path).parent
    cache: dict[str, Any] = {}

    def walk(node: Any, at: tuple[str | int, ...], depth: int) -> None:
        if not isinstance(node, dict) or depth > _MAX_NESTING:
            return
        extra = node.get("extra")
        hermes = extra.get("hermes") if isinstance(extra, dict) else None
        if isinstance(hermes, dict) and SHARED_KEY in hermes:
            refs = hermes[SHARED_KEY]
            where = (*at, "extra", "hermes", SHARED_KEY)
            if not isinstance(refs, list):
                raise DefinitionFileError(directory, "expected a list of sha256: references",
                                          referenced_by=path, field=field_path(where))
            wanted = [(field_path((*where, i)), ref) for i, ref in enumerate(refs)
                      if not (isinstance(ref, str) and ref in cache)]
            cache.update(load_definitions(directory, wanted, referenced_by=path, limit=limit, fallback=fallback))
            inline = hermes.get(DEFINITIONS_KEY)
            hermes[DEFINITIONS_KEY] = {**(inline if isinstance(inline, dict) else {}),
                                       **{ref: cache[ref] for ref in refs}}
            del hermes[SHARED_KEY]
        steps = node.get("steps")
        if isinstance(steps, list):  # histories written as what each request adds (atif.llm_history = "delta")
            try:
                node["steps"] = whole_steps(steps)
            except HistoryError as exc:
                raise InputFileError(path, str(exc), field=field_path((*at, "steps", exc.index, "extra", "hermes",
                                                                       OFFSET_KEY))) from None
        children = node.get("subagent_trajectories")
        for index, child in enumerate(children if isinstance(children, list) else ()):
            walk(child, (*at, "subagent_trajectories", index), depth + 1)

    walk(doc, (), 0)
    return doc


def _request_refs(request: Any) -> list[str]:
    """The references in the places :func:`~hermes_pipeline.export.definitions.shrink_request` puts them."""
    body = request.get("body") if isinstance(request, Mapping) else None
    if not isinstance(body, Mapping):
        return []
    found = [body[key]["$ref"] for key in ("tools", "system", "instructions") if is_ref(body.get(key))]
    for key in ("messages", "input"):
        history = body.get(key)
        for message in history if isinstance(history, list) else ():
            if isinstance(message, Mapping) and is_ref(message.get("content")):
                found.append(message["content"]["$ref"])
    return found


def resolve_atof_requests(events: list[dict[str, Any]], path: str | Path, *,
                          limit: int = MAX_FILE_BYTES) -> list[dict[str, Any]]:
    """The ATOF ``events`` read from ``path``, each ``llm.call`` start's ``data.request`` resolved (new event
    objects along the changed path; the others as they are). ``data.definitions`` of the file's earlier lines
    come first, then the ``definitions/`` sidecar beside the file.

    Raises:
        DefinitionFileError: a referenced definition is neither in the file nor readable from the sidecar.
    """
    directory = Path(path).parent
    known: dict[str, Any] = {}
    out = []
    for line, event in enumerate(events, 1):
        data = event.get("data") if isinstance(event, dict) else None
        if not (isinstance(data, dict) and event.get("name") == "llm.call" and event.get("scope_category") == "start"):
            out.append(event)
            continue
        inline = data.get(DEFINITIONS_KEY)
        if isinstance(inline, dict):
            known.update(inline)
        request = data.get("request")
        wanted = [(f"line {line}: data.request", ref) for ref in _request_refs(request) if ref not in known]
        known.update(load_definitions(directory, wanted, referenced_by=path, limit=limit))
        out.append({**event, "data": {**data, "request": resolve_request(request, known)}})
    return out
