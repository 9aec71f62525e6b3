"""A trajectory read back for replay: its LLM calls in order and its tool results (spec 06 BOOK-31).

:func:`load_trajectory` reads and checks a file (missing, not JSON, not ATIF v1.x, summarised are
:class:`~.errors.TrajectoryError`); :class:`Recording` lists the recorded LLM calls of the run and its
subagents in the order they happened (by step timestamp), the tool results by ``tool_call_id``, and
what an agent needs to run the turn again (system prompt, history, user content, model).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..export.definitions import DEFINITIONS_KEY, resolve_request
from ..readers.definitions import Fallback, expand_trajectory
from ..readers.shapes import check_atif
from ..readers.files import MAX_FILE_BYTES, InputFileError, load_json
from .codec import history_of, is_truncated, request_hash
from .errors import TrajectoryError

__all__ = ["RecordedCall", "Recording", "load_trajectory"]

MAX_BYTES = MAX_FILE_BYTES


def load_trajectory(path: str | Path, *, definitions_from: Fallback = ()) -> dict[str, Any]:
    """The ATIF document at ``path``, with the definitions a store keeps in its ``definitions/`` sidecar
    brought back into it (``extra.hermes.definitions``). ``definitions_from``: where else to find them for a
    store file copied elsewhere (the commands pass the profile's store directory).

    Raises:
        TrajectoryError: the file is missing, not a regular file, unreadable or too large, not JSON (or
            truncated, or nested too deep), not an ATIF trajectory (no ``schema_version`` ``ATIF-v1.*`` or
            no ``steps`` list), a field the readers use has the wrong type (the error names it), or a
            definition it keeps in the ``definitions/`` sidecar is missing or damaged (the error names that file).
    """
    where = str(path)
    try:
        doc = load_json(path, limit=MAX_BYTES)
        if not isinstance(doc, dict) or not str(doc.get("schema_version", "")).startswith("ATIF-v1."):
            raise TrajectoryError("not an ATIF trajectory (no schema_version 'ATIF-v1.x')", path=where)
        if not isinstance(doc.get("steps"), list):
            raise TrajectoryError("not an ATIF trajectory (no 'steps' list)", path=where)
        check_atif(doc, where)
        # tool lists / system prompts kept once in the store
        expand_trajectory(doc, path, limit=MAX_BYTES, fallback=definitions_from)
    except InputFileError as exc:
        raise TrajectoryError(exc.reason, path=where, key=exc.field) from None
    return doc


def _with_request(step: Mapping[str, Any], request: Any) -> Mapping[str, Any]:
    """``step`` whose ``extra.hermes.llm_request`` is ``request`` (copied along that path only)."""
    extra = step.get("extra")
    assert isinstance(extra, Mapping)
    return {**step, "extra": {**extra, "hermes": {**_hermes(step), "llm_request": request}}}


def _hermes(item: Mapping[str, Any]) -> Mapping[str, Any]:
    extra = item.get("extra")
    hermes = extra.get("hermes") if isinstance(extra, Mapping) else None
    return hermes if isinstance(hermes, Mapping) else {}


@dataclass
class RecordedCall:
    """One recorded LLM call (an ATIF agent step with its payloads)."""

    index: int
    """1-based position among the run's LLM calls (the replay's step number)."""
    step_id: int
    """The ATIF ``step_id`` in its (sub)trajectory."""
    trajectory_id: str
    api_mode: str
    request: Any
    response: Any
    timestamp: str

    @cached_property
    def request_hash(self) -> str:
        """SHA-256 of the recorded request's canonical history."""
        return request_hash(self.request, self.api_mode)

    @cached_property
    def truncated(self) -> bool:
        """Whether the sanitizer cut the recorded response (it cannot be served). A cut request is no
        obstacle: the live request is sanitized the same way before the two are compared."""
        return is_truncated(self.response)


@dataclass
class Recording:
    """What a replay serves and what an agent needs to run the recorded turn again."""

    path: str
    document: dict[str, Any]
    calls: list[RecordedCall] = field(default_factory=list)
    tool_results: dict[str, str] = field(default_factory=dict)
    """``tool_call_id`` → the recorded observation content."""
    delegating: set[str] = field(default_factory=set)
    """Tool calls that ran a subagent (replayed by running the subagent, whose calls are recorded)."""

    @classmethod
    def from_file(cls, path: str | Path, *, definitions_from: Fallback = ()) -> Recording:
        """Load and check ``path`` (see :func:`load_trajectory` and :meth:`from_document`)."""
        return cls.from_document(load_trajectory(path, definitions_from=definitions_from), path=str(path))

    @classmethod
    def from_document(cls, doc: dict[str, Any], *, path: str = "<trajectory>") -> Recording:
        """Index a trajectory document.

        Raises:
            TrajectoryError: the document was redacted in ``summary`` mode, holds no LLM payloads, or
                has no recorded LLM call.
        """
        redaction = _hermes(doc).get("redaction")
        if isinstance(redaction, Mapping) and redaction.get("mode") == "summary":
            raise TrajectoryError("this trajectory was redacted in summary mode: its content was replaced by "
                                  "summaries, so it cannot be replayed (replay the original file)", path=path)
        out = cls(path, doc)
        found: list[tuple[str, int, str, Mapping[str, Any]]] = []
        out._walk(doc, found)
        found.sort(key=lambda item: item[0])
        for index, (timestamp, step_id, trajectory_id, step) in enumerate(found, 1):
            hermes = _hermes(step)
            out.calls.append(RecordedCall(index, step_id, trajectory_id, str(hermes.get("api_mode") or
                                                                          "chat_completions"),
                                          hermes["llm_request"], hermes["llm_response"], timestamp))
        if not out.calls:
            raise TrajectoryError("no recorded LLM call with its request and response (was it written with "
                                  "include_llm_payloads = true, e.g. by the trajectory store?)", path=path)
        return out

    def _walk(self, doc: Mapping[str, Any], found: list[tuple[str, int, str, Mapping[str, Any]]]) -> None:
        trajectory_id = str(doc.get("trajectory_id") or doc.get("session_id") or "")
        for step in doc.get("steps") or []:
            if not isinstance(step, Mapping) or step.get("source") != "agent":
                continue
            hermes = _hermes(step)
            if hermes.get("synthetic"):
                continue
            if "llm_request" not in hermes or "llm_response" not in hermes:
                raise TrajectoryError("an agent step has no recorded llm_request / llm_response (written without "
                                      "LLM payloads, or redacted)", path=self.path, step=step.get("step_id"))
            if not isinstance(hermes["llm_request"], Mapping) or not isinstance(hermes["llm_response"], Mapping):
                raise TrajectoryError("the recorded llm_request / llm_response was redacted or summarised (it is "
                                      "not the payload itself), so this step cannot be served",
                                      path=self.path, step=step.get("step_id"))
            definitions = _hermes(doc).get(DEFINITIONS_KEY)
            if isinstance(definitions, Mapping) and definitions:  # tool lists / system prompts written once
                step = _with_request(step, resolve_request(hermes["llm_request"], definitions))
            found.append((str(step.get("timestamp", "")), int(step.get("step_id") or 0), trajectory_id, step))
            observation = step.get("observation")
            for result in (observation.get("results") if isinstance(observation, Mapping) else None) or []:
                call_id = result.get("source_call_id") if isinstance(result, Mapping) else None
                if not isinstance(call_id, str):
                    continue
                if result.get("subagent_trajectory_ref"):
                    self.delegating.add(call_id)
                content = result.get("content")
                if isinstance(content, str):
                    self.tool_results[call_id] = content
        for child in doc.get("subagent_trajectories") or []:
            if isinstance(child, Mapping):
                self._walk(child, found)

    # ------------------------------------------------------------------ what an agent needs

    def turn_contexts(self) -> dict[str, str]:
        """User message → the ``pre_llm_call`` context plugins added to it in the recording, for the run
        and each subagent: the first request's last user message minus the user step's message."""
        out: dict[str, str] = {}

        def walk(doc: Mapping[str, Any]) -> None:
            tid = str(doc.get("trajectory_id") or doc.get("session_id") or "")
            own = [call for call in self.calls if call.trajectory_id == tid]
            user = next((s.get("message") for s in doc.get("steps") or []
                         if isinstance(s, Mapping) and s.get("source") == "user"), None)
            if own and isinstance(user, str):
                history = history_of(own[0].request, own[0].api_mode)
                for message in reversed(history if isinstance(history, list) else []):
                    if isinstance(message, Mapping) and message.get("role") == "user":
                        content = message.get("content")
                        if isinstance(content, str) and content.startswith(user + "\n\n"):
                            out.setdefault(user, content[len(user) + 2:])
                        break
            for child in doc.get("subagent_trajectories") or []:
                if isinstance(child, Mapping):
                    walk(child)

        walk(self.document)
        return out

    @property
    def truncated_values(self) -> int:
        """How many values the recording's run had cut to the export bound (``extra.hermes.truncated_values``
        of the run and its subagents' trajectories); 0 when nothing was cut."""
        total = 0

        def walk(doc: Mapping[str, Any]) -> None:
            nonlocal total
            cut = _hermes(doc).get("truncated_values")
            if isinstance(cut, int) and not isinstance(cut, bool):
                total += cut
            for child in doc.get("subagent_trajectories") or []:
                if isinstance(child, Mapping):
                    walk(child)

        walk(self.document)
        return total

    def truncated_calls(self) -> list[RecordedCall]:
        """Recorded calls whose payloads the sanitizer cut (they cannot be served)."""
        return [call for call in self.calls if call.truncated]

    @property
    def first_messages(self) -> list[Any]:
        """The message history of the first recorded request of the top-level run."""
        own = [call for call in self.calls if call.trajectory_id == str(self.document.get("trajectory_id", ""))]
        history = history_of((own or self.calls)[0].request, (own or self.calls)[0].api_mode)
        return list(history) if isinstance(history, list) else []

    @property
    def system_prompt(self) -> str | None:
        """The first request's system message text, if any."""
        for message in self.first_messages:
            if isinstance(message, Mapping) and message.get("role") == "system" \
                    and isinstance(message.get("content"), str):
                return str(message["content"])
        return None

    @property
    def history(self) -> list[dict[str, Any]]:
        """The conversation before the turn: the first request's messages between the system prompt and
        the last user message."""
        messages = [m for m in self.first_messages if isinstance(m, Mapping)]
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=len(messages))
        return [dict(m) for m in messages[:last_user] if m.get("role") != "system"]

    @property
    def user_content(self) -> str:
        """The user content the model saw (the last user message of the first request; plugin context
        included), else the user step's message."""
        for message in reversed(self.first_messages):
            if isinstance(message, Mapping) and message.get("role") == "user" \
                    and isinstance(message.get("content"), str):
                return str(message["content"])
        return self.user_message

    @property
    def user_message(self) -> str:
        """The message of the first user step."""
        for step in self.document.get("steps", []):
            if isinstance(step, Mapping) and step.get("source") == "user" and isinstance(step.get("message"), str):
                return str(step["message"])
        return ""

    @property
    def model(self) -> str:
        """The model of the run (``agent.model_name``, else the first call's)."""
        agent = self.document.get("agent")
        name = agent.get("model_name") if isinstance(agent, Mapping) else None
        return str(name) if isinstance(name, str) and name and name != "unknown" else \
            str((self.calls[0].request.get("body") or {}).get("model") or "")

    @property
    def api_mode(self) -> str:
        """The first call's ``api_mode``."""
        return self.calls[0].api_mode

    @property
    def context(self) -> Mapping[str, Any]:
        """The recorded context snapshot (``extra.hermes.context``), ``{}`` without one."""
        context = _hermes(self.document).get("context")
        return context if isinstance(context, Mapping) else {}

    @property
    def trajectory_id(self) -> str:
        """The recorded run's id."""
        return str(self.document.get("trajectory_id") or self.document.get("session_id") or "")
