"""Grouping scope events into ATIF trajectories (spec 04 §3.1, §3.2, §3.7, §3.9, FMT-42..FMT-49).

(Over 400 lines on purpose: routing, continuations, rewrites of written roots and the document all
read and update the assembler's one state, its routes, remembered roots and continuation keys.)

:class:`TrajectoryAssembler` runs on the ATIF writer thread. It receives every scope event in the
tracker's total order (a scope's start before its end, a parent's start before its children's),
routes each event to its trajectory by walking ``parent_uuid`` upward (FMT-47) and, when a
trajectory root ends, builds the ATIF document and hands a :class:`TrajectoryFile` to the output.

- ``group_by = "agent"``: roots are ``agent`` scopes without an ``agent`` ancestor (top-level session
  segments). ``group_by = "turn"``: roots are ``agent.run`` scopes outside any trajectory; the
  enclosing session scope's start supplies the session-level values (FMT-48).
- Nested ``agent`` scopes (subagent sessions) are trajectories of their own, embedded in their
  parent's ``subagent_trajectories`` (FMT-43), recursively.
- A background subagent can outlive its parent turn and even its parent session: the scope plugin
  then reopens it as a *continuation* (an ``agent`` scope with ``data.continued = true``, under the
  same parent scope and with the same ``hermes.session_id``). The continuation joins the subagent
  trajectory of the earlier part (one embedded trajectory, steps in order, status from its last end),
  never a file of its own (FMT-43). When the parent trajectory was already written, its file is
  written again (same name, atomically, FMT-52) once the continuation ends. For that the last
  :data:`RECENT_ROOTS` written roots that embed subagents are remembered (their documents and their
  subagents' events); a continuation whose parent is no longer remembered is written as a root of its
  own, counted (``continuations_unmerged``) and warned once.
- Events of one trajectory are buffered and mapped in timestamp order (FMT-46) when the root ends,
  so a root's raw events stay in memory until then (session segmentation bounds that for long
  gateway sessions).
- A segment that ends by rotation is written once the next segment of the same Hermes session has
  started, so that ``continued_trajectory_ref`` can name its file (FMT-48).
- A root that ends with ``hermes.close_reason = "shutdown"``, or is still open when the output closes,
  is written as a partial trajectory (FMT-49).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping
from operator import attrgetter
from typing import Any, Final

from ...export.atof_object import atof_object
from ...export.bounds import TRUNCATED_VALUES_KEY
from ...export.definition_files import SHARED_KEY
from ...export.definitions import DEFINITIONS_KEY
from ...export.history_delta import delta_steps
from ...export.events import END, MARK, SESSION_SCOPE, START, TURN_SCOPE, ScopeEvent
from ...export.ids import rfc3339_us, uuid_str
from ...export.jsonenc import indented
from ...export.scopes import AGENT_VERSION_KEY
from .config import AtifConfig
from .filenames import UnresolvedFilename
from .steps import StepMapper, final_metrics

logger: Final = logging.getLogger("hermes_pipeline.sinks.atif")

SCHEMA_VERSION: Final = "ATIF-v1.7"
_ORDER: Final = attrgetter("timestamp_us")
"""Sort key of a trajectory's events. The sort is stable and each node's list only ever grows by appending
events in the order the assembler receives them (the tracker's order), so events with equal timestamps keep
that order."""
PARTIAL_NOTE: Final = "partial: written at teardown before the root scope closed"
RECENT_ROOTS: Final = 64
"""How many written roots with embedded subagents are remembered for late continuations."""
CONTINUED_KEY: Final = "continued"
"""``data`` key of an ``agent`` scope start that continues an ended subagent session."""


class TrajectoryFile:
    """One rendered trajectory: what an output destination writes.

    Attributes:
        name: the rendered ``filename_template`` (a relative path, FMT-50/51).
        content: the UTF-8 JSON document, 2-space indented (FMT-52).
        trajectory_id: the trajectory's id (= ``session_id`` of the document, FMT-42; see
            :meth:`TrajectoryAssembler.trajectory_id`).
        session_id: the logical Hermes ``session_id`` (``extra.hermes.session_id``), or ``None``.
        partial: written at teardown before the root scope closed (FMT-49).
        document: the document itself (tests and in-process consumers; do not mutate).
        definitions: with ``shared_definitions``: ``{ref: value}`` the document refers to by
            ``extra.hermes.shared_definitions``, for the local output's ``definitions/`` sidecar (written there
            before the file).
    """

    __slots__ = ("content", "definitions", "document", "name", "partial", "session_id", "trajectory_id")

    def __init__(self, name: str, content: bytes, trajectory_id: str, session_id: str | None, partial: bool,
                 document: dict[str, Any], definitions: dict[str, Any] | None = None) -> None:
        self.name = name
        self.content = content
        self.trajectory_id = trajectory_id
        self.session_id = session_id
        self.partial = partial
        self.document = document
        self.definitions = definitions or {}

    def __repr__(self) -> str:
        return f"TrajectoryFile({self.name!r}, {len(self.content)} bytes{', partial' if self.partial else ''})"


class _Node:
    """A trajectory under construction (a root or an embedded subagent)."""

    __slots__ = ("aliases", "children", "end", "events", "held", "keys", "parent", "previous", "root",
                 "session_start", "start", "trajectory_id")

    def __init__(self, start: ScopeEvent, parent: _Node | None, session_start: ScopeEvent | None) -> None:
        self.start = start
        self.parent = parent
        self.root: _Node = parent.root if parent is not None else self
        self.session_start = session_start
        self.end: ScopeEvent | None = None
        self.events: list[ScopeEvent] = []
        """The trajectory's events in the order received (sorted by timestamp when rendered, FMT-46)."""
        self.children: list[_Node] = []
        self.previous: str | None = None
        self.aliases: set[int] = set()
        """UUIDs of the continuation scopes that joined this (subagent) trajectory."""
        self.keys: list[tuple[int, Any]] = []
        """On a root: the continuation keys of the subagents in its tree (see ``TrajectoryAssembler``)."""
        self.trajectory_id: str | None = None
        """On a session root (``group_by = "agent"``): the id of its first run, once that run started."""
        self.held: _Node | None = None
        """The earlier segment of a rotated session, written once this segment's file name is known."""


class _Written:
    """A written root remembered for late subagent continuations: its file name and document."""

    __slots__ = ("document", "name", "partial", "root")

    def __init__(self, root: _Node, name: str, document: dict[str, Any], partial: bool) -> None:
        self.root = root
        self.name = name
        self.document = document
        self.partial = partial


def _live(node: _Node) -> bool:
    """Whether the subagent ``node`` and every subagent embedding it are still running."""
    while node.parent is not None:
        if node.end is not None:
            return False
        node = node.parent
    return True


def _replaced(document: dict[str, Any], trajectory_id: str,
              build: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any] | None:
    """A copy of ``document`` whose embedded trajectory ``trajectory_id`` (at any depth) is replaced by
    ``build(<the document embedding it>)``; ``None`` when there is none. Only the path is copied."""
    children = document.get("subagent_trajectories")
    if not isinstance(children, list):
        return None
    for index, child in enumerate(children):
        if not isinstance(child, dict):
            continue
        new = build(document) if child.get("trajectory_id") == trajectory_id else \
            _replaced(child, trajectory_id, build)
        if new is None:
            continue
        copy = dict(document)
        copy["subagent_trajectories"] = [*children[:index], new, *children[index + 1:]]
        return copy
    return None


class TrajectoryAssembler:
    """Routes scope events to trajectories and renders finished ones (see the module docstring).

    No table of open scopes to pair starts and ends: an end is a closed scope (its start is ``end.start``,
    paired once by the tracker) and the steps read it from there. What is kept is the grouping itself,
    keyed by the parent a later event belongs to: which trajectory the children and marks of each scope
    join (``_routes``, trajectory nodes, no events), the trajectories under construction (``_roots``, each
    buffering its own events until its root ends, FMT-46), grouped by turn the session start whose values
    the turns under it take (``_sessions``), and the trajectories a later event may still join (a rotated
    segment held for its successor's name, ``_held``; a subagent continuing after its root was written,
    ``_reopened``).

    Args:
        config: the validated ``atif`` table.
        output: called with each :class:`TrajectoryFile`; an exception is counted and warned once.
        version: ``agent.version`` when ``atif.agent_version`` is not set.
        recent_roots: how many written roots with subagents are remembered for late continuations.
    """

    def __init__(self, config: AtifConfig, output: Callable[[TrajectoryFile], None], *, version: str,
                 recent_roots: int = RECENT_ROOTS) -> None:
        self.config = config
        self.output = output
        self.version = config.agent_version or version
        self.by_turn = config.group_by == "turn"
        self.recent_roots = max(recent_roots, 0)
        self._routes: dict[int, _Node | None] = {}
        """Uuid of a scope whose children may still come → the trajectory they join (``None``: none)."""
        self._sessions: dict[int, ScopeEvent] = {}
        """``group_by = "turn"``: uuid of a session scope outside any trajectory → its start, the session-level
        values of the turns to come under it (FMT-48)."""
        self._roots: dict[int, _Node] = {}
        self._held: dict[Any, _Node] = {}
        self._subagents: dict[tuple[int, Any], _Node] = {}
        """``(parent scope uuid, hermes.session_id)`` → the subagent trajectory a continuation joins."""
        self._written: OrderedDict[int, _Written] = OrderedDict()
        """Root uuid → the remembered written root, oldest first (at most ``recent_roots``)."""
        self._reopened: dict[int, _Node] = {}
        """Subagents of written roots whose continuation is open (``id(node)`` → node)."""
        self._shared: dict[str, Any] = {}
        """With ``shared_definitions``: the definitions of the document being rendered (see :meth:`_extra`)."""
        self._warned: set[str] = set()
        self.counts = dict.fromkeys(("trajectories_written", "partial_written", "filename_unresolved",
                                     "write_errors", "build_errors", "unrouted_events", "trajectories_rewritten",
                                     "continuations_unmerged"), 0)

    # ------------------------------------------------------------------ routing

    def add(self, event: ScopeEvent) -> None:
        """Route one event (called on the writer thread, in the tracker's order)."""
        if event.kind == MARK:
            owner = self._routes.get(event.parent_uuid) if event.parent_uuid is not None else None
            if owner is not None:
                owner.events.append(event)
            return
        if event.phase == START:
            self._start(event)
        elif event.phase == END:
            self._end(event)

    def add_all(self, events: list[ScopeEvent], failed: Callable[[Exception], None]) -> None:
        """:meth:`add` each of ``events`` in order (a writer's batch), one call less per event; an event whose
        routing raises is given to ``failed`` and the next one is routed (FMT-83)."""
        start, end, add = self._start, self._end, self.add
        for event in events:
            try:
                phase = event.phase
                if event.kind == MARK:
                    add(event)
                elif phase == START:
                    start(event)
                elif phase == END:
                    end(event)
            except Exception as exc:
                failed(exc)

    def _start(self, event: ScopeEvent) -> None:
        if event.category == "agent" and self._continue(event):
            return
        parent_uuid = event.parent_uuid
        routes = self._routes
        if parent_uuid is not None and parent_uuid not in routes:
            self.counts["unrouted_events"] += 1
        owner = routes.get(parent_uuid) if parent_uuid is not None else None
        node: _Node | None = owner
        if owner is not None and event.category == "agent":  # a subagent: embedded, no file of its own (FMT-43)
            node = _Node(event, owner, event)
            owner.children.append(node)
            owner.events.append(event)
            if event.parent_uuid is not None:
                key = (event.parent_uuid, event.metadata.get("hermes.session_id"))
                self._subagents[key] = node
                node.root.keys.append(key)
        elif owner is None and self._is_root(event):
            session = self._sessions.get(parent_uuid) if parent_uuid is not None else None
            node = _Node(event, None, session if self.by_turn else event)
            self._roots[event.uuid] = node
            self._link_segment(node)
        if node is not None:
            node.events.append(event)
            if node.trajectory_id is None and node.parent is None and not self.by_turn \
                    and event.name == TURN_SCOPE and event.parent_uuid == node.start.uuid:
                node.trajectory_id = uuid_str(event.uuid)  # one run, one id: the session file takes its first run's
                self._release_held(node)
        elif self.by_turn and event.category == "agent":
            self._sessions[event.uuid] = event
        routes[event.uuid] = node

    def _continue(self, event: ScopeEvent) -> bool:
        """A continuation of an ended subagent session joins that subagent's trajectory (FMT-43).

        Returns whether ``event`` (an ``agent`` scope start) was taken as such. A continuation whose
        subagent is not known (its parent trajectory was written and is no longer remembered) is left
        to the ordinary routing: a trajectory of its own, counted and warned once.
        """
        data = event.data
        if event.parent_uuid is None or not isinstance(data, Mapping) or data.get(CONTINUED_KEY) is not True:
            return False
        node = self._subagents.get((event.parent_uuid, event.metadata.get("hermes.session_id")))
        if node is None:
            if event.parent_uuid not in self._routes:
                self.counts["continuations_unmerged"] += 1
                self._warn_once("unmerged", "a subagent continued after its parent trajectory was written and "
                                "forgotten (only the last %d are kept); it was written as a trajectory of its own",
                                self.recent_roots)
            return False
        node.aliases.add(event.uuid)
        node.end = None  # running again
        node.events.append(event)
        self._routes[event.uuid] = node
        root = node.root.start.uuid
        if root in self._written:
            self._written.move_to_end(root)
            self._reopened[id(node)] = node
        return True

    def _is_root(self, event: ScopeEvent) -> bool:
        if self.by_turn:
            return event.name == TURN_SCOPE and event.category == "function"
        return event.category == "agent"

    def _end(self, event: ScopeEvent) -> None:
        routes = self._routes
        if event.uuid in routes:
            node = routes.pop(event.uuid)
        elif event.start is not None and event.category != "agent" and event.parent_uuid in routes:
            # a closed scope whose start this assembler never saw: it joins its parent's trajectory whole
            node = routes[event.parent_uuid]
        else:
            self.counts["unrouted_events"] += 1
            return
        if node is None:
            if self._sessions:
                self._sessions.pop(event.uuid, None)
            return
        node.events.append(event)
        if node.start.uuid != event.uuid:
            if event.uuid in node.aliases:  # a continuation ended: the subagent's real end so far
                node.end = event
                if self._reopened.pop(id(node), None) is not None:
                    self._rewrite(node, partial=False)
            return
        node.end = event
        if node.parent is not None:  # a subagent that outlived its written root: that file is written again
            if self._reopened.pop(id(node), None) is not None:
                self._rewrite(node, partial=False)
            return
        del self._roots[event.uuid]
        running = self._purge(node)
        reason = event.metadata.get("hermes.close_reason")
        if reason == "rotation" and not self.by_turn:
            self._held[event.metadata.get("hermes.session_id")] = node
        else:
            self._write(node, partial=reason == "shutdown")
        if node.start.uuid in self._written:
            for sub in running:  # background subagents still running: their later events and end join them
                self._reopened[id(sub)] = sub
        else:
            self._purge(node, keep_running=False)

    def _purge(self, root: _Node, *, keep_running: bool = True) -> list[_Node]:
        """Forget scopes of ``root`` left open (their ends were dropped): nothing can route to them any more.

        With ``keep_running``, the scopes of embedded subagents still running (a background child
        outliving its parent turn and session, which ends only with its own stop) stay routable;
        returns those subagents.
        """
        running: dict[int, _Node] = {}
        stale = []
        for uuid, node in self._routes.items():
            if node is None or node.root is not root:
                continue
            if keep_running and node is not root and node.end is None and _live(node):
                running[id(node)] = node
            else:
                stale.append(uuid)
        for uuid in stale:
            del self._routes[uuid]
        return list(running.values())

    def _link_segment(self, node: _Node) -> None:
        """FMT-48: a new segment of a rotated session continues the held earlier segment."""
        if self.by_turn or not self._held:
            return
        held = self._held.pop(node.start.metadata.get("hermes.session_id"), None)
        if held is None:
            return
        node.previous = self.trajectory_id(held)
        node.held = held  # written once this segment's id (its first run's) and so its file name are known

    def _release_held(self, node: _Node) -> None:
        """Write the earlier segment held by ``node``, naming ``node``'s file as its continuation (FMT-48)."""
        held, node.held = node.held, None
        if held is None:
            return
        try:
            continued: str | None = self._filename(node)
        except UnresolvedFilename:
            continued = None
        self._write(held, partial=False, continued=continued)

    @staticmethod
    def trajectory_id(node: _Node) -> str:
        """The id of a trajectory: the root scope UUID, except a session root's, which is the UUID of its
        first run (``agent.run``) once it has one, so that the exported trajectory, the trajectory store's
        file of that run, OTLP ``hermes.trajectory_id`` and ``task_runs.trajectory_id`` name it alike."""
        return node.trajectory_id or uuid_str(node.start.uuid)

    # ------------------------------------------------------------------ teardown

    def close(self) -> None:
        """Write held segments, then every root still open as a partial trajectory (FMT-49)."""
        held, self._held = list(self._held.values()), {}
        for node in held:
            self._write(node, partial=False)
        roots, self._roots = list(self._roots.values()), {}
        self._routes.clear()
        self._sessions.clear()
        for node in roots:
            self._release_held(node)
            self._write(node, partial=True)
        reopened, self._reopened = list(self._reopened.values()), {}
        for node in reopened:  # continuations still open: their written parents get them as they are
            self._rewrite(node, partial=True)

    def open_roots(self) -> int:
        """How many trajectory roots are open (or held for their continuation)."""
        return len(self._roots) + len(self._held)

    # ------------------------------------------------------------------ documents

    def _filename(self, node: _Node) -> str:
        start = node.start
        return self.config.template.render(self.trajectory_id(node), start.metadata, start.timestamp_us)

    def _warn_once(self, key: str, message: str, *args: Any) -> None:
        if key not in self._warned:
            self._warned.add(key)
            logger.warning("hermes_pipeline: atif: " + message + "; later occurrences are counted silently", *args)

    def _write(self, node: _Node, *, partial: bool, continued: str | None = None) -> None:
        """Render and output the root ``node``; a root embedding subagents is then remembered."""
        self._release_held(node)
        written = self._render(node, partial=partial, continued=continued)
        if written is None or not node.keys or self.recent_roots == 0:
            self._forget(node)
            return
        name, document = written
        self._written[node.start.uuid] = _Written(node, name, document, partial)
        node.events = []  # a late continuation renders only its subagent again
        while len(self._written) > self.recent_roots:
            _, oldest = self._written.popitem(last=False)
            self._evict(oldest)

    def _render(self, node: _Node, *, partial: bool,
                continued: str | None = None) -> tuple[str, dict[str, Any]] | None:
        try:
            name = self._filename(node)
        except UnresolvedFilename as exc:
            self.counts["filename_unresolved"] += 1
            self._warn_once("unresolved", "atif.filename_unresolved: %s; the trajectory was skipped", exc)
            return None
        try:
            document = self.document(node, partial=partial, continued=continued)
        except Exception as exc:  # FMT-83: one broken trajectory never stops the others
            self._build_failed(exc)
            return None
        if not self._emit(name, node, document, partial):
            return None
        self.counts["trajectories_written"] += 1
        if partial:
            self.counts["partial_written"] += 1
        return name, document

    def _build_failed(self, exc: Exception) -> None:
        self.counts["build_errors"] += 1
        self._warn_once(f"build:{type(exc).__name__}", "building a trajectory failed (%s); it was skipped",
                        type(exc).__name__)

    def _emit(self, name: str, root: _Node, document: dict[str, Any], partial: bool) -> bool:
        """Encode ``document`` and hand it to the output; ``False`` (counted) when either fails."""
        shared, self._shared = self._shared, {}
        try:
            content = indented(document)
        except Exception as exc:  # FMT-83
            self._build_failed(exc)
            return False
        session = document.get("extra", {}).get("hermes", {}).get("session_id")
        try:
            self.output(TrajectoryFile(name, content, self.trajectory_id(root),
                                       session if isinstance(session, str) else None, partial, document, shared))
        except Exception as exc:  # FMT-37 / FMT-83: counted, warned once, never raised into the agent
            self.counts["write_errors"] += 1
            kind = getattr(exc, "kind", None) or type(exc).__name__
            self._warn_once(f"write:{kind}", "writing a trajectory failed (%s); it was dropped", kind)
            return False
        return True

    def _rewrite(self, node: _Node, *, partial: bool, record: _Written | None = None) -> None:
        """Write the remembered root of the subagent ``node`` again with ``node`` rendered anew (FMT-43):
        same file name, the output replaces the earlier file atomically (FMT-52)."""
        if record is None:
            record = self._written.get(node.root.start.uuid)
        if record is None:
            return
        try:
            document = _replaced(record.document, uuid_str(node.start.uuid),
                                 lambda parent: self.document(node, partial=partial,
                                                              parent_model=parent["agent"]["model_name"]))
        except Exception as exc:  # FMT-83
            self._build_failed(exc)
            return
        if document is None or not self._emit(record.name, record.root, document, record.partial):
            return
        record.document = document
        self.counts["trajectories_rewritten"] += 1

    def _forget(self, root: _Node) -> None:
        """Drop the continuation keys of ``root``'s subagents: a later continuation gets a file of its own."""
        subagents = self._subagents
        for key in root.keys:
            node = subagents.get(key)
            if node is not None and node.root is root:
                del subagents[key]
        root.keys = []
        # A root refers to itself (``root``): its events, and its subagents', would otherwise wait for the cyclic
        # garbage collector, promoted through every generation on the way (a full collection per few sessions).
        nodes = [root]
        while nodes:
            node = nodes.pop()
            node.events = []
            nodes.extend(node.children)

    def _evict(self, record: _Written) -> None:
        """Forget a remembered root; a continuation of it still open is written as it is, then dropped."""
        root = record.root
        for key, node in list(self._reopened.items()):
            if node.root is root:
                del self._reopened[key]
                self._rewrite(node, partial=True, record=record)
        self._purge(root)
        self._forget(root)

    def document(self, node: _Node, *, partial: bool = False, continued: str | None = None,
                 parent_model: str | None = None) -> dict[str, Any]:
        """The ATIF document of ``node`` (recursively embedding its subagents)."""
        config = self.config
        events = sorted(node.events, key=_ORDER)
        mapper = StepMapper(node.start.uuid, include_llm_payloads=config.include_llm_payloads,
                            include_system_prompt=config.include_system_prompt)
        aliases = node.aliases
        for event in events:
            if aliases and event.uuid in aliases:  # a continuation's own start and end make no step
                continue
            mapper.feed(event)
        steps = mapper.finish()
        if config.llm_history == "delta":  # each request as what it adds to the previous one
            steps = delta_steps(steps)
        session = node.session_start
        session_data = session.data if session is not None and isinstance(session.data, Mapping) else {}
        session_meta = session.metadata if session is not None else node.start.metadata
        model = session_data.get("model") if node.parent is None else None
        if not isinstance(model, str) or not model:
            model = parent_model or config.model_name
        trajectory_id = self.trajectory_id(node) if node.parent is None else uuid_str(node.start.uuid)
        host_version = session_meta.get(AGENT_VERSION_KEY) if isinstance(session_meta, Mapping) else None
        # agent.version: the configured atif.agent_version, else the host agent's declared version, else
        # this package's version
        version = config.agent_version or (host_version if isinstance(host_version, str) and host_version
                                           else self.version)
        agent: dict[str, Any] = {"name": config.agent_name, "version": version, "model_name": model}
        if config.tool_definitions is not None:
            agent["tool_definitions"] = list(config.tool_definitions)
        if config.extra is not None:
            agent["extra"] = dict(config.extra)
        doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "session_id": trajectory_id,
                               "trajectory_id": trajectory_id, "agent": agent, "steps": steps}
        if partial or node.end is None:
            doc["notes"] = PARTIAL_NOTE
        metrics = final_metrics(steps, mapper.failed_attempts)
        if metrics is not None:
            doc["final_metrics"] = metrics
        if continued is not None:
            doc["continued_trajectory_ref"] = continued
        if node.children:
            doc["subagent_trajectories"] = [self.document(child, partial=partial, parent_model=model)
                                            for child in node.children]
        doc["extra"] = self._extra(node, mapper, session_meta, session_data, events)
        return doc

    def _extra(self, node: _Node, mapper: StepMapper, meta: Mapping[str, Any], data: Mapping[str, Any],
               events: list[ScopeEvent]) -> dict[str, Any]:
        hermes: dict[str, Any] = {}
        own = node.start.metadata
        session_id = meta.get("hermes.session_id", own.get("hermes.session_id"))
        if session_id is not None:
            hermes["session_id"] = session_id
        platform = meta.get("hermes.platform", data.get("platform"))
        if platform is not None:
            hermes["platform"] = platform
        for key, source in (("segment", "hermes.session.segment"), ("segment_reason", "hermes.session.segment_reason")):
            if meta.get(source) is not None:
                hermes[key] = meta[source]
        hermes["trajectory_date"] = rfc3339_us(node.start.timestamp_us)[:10]
        start_data = node.start.data
        if node.parent is None and isinstance(start_data, Mapping) and start_data.get("resumed") is True:
            hermes["resumed"] = True  # continues a session started by an earlier process (see .resume)
        if mapper.task_ids:
            hermes["task_ids"] = list(mapper.task_ids)
        if node.previous is not None:
            hermes["previous_trajectory_id"] = node.previous
        hermes["content"] = "full"
        hermes["llm_payloads"] = self.config.include_llm_payloads
        if mapper.context is not None:
            hermes["context"] = mapper.context
        if mapper.final_output is not None:
            hermes["final_output"] = mapper.final_output
        if mapper.definitions and self.config.shared_definitions:  # in the output's definitions/ sidecar
            hermes[SHARED_KEY] = sorted(mapper.definitions)
            self._shared.update(mapper.definitions)
        elif mapper.definitions:  # what the steps' llm_request refer to by hash, once per trajectory
            hermes[DEFINITIONS_KEY] = mapper.definitions
        if node.parent is not None and node.start.name == SESSION_SCOPE:
            start_data = node.start.data if isinstance(node.start.data, Mapping) else {}
            end_data = node.end.data if node.end is not None and isinstance(node.end.data, Mapping) else {}
            subagent = {k: v for k, v in (("role", start_data.get("child_role")),
                                          ("status", end_data.get("child_status"))) if v is not None}
            if subagent:
                hermes["subagent"] = subagent
        # Values the scope tracker cut to its max_value_chars bound: the trajectory then says so, since a replay
        # of it cannot give back what was cut (see export/bounds.py).
        cut = 0
        for event in events:
            values = event.metadata
            if (type(values) is dict or isinstance(values, Mapping)) and TRUNCATED_VALUES_KEY in values:
                cut += values[TRUNCATED_VALUES_KEY]
        if cut:
            hermes["truncated_values"] = cut
        extra: dict[str, Any] = {"hermes": hermes}
        if self.config.include_observed_events:  # a subagent's events are in its own trajectory
            own_uuid, aliases = node.start.uuid, node.aliases
            extra["observed_events"] = [atof_object(event) for event in events
                                        if event.category != "agent" or event.uuid == own_uuid
                                        or event.uuid in aliases]
        return extra
