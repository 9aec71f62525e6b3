"""The ATOF line encoder: one scope event → one JSON line of a sink's format (spec 04 §2.1-§2.12).

Each line starts from the event's ATOF object (:func:`~hermes_pipeline.export.atof_object.atof_object`,
shared with ATIF's ``observed_events``), then takes the sink's format. A format is what a sink decides about the rendering: the content gate and its summary mode
(FMT-30/31), the LLM history as a prefix delta or in full (FMT-25), ``field_name_policy``
(FMT-39) and a daily file roll (the delta restarts with each new file). Each sink's writer thread
runs its own :class:`AtofEncoder`, which holds the state a format needs: the history and the
definitions (tool schemas, system prompts: :mod:`~hermes_pipeline.export.definitions`) already written
per session, forgotten when the writer drops a batch. A local file sink keeps the definitions in the
``definitions/`` sidecar of its directory, once for all the sessions written there
(:mod:`~hermes_pipeline.export.definition_files`): its lines only refer to them. When the sidecar cannot
be written, the definitions go into the line itself (``data.definitions``), so nothing is lost.
"""

from __future__ import annotations

import hashlib
from operator import is_
from typing import Any, Final

from ...export.atof_object import atof_object
from ...export.content import HISTORY_KEYS, canonical_json, gate_closed, request_history
from ...export.definition_files import DefinitionFiles
from ...export.definitions import DEFINITIONS_KEY, shrink_request
from ...export.events import END, LLM_SCOPE, SESSION_SCOPE, START, ScopeEvent
from ...export.files import utc_date
from ...export.jsonenc import compact_line

__all__ = ["AtofEncoder", "replace_dots"]

_NOTHING_WRITTEN: Final = (0, b"", (), None)


def replace_dots(value: Any) -> Any:
    """``field_name_policy = "replace_dots"``: ``.`` → ``_`` in every object key, recursively (FMT-39).

    Keys that collide after renaming are all kept: in sorted original-key order the first keeps
    the name and later ones get ``_2``, ``_3``, ...
    """
    if isinstance(value, dict):
        names: dict[Any, Any] = {}
        taken: set[Any] = set()
        for key in sorted(value, key=str):
            new = key.replace(".", "_") if isinstance(key, str) else key
            if new in taken:
                n = 2
                while f"{new}_{n}" in taken:
                    n += 1
                new = f"{new}_{n}"
            taken.add(new)
            names[key] = new
        return {names[k]: replace_dots(v) for k, v in value.items()}
    if isinstance(value, list):
        return [replace_dots(v) for v in value]
    return value


class AtofEncoder:
    """Per-destination rendering of scope events into JSON lines (runs on the worker thread only).

    Args:
        gate_open: content fields verbatim (``True``) or summarised with ``summary_mode``.
        llm_history: ``"delta"`` (prefix-delta with ``messages_offset``) or ``"full"`` (FMT-25).
        dots: apply :func:`replace_dots` to every event.
        daily: the file name rolls with ``{date}``: the delta state restarts with each new file. The day is
            settled once per batch (:meth:`begin_batch`), and the batch is written to that day's file
            (:attr:`day`) however late its write is: a delta line never opens a file its base is not in.
        shared: the ``definitions/`` sidecar of a local file sink's directory, or ``None`` (definitions
            are written in the lines, once per session).
    """

    def __init__(self, *, gate_open: bool = True, summary_mode: str = "preview", llm_history: str = "delta",
                 dots: bool = False, daily: bool = False, shared: DefinitionFiles | None = None) -> None:
        self.gate_open = gate_open
        self.summary_mode = summary_mode
        self.llm_history = llm_history
        self.dots = dots
        self.daily = daily
        self._date = ""
        self._written: dict[int, tuple[int, bytes, tuple[Any, ...], Any]] = {}
        """Session scope UUID → the history last written for it: its length, the SHA-256 of its messages'
        canonical JSON (the hash object too, to go on from it) and the messages themselves."""
        self._defined: dict[int, set[str]] = {}
        """Session scope UUID → the definitions already written in this file for that session."""
        self.shared = shared

    def begin_batch(self) -> None:
        """Settle the day of the batch about to be encoded (a daily file): a new day restarts the delta state."""
        if self.daily:
            today = utc_date()
            if today != self._date:
                self._date = today
                self._written.clear()
                self._defined.clear()

    @property
    def day(self) -> str:
        """The UTC day the lines encoded last are for: the file their batch goes to (``{date}``)."""
        return self._date or utc_date()

    def reset(self) -> None:
        """Forget what was written: the next LLM start of every session carries its full history and
        defines again every tool list and system prompt it refers to."""
        self._written.clear()
        self._defined.clear()

    def __call__(self, event: ScopeEvent) -> bytes:
        name = event.name
        if event.phase == START:
            if name == LLM_SCOPE and isinstance(event.data, dict):
                return self._llm_start(event)
        elif name == SESSION_SCOPE and event.phase == END:  # its state goes with it (no later line reads it)
            self._written.pop(event.uuid, None)
            self._defined.pop(event.uuid, None)
        if self.gate_open and not self.dots:  # most lines: the event's ATOF object as it is
            return compact_line(atof_object(event))
        doc = atof_object(event)
        if not self.gate_open:
            doc = gate_closed(doc, self.summary_mode)
        if self.dots:
            doc = replace_dots(doc)
        return compact_line(doc)

    def _llm_start(self, event: ScopeEvent) -> bytes:
        """An LLM start: its history as a delta and its definitions by reference, or summarised (gate closed)."""
        doc = atof_object(event)
        api_mode = event.metadata.get("hermes.api_mode")
        if self.gate_open:
            doc = self._definitions(self._history(doc, event, api_mode), event)
        else:
            doc = gate_closed(doc, self.summary_mode, api_mode)
        if self.dots:
            doc = replace_dots(doc)
        return compact_line(doc)

    def _definitions(self, doc: dict[str, Any], event: ScopeEvent) -> dict[str, Any]:
        """Tool schemas and system prompts of the request by reference; defined on first use (``data.definitions``)."""
        data = doc["data"]
        request = data.get("request")
        new: dict[str, Any] = {}
        shrunk = shrink_request(request, self._defined.setdefault(event.session_uuid, set()), new)
        if shrunk is request:
            return doc
        data = {**data, "request": shrunk}
        if new and self.shared is not None:
            try:  # before this line is written: a reader of the line finds them
                self.shared.ensure(new)
                new = {}
            except (OSError, ValueError):
                pass  # written in the line instead
        if new:
            data[DEFINITIONS_KEY] = new
        return {**doc, "data": data}

    def _history(self, doc: dict[str, Any], event: ScopeEvent, api_mode: Any) -> dict[str, Any]:
        data = doc["data"]
        request = data.get("request")
        history = request_history(request, api_mode) if api_mode in HISTORY_KEYS else None
        if history is None:  # no recognised history list: whole request, no offset
            return doc
        if self.llm_history == "full":
            doc["data"] = {**data, "messages_offset": 0}
            return doc
        known, known_digest, seen, state = self._written.get(event.session_uuid, _NOTHING_WRITTEN)
        if known and len(history) >= known and all(map(is_, seen, history)):
            # The history written last time, the very same message objects (the engine converts each message
            # once): the prefix needs no hashing, only what it adds (events are immutable once published).
            offset = known
            running = state.copy()
            for message in history[known:]:
                running.update(canonical_json(message).encode("utf-8", "surrogatepass") + b"\n")
        else:
            running = hashlib.sha256()
            offset = 0
            for index, message in enumerate(history):
                if index == known and known and running.digest() == known_digest:
                    offset = known
                running.update(canonical_json(message).encode("utf-8", "surrogatepass") + b"\n")
            if known and known == len(history) and running.digest() == known_digest:
                offset = known
        self._written[event.session_uuid] = (len(history), running.digest(), tuple(history), running)
        body = request["body"]
        doc["data"] = {**data, "request": {**request, "body": {**body, HISTORY_KEYS[api_mode]: history[offset:]}},
                       "messages_offset": offset}
        return doc
