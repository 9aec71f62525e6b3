"""ATOF events of one trajectory → ATIF steps (spec 04 §3.3-§3.8, FMT-44, FMT-46).

(Over 400 lines on purpose: the mapping table of §3.3-§3.8 in one class, whose rows read each other's
pending steps and calls.)

:class:`StepMapper` is fed the events of one trajectory (a root or an embedded subagent) in
timestamp order and builds its ``steps``: a ``user`` step per ``agent.run`` start, an ``agent`` step
per successful ``llm.call`` end (tool calls, metrics, failed attempts of the same request), tool ends
as observation results on the step that issued the call, and ``subagent_trajectory_ref`` results for
nested agent scopes. Everything runs on the ATIF writer thread; event objects are only read.

Where the mapping table leaves a gap, this module decides (documented choices):

- a tool end with no agent step in its turn at all (hosts that run tools without an LLM call) gets
  an agent step of its own without ``llm_call_count``, whose ``tool_calls`` come from the tool scope
  and whose ``extra.hermes.synthetic`` is ``true``; later such tool ends join it;
- a subagent ref that has no agent step to go on (FMT-44) is placed the same way;
- a tool call the model issued without an id gets ``hermes-<uuid of the tool scope>`` once a tool
  scope of that name in the same turn ends without a known id (matched in order), else
  ``hermes-<uuid of the llm.call>-<n>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ...export.classify import failure_message
from ...export.content import canonical_json
from ...export.definitions import shrink_request
from ...export.events import END, LLM_SCOPE, MARK, START, TURN_SCOPE, ScopeEvent
from ...export.ids import parse_timestamp_us, rfc3339_us, uuid_str
from .values import (final_metrics, mapping, parse_arguments, raw_calls, reasoning_effort, step_metrics,
                          system_prompt, text_of)

__all__ = ["CONTEXT_MARK", "STEP_KEYS", "StepMapper", "final_metrics", "step_metrics"]

STEP_KEYS: Final = ("step_id", "source", "message", "timestamp", "model_name", "reasoning_effort", "reasoning_content",
                    "tool_calls", "observation", "metrics", "llm_call_count", "is_copied_context", "extra")
CONTEXT_MARK: Final = "hermes.context"
_APPROVAL_REQUEST: Final = "hermes.approval.request"
_APPROVAL_RESPONSE: Final = "hermes.approval.response"
_INPUT_REQUEST: Final = "hermes.human_input.request"
_DECISION_MARKS: Final = frozenset({_APPROVAL_REQUEST, _APPROVAL_RESPONSE, _INPUT_REQUEST,
                                    "hermes.human_input.resolved"})


def _parallel(tool_end: ScopeEvent) -> dict[str, bool]:
    """``{"parallel": True}`` for ``tool_calls[].extra`` when the tool scope ran concurrently with a sibling."""
    return {"parallel": True} if "parallel" in tool_end.attributes else {}


class _Turn:
    """Per-turn state: the latest steps and what waits for an agent step or the turn's end."""

    __slots__ = ("last_agent", "last_step", "pending_failed", "pending_refs", "turn_id", "user_step", "uuid")

    def __init__(self, uuid: int, turn_id: Any = None) -> None:
        self.uuid = uuid
        self.turn_id = turn_id
        self.user_step: dict[str, Any] | None = None
        self.last_agent: dict[str, Any] | None = None
        self.last_step: dict[str, Any] | None = None
        self.pending_failed: dict[str, list[dict[str, Any]]] = {}
        self.pending_refs: list[dict[str, Any]] = []


class StepMapper:
    """Builds the steps of one trajectory from its events (see the module docstring).

    Args:
        own_uuid: the trajectory root scope (its own start and end make no step unless it is an ``agent.run``).
        include_llm_payloads: ``extra.hermes.llm_request`` / ``llm_response`` on agent steps.
        include_system_prompt: a leading ``system`` step from the first request's system prompt.
    """

    def __init__(self, own_uuid: int, *, include_llm_payloads: bool = True,
                 include_system_prompt: bool = False) -> None:
        self.own_uuid = own_uuid
        self.include_llm_payloads = include_llm_payloads
        self.include_system_prompt = include_system_prompt
        self.steps: list[dict[str, Any]] = []
        self.failed_attempts = 0
        self.context: Any = None
        self.task_ids: list[str] = []
        self.final_output: str | None = None
        self.first_model: str | None = None
        self._system: tuple[str, int] | None = None
        self.definitions: dict[str, Any] = {}
        """Tool lists and system prompts the steps' ``llm_request`` refer to by hash (written once per
        trajectory in ``extra.hermes.definitions``, see :mod:`~hermes_pipeline.export.definitions`)."""
        self._defined: set[str] = set()
        self._names: dict[int, str] = {}
        self._turns: dict[int | None, _Turn] = {}
        self._outside = _Turn(0)
        self._scope_turn: dict[int, int] = {}
        self._tools: set[int] = set()
        """Tool calls still running: an approval or a subagent raised inside one attaches to it (an end brings
        its own start, ``end.start``: no start is kept here)."""
        self._calls: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        self._idless: list[tuple[int, dict[str, Any], dict[str, Any], int, int]] = []
        """``(turn uuid, step, tool call, llm uuid, index)`` of calls the model issued without an id."""
        self._tool_refs: dict[int, list[dict[str, Any]]] = {}
        self._tool_results: dict[int, dict[str, Any] | None] = {}
        """Tool scope uuid → after the tool ended, where a later subagent's reference to it goes (:meth:`_subagent`):
        the result entry an observation shows (an unmatched result, or one with references of its own), or ``None``:
        a result without references of its own shows none added later."""
        self._asked: dict[Any, int] = {}
        """When each approval (by tool scope or parent) and each human-input request was raised (µs)."""
        self._approvals: dict[int, dict[str, Any]] = {}
        """Tool scope uuid → its approval's record, put on the call's observation when the call ends."""

    # ------------------------------------------------------------------ feeding

    def feed(self, event: ScopeEvent) -> None:
        """Map one event (events must arrive in timestamp order)."""
        if event.kind == MARK:
            if event.name == CONTEXT_MARK and self.context is None and isinstance(event.data, Mapping):
                self.context = event.data
            elif event.name in _DECISION_MARKS:
                self._decision(event)
            return
        if event.phase == START:
            uuid, name = event.uuid, event.name
            self._names[uuid] = name
            category = event.category
            if category == "tool" and name != TURN_SCOPE:  # the most frequent start first
                self._tools.add(uuid)
                turn = self._turns.get(event.parent_uuid)  # a tool called by its turn: _turn_of's first look
                self._scope_turn[uuid] = (turn if turn is not None else self._turn_of(event.parent_uuid)).uuid
            elif category == "agent":
                if event.uuid != self.own_uuid:
                    self._subagent(event)
            elif event.name == TURN_SCOPE:
                self._turn_start(event)
            elif event.category == "llm":
                self._scope_turn[event.uuid] = self._turn_of(event.parent_uuid).uuid
                if self.first_model is None and (type(event.profile) is dict or isinstance(event.profile, Mapping)):
                    model = event.profile.get("model_name")
                    self.first_model = model if isinstance(model, str) and model else None
                if self.include_system_prompt and self._system is None and isinstance(event.data, Mapping):
                    text = system_prompt(event.data.get("request"), event.metadata.get("hermes.api_mode"))
                    self._system = (text or "", event.timestamp_us)
        elif event.phase == END:
            if event.category == "tool":  # the most frequent end first
                self._tool_end(event)
            elif event.name == TURN_SCOPE and event.category == "function":
                turn = self._turns.get(event.uuid)
                final = event.data.get("final_response") if isinstance(event.data, Mapping) else None
                if isinstance(final, str):  # the answer the host showed (the run's final output)
                    self.final_output = final
                if turn is not None:
                    self._turn_outcome(turn, event.metadata, event.data)
                    self._turn_end(turn)
            elif event.category == "llm":
                self._llm_end(event)

    def _decision(self, event: ScopeEvent) -> None:
        """Approvals and human input: who decided what, and how long it waited (the request's mark gives
        the start). An approval raised inside a tool call goes on that call's observation result
        (``extra.hermes.approval``); others, and human input, on the turn's latest step."""
        data = event.data if isinstance(event.data, Mapping) else {}
        if event.name == _APPROVAL_REQUEST:
            self._asked[("approval", event.parent_uuid)] = event.timestamp_us
            return
        if event.name == _INPUT_REQUEST:
            self._asked[("input", data.get("request_id"))] = event.timestamp_us
            return
        if event.name == _APPROVAL_RESPONSE:
            record = {k: data[k] for k in ("choice", "outcome", "decided_by", "surface") if data.get(k) is not None}
            asked = self._asked.pop(("approval", event.parent_uuid), None)
            key = "approvals"
        else:
            record = {k: data[k] for k in ("kind", "request_id", "outcome") if data.get(k) is not None}
            asked = self._asked.pop(("input", data.get("request_id")), None)
            key = "human_input"
        if asked is not None:
            record["waited_ms"] = max(0, event.timestamp_us - asked) // 1000
        if key == "approvals" and event.parent_uuid in self._tools:
            self._approvals[event.parent_uuid] = record
            return
        turn = self._turn_of(event.parent_uuid)
        step = turn.last_step or (self.steps[-1] if self.steps else None)
        if step is not None:
            self._hermes(step).setdefault(key, []).append(record)

    def _turn_of(self, uuid: int | None) -> _Turn:
        if uuid is None:
            return self._outside
        turn = self._turns.get(uuid)
        if turn is not None:
            return turn
        owner = self._scope_turn.get(uuid)
        return self._turns.get(owner, self._outside) if owner is not None else self._outside

    def _add(self, turn: _Turn, step: dict[str, Any]) -> dict[str, Any]:
        self.steps.append(step)
        turn.last_step = step
        if step["source"] == "agent":
            turn.last_agent = step
        return step

    # ------------------------------------------------------------------ turns (user steps)

    def _turn_start(self, event: ScopeEvent) -> None:
        meta = event.metadata
        turn = self._turns[event.uuid] = _Turn(event.uuid, meta.get("hermes.turn_id"))
        data = event.data if (type(event.data) is dict or isinstance(event.data, Mapping)) else {}
        message = data.get("user_message")
        hermes = {k: meta[m] for k, m in (("turn_id", "hermes.turn_id"), ("task_id", "hermes.task_id"))
                  if meta.get(m) is not None}
        hermes["trajectory_id"] = uuid_str(event.uuid)  # the run's id (its store file, its OTLP spans)
        task = meta.get("hermes.task_id")
        if isinstance(task, str) and task not in self.task_ids:
            self.task_ids.append(task)
        step: dict[str, Any] = {"source": "user",
                                "message": message if isinstance(message, (str, list)) else
                                ("" if message is None else canonical_json(message)),
                                "timestamp": rfc3339_us(event.timestamp_us)}
        if hermes:
            step["extra"] = {"hermes": hermes}
        turn.user_step = self._add(turn, step)

    def _turn_outcome(self, turn: _Turn, meta: Mapping[str, Any], data: Any = None) -> None:
        """A turn that ended in error says so, with its cause, on its user step (``extra.hermes``):
        ``turn_status = "error"``, ``error_type`` (the provider's type when the provider failed it) and
        ``error_message`` (the host's reason, else the failing provider's message; bounded)."""
        if turn.user_step is None or meta.get("otel.status_code") != "ERROR":
            return
        hermes = self._hermes(turn.user_step)
        hermes["turn_status"] = "cancelled" if meta.get("error.type") == "cancelled" else "error"
        error_type = meta.get("error.type")
        if isinstance(error_type, str) and error_type:
            hermes["error_type"] = error_type
        message = failure_message(data)
        if message is not None:
            hermes["error_message"] = message

    def _turn_end(self, turn: _Turn) -> None:
        if turn.pending_failed and turn.last_step is not None:
            failed = self._hermes(turn.last_step).setdefault("failed_attempts", [])
            for records in turn.pending_failed.values():
                failed.extend(records)
        turn.pending_failed = {}
        for ref in turn.pending_refs:
            self._result_on(turn, {"subagent_trajectory_ref": [ref]})
        turn.pending_refs = []

    @staticmethod
    def _hermes(step: dict[str, Any]) -> dict[str, Any]:
        extra = step.setdefault("extra", {})
        hermes: dict[str, Any] = extra.setdefault("hermes", {})
        return hermes

    # ------------------------------------------------------------------ provider attempts (agent steps)

    def _llm_end(self, event: ScopeEvent) -> None:
        start = event.start  # the closed scope: the tracker paired it
        owner = self._scope_turn.get(event.uuid)
        turn = self._turns.get(owner, self._outside) if owner is not None else self._turn_of(event.parent_uuid)
        data = event.data if (type(event.data) is dict or isinstance(event.data, Mapping)) else {}
        meta = event.metadata
        start_meta = start.metadata if start is not None else {}
        request_id = meta.get("hermes.api_request_id") or start_meta.get("hermes.api_request_id") or ""
        response = data.get("response")
        if meta.get("otel.status_code") == "ERROR" or not (type(response) is dict or isinstance(response, Mapping)):
            error = mapping(data.get("error"))
            record: dict[str, Any] = {}
            retry = error.get("retry_count")
            if isinstance(retry, int) and not isinstance(retry, bool):
                record["attempt"] = retry + 1
            error_type = meta.get("error.type") or error.get("type")
            if error_type is not None:
                record["error_type"] = error_type
            if error.get("status_code") is not None:
                record["status_code"] = error["status_code"]
            message = failure_message(data)
            if message is not None:
                record["message"] = message
            if request_id:  # the step that holds it answers to the request's anchor, whether it succeeded or not
                record["api_request_id"] = request_id
            turn.pending_failed.setdefault(str(request_id), []).append(record)
            self.failed_attempts += 1
            return
        reply = response.get("assistant_message")
        assistant: Mapping[str, Any] = reply if (type(reply) is dict or isinstance(reply, Mapping)) else {}
        start_data = start.data if start is not None else None
        request = start_data.get("request") if type(start_data) is dict or isinstance(start_data, Mapping) else None
        step: dict[str, Any] = {"source": "agent", "message": text_of(assistant.get("content")),
                                "timestamp": rfc3339_us(event.timestamp_us)}
        model = (event.profile or {}).get("model_name") or response.get("model")
        if not model and start is not None:
            model = (start.profile or {}).get("model_name")
        if isinstance(model, str) and model:
            step["model_name"] = model
        effort = reasoning_effort(request)
        if effort is not None:
            step["reasoning_effort"] = effort
        reasoning = assistant.get("reasoning_content", assistant.get("reasoning"))
        if isinstance(reasoning, str) and reasoning:
            step["reasoning_content"] = reasoning
        calls = self._tool_calls(assistant, turn, event.uuid, step)
        if calls:
            step["tool_calls"] = calls
        metrics = step_metrics(data.get("usage"))
        if metrics is not None:
            step["metrics"] = metrics
        step["llm_call_count"] = 1
        ancestry = {"function_id": uuid_str(event.uuid), "function_name": LLM_SCOPE}
        if event.parent_uuid is not None:
            ancestry["parent_id"] = uuid_str(event.parent_uuid)
            if event.parent_uuid in self._names:
                ancestry["parent_name"] = self._names[event.parent_uuid]
        hermes: dict[str, Any] = {}
        if request_id:
            hermes["api_request_id"] = request_id
        turn_id = start_meta.get("hermes.turn_id") or turn.turn_id
        if turn_id:
            hermes["turn_id"] = turn_id
        api_mode = start_meta.get("hermes.api_mode")  # replay rebuilds the provider's response shape from it
        if isinstance(api_mode, str) and api_mode:
            hermes["api_mode"] = api_mode
        finish = data.get("finish_reason", response.get("finish_reason"))
        if finish is not None:
            hermes["finish_reason"] = finish
        failed = turn.pending_failed.pop(str(request_id), None)
        if failed:
            hermes["failed_attempts"] = failed
        if self.include_llm_payloads:
            if request is not None:
                hermes["llm_request"] = shrink_request(request, self._defined, self.definitions)
            hermes["llm_response"] = response
        step["extra"] = {"ancestry": ancestry, "hermes": hermes}
        self._add(turn, step)

    def _tool_calls(self, message: Mapping[str, Any], turn: _Turn, llm_uuid: int,
                    step: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        calls = self._calls
        for index, raw in enumerate(raw_calls(message)):
            if not (type(raw) is dict or isinstance(raw, Mapping)):
                continue
            function = raw.get("function")
            if not (type(function) is dict or isinstance(function, Mapping)):
                function = None
            name = (function or raw).get("name")
            arguments, bad = parse_arguments(function.get("arguments") if function is not None
                                             else raw.get("arguments", raw.get("input")))
            call_id = raw.get("id")
            if not (isinstance(call_id, str) and call_id):
                call_id = None
            call: dict[str, Any] = {"tool_call_id": call_id, "function_name": name if isinstance(name, str) else "",
                                    "arguments": arguments}
            if bad is not None:
                call["extra"] = {"raw_arguments": bad}
            if call_id is None:
                self._idless.append((turn.uuid, step, call, llm_uuid, index))
            else:
                calls[call_id] = (step, call)
            out.append(call)
        return out

    # ------------------------------------------------------------------ tool ends (observations)

    def _tool_end(self, event: ScopeEvent) -> None:
        uuid = event.uuid
        start = event.start  # the closed scope: the tracker paired it
        self._tools.discard(uuid)
        profile = event.profile or {}
        call_id = profile.get("tool_call_id")
        meta = event.metadata
        data = event.data if (type(event.data) is dict or isinstance(event.data, Mapping)) else {}
        status = meta.get("hermes.tool.status")
        if status is None:
            status = "cancelled" if meta.get("error.type") == "cancelled" else \
                "error" if meta.get("otel.status_code") == "ERROR" else "ok"
        matched = self._calls.get(call_id) if isinstance(call_id, str) and call_id else None
        turn = None  # looked up only when the call is not known by its id
        if matched is None:  # the model gave no id; the host may have made one up for the tool scope
            owner = self._scope_turn.get(uuid)
            turn = self._turns.get(owner, self._outside) if owner is not None else self._turn_of(event.parent_uuid)
            matched = self._claim_idless(turn, event)
        # A matched call's result is made as its observation entry (``source_call_id`` first), not made and then
        # copied into one: the same keys in the same order.
        result: dict[str, Any] = {"source_call_id": matched[1]["tool_call_id"]} if matched is not None else {}
        content = data.get("result")
        if content is not None:
            result["content"] = content if isinstance(content, str) else canonical_json(content)
        refs = self._tool_refs.pop(uuid, None) if self._tool_refs else None
        if refs:
            result["subagent_trajectory_ref"] = refs
        scope_id = uuid_str(uuid)
        hermes: dict[str, Any] = {"status": status, "event_uuid": scope_id}
        exit_code = meta.get("process.exit.code")
        if exit_code is not None and isinstance(exit_code, int) and not isinstance(exit_code, bool):
            # Hermes' status stays as reported
            hermes["exit_code"] = exit_code
            if exit_code != 0:
                hermes["command_failed"] = True
                if meta.get("hermes.tool.command_timed_out"):
                    hermes["command_timed_out"] = True
        duration = meta.get("hermes.duration_ms")
        if duration is not None:
            hermes["duration_ms"] = duration
        if meta.get("otel.status_code") == "ERROR":  # why it failed (the result keeps the tool's own text)
            error_type = meta.get("error.type")
            if isinstance(error_type, str) and error_type:
                hermes["error_type"] = error_type
            message = failure_message(data)
            if message is not None:
                hermes["error_message"] = message
        approval = self._approvals.pop(uuid, None) if self._approvals else None
        if approval is not None:
            hermes["approval"] = approval
        annotation = profile.get("tool_result_annotation")
        result["extra"] = {"hermes": hermes} if annotation is None else \
            {"hermes": hermes, "tool_result_annotation": annotation}
        toolset = start.metadata.get("hermes.toolset") if start is not None else None
        if matched is not None:
            step, call = matched
            extra = call.get("extra")
            extra = {**extra, "tool_scope_uuid": scope_id} if extra else {"tool_scope_uuid": scope_id}
            if toolset:
                extra["toolset"] = toolset
            if "parallel" in event.attributes:
                extra["parallel"] = True
            call["extra"] = extra
            observation = step.get("observation")  # _observe, inlined on the path of nearly every tool call
            if observation is None:
                observation = step["observation"] = {"results": []}
            observation["results"].append(result)
            # A later subagent of this tool (out of timestamp order) joins only a reference list the observation
            # already holds (see _subagent): with none, there is nothing it could join.
            self._tool_results[uuid] = result if refs else None
            return
        assert turn is not None
        latest = turn.last_agent
        if latest is not None and not self._hermes(latest).get("synthetic"):
            hermes["unmatched"] = True
            self._tool_results[uuid] = result  # the observation's own entry
            self._observe(latest, result)
            return
        arguments = start.data.get("arguments") if start is not None and isinstance(start.data, Mapping) else None
        call = {"tool_call_id": call_id or f"hermes-{scope_id}", "function_name": event.name,
                "arguments": dict(arguments) if (type(arguments) is dict or isinstance(arguments, Mapping)) else {},
                "extra": {"tool_scope_uuid": scope_id, **({"toolset": toolset} if toolset else {}),
                          **_parallel(event)}}
        target = latest if latest is not None else self._synthetic(turn, event.timestamp_us if start is None
                                                                   else start.timestamp_us)
        target.setdefault("tool_calls", []).append(call)
        entry = {"source_call_id": call["tool_call_id"], **result}
        self._tool_results[uuid] = entry if refs else None  # as for a matched call
        self._observe(target, entry)

    def _claim_idless(self, turn: _Turn, event: ScopeEvent) -> tuple[dict[str, Any], dict[str, Any]] | None:
        for index, (turn_uuid, step, call, _, _) in enumerate(self._idless):
            if turn_uuid == turn.uuid and call["function_name"] == event.name:
                del self._idless[index]
                call["tool_call_id"] = f"hermes-{uuid_str(event.uuid)}"
                return step, call
        return None

    def _synthetic(self, turn: _Turn, timestamp_us: int) -> dict[str, Any]:
        hermes: dict[str, Any] = {"turn_id": turn.turn_id} if turn.turn_id else {}
        hermes["synthetic"] = True
        return self._add(turn, {"source": "agent", "message": "", "timestamp": rfc3339_us(timestamp_us),
                                "extra": {"hermes": hermes}})

    @staticmethod
    def _observe(step: dict[str, Any], result: dict[str, Any]) -> None:
        observation = step.get("observation")
        if observation is None:  # the step's first result (the observation is made here only)
            observation = step["observation"] = {"results": []}
        observation["results"].append(result)

    def _result_on(self, turn: _Turn, result: dict[str, Any]) -> None:
        step = turn.last_agent
        if step is None:
            step = self._synthetic(turn, self._timestamp_after(turn))
        self._observe(step, result)

    def _timestamp_after(self, turn: _Turn) -> int:
        last = turn.last_step or (self.steps[-1] if self.steps else None)
        return parse_timestamp_us(last["timestamp"]) if last is not None and "timestamp" in last else 0

    # ------------------------------ subagents: the delegating tool result references the child (FMT-44)

    def _subagent(self, event: ScopeEvent) -> None:
        child = uuid_str(event.uuid)
        ref = {"trajectory_id": child, "session_id": child}
        anchor = event.parent_uuid
        if anchor is not None and anchor in self._tools:
            self._tool_refs.setdefault(anchor, []).append(ref)
            return
        if anchor is not None and anchor in self._tool_results:  # the delegating tool already ended
            ended = self._tool_results[anchor]
            if ended is not None:  # its observation's entry: its reference list, if any, or the entry itself
                ended.setdefault("subagent_trajectory_ref", []).append(ref)
            return
        turn = self._turn_of(anchor)
        if turn.last_agent is not None:
            self._observe(turn.last_agent, {"subagent_trajectory_ref": [ref]})
        else:
            turn.pending_refs.append(ref)

    # ------------------------------------------------------------------ the end

    def finish(self) -> list[dict[str, Any]]:
        """Settle what is still pending (open turns and tools of a partial trajectory) and number the steps."""
        for tool_uuid, refs in list(self._tool_refs.items()):
            turn = self._turns.get(self._scope_turn.get(tool_uuid, -1), self._outside)
            turn.pending_refs.extend(refs)
        self._tool_refs.clear()
        for turn in (*self._turns.values(), self._outside):
            if turn.pending_failed and turn.last_step is None and self.steps:
                turn.last_step = self.steps[-1]
            if turn.pending_refs or turn.pending_failed:
                self._turn_end(turn)
        for _, _, call, llm_uuid, index in self._idless:
            call["tool_call_id"] = f"hermes-{uuid_str(llm_uuid)}-{index}"
        self._idless.clear()
        steps = self.steps
        if self._system is not None and self._system[0]:
            steps.insert(0, {"source": "system", "message": self._system[0],
                             "timestamp": rfc3339_us(self._system[1])})
        ordered: list[dict[str, Any]] = []
        for number, step in enumerate(steps, 1):
            step["step_id"] = number
            entry: dict[str, Any] = {key: step[key] for key in STEP_KEYS if key in step}
            ordered.append(entry)
        self.steps = ordered
        return ordered
