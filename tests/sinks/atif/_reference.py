"""The ATIF step mapper's tool paths as they were before the writer-thread work (issue #29), kept as the
reference the current :class:`~hermes_pipeline.sinks.atif.steps.StepMapper` must match byte for byte
(``test_mapper_bytes.py``): ``feed``, ``_tool_calls``, ``_tool_end``, ``_observe`` and ``parse_arguments``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson

from hermes_pipeline.export.classify import failure_message
from hermes_pipeline.export.content import canonical_json
from hermes_pipeline.export.events import END, MARK, START, TURN_SCOPE, ScopeEvent
from hermes_pipeline.export.ids import uuid_str
from hermes_pipeline.sinks.atif.steps import CONTEXT_MARK, StepMapper, _DECISION_MARKS, _parallel, _Turn
from hermes_pipeline.sinks.atif.values import raw_calls, system_prompt


def parse_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """``(arguments object, raw string when it was not a JSON object)`` (§3.4)."""
    if type(raw) is dict or isinstance(raw, Mapping):
        return dict(raw), None
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    if isinstance(raw, str):
        try:
            value = orjson.loads(raw)
        except ValueError:  # orjson.JSONDecodeError; the standard parser also takes NaN and huge integers
            try:
                value = json.loads(raw)
            except ValueError:
                return {}, raw
        return (value, None) if isinstance(value, dict) else ({}, raw)
    return {}, canonical_json(raw)


class ReferenceStepMapper(StepMapper):
    """:class:`StepMapper` with its earlier tool paths (everything else is the current code)."""

    def feed(self, event: ScopeEvent) -> None:
        """Map one event (events must arrive in timestamp order)."""
        if event.kind == MARK:
            if event.name == CONTEXT_MARK and self.context is None and isinstance(event.data, Mapping):
                self.context = event.data
            elif event.name in _DECISION_MARKS:
                self._decision(event)
            return
        if event.phase == START:
            self._names[event.uuid] = event.name
            if event.category == "agent":
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
            elif event.category == "tool":
                self._tools.add(event.uuid)
                self._scope_turn[event.uuid] = self._turn_of(event.parent_uuid).uuid
        elif event.phase == END:
            if event.name == TURN_SCOPE and event.category == "function":
                turn = self._turns.get(event.uuid)
                final = event.data.get("final_response") if isinstance(event.data, Mapping) else None
                if isinstance(final, str):  # the answer the host showed (the run's final output)
                    self.final_output = final
                if turn is not None:
                    self._turn_outcome(turn, event.metadata, event.data)
                    self._turn_end(turn)
            elif event.category == "llm":
                self._llm_end(event)
            elif event.category == "tool":
                self._tool_end(event)

    def _tool_calls(self, message: Mapping[str, Any], turn: _Turn, llm_uuid: int,
                    step: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        for index, raw in enumerate(raw_calls(message)):
            if not (type(raw) is dict or isinstance(raw, Mapping)):
                continue
            function = raw.get("function")
            if not (type(function) is dict or isinstance(function, Mapping)):
                function = None
            name = (function or raw).get("name")
            arguments, bad = parse_arguments(function.get("arguments") if function is not None
                                             else raw.get("arguments", raw.get("input")))
            call: dict[str, Any] = {"tool_call_id": raw.get("id") if isinstance(raw.get("id"), str) and raw.get("id")
                                    else None, "function_name": name if isinstance(name, str) else "",
                                    "arguments": arguments}
            if bad is not None:
                call["extra"] = {"raw_arguments": bad}
            if call["tool_call_id"] is None:
                self._idless.append((turn.uuid, step, call, llm_uuid, index))
            else:
                self._calls[call["tool_call_id"]] = (step, call)
            out.append(call)
        return out

    def _tool_end(self, event: ScopeEvent) -> None:
        uuid = event.uuid
        start = event.start  # the closed scope: the tracker paired it
        self._tools.discard(uuid)
        owner = self._scope_turn.get(uuid)
        turn = self._turns.get(owner, self._outside) if owner is not None else self._turn_of(event.parent_uuid)
        profile = event.profile or {}
        call_id = profile.get("tool_call_id")
        meta = event.metadata
        data = event.data if (type(event.data) is dict or isinstance(event.data, Mapping)) else {}
        status = meta.get("hermes.tool.status")
        if status is None:
            status = "cancelled" if meta.get("error.type") == "cancelled" else \
                "error" if meta.get("otel.status_code") == "ERROR" else "ok"
        result: dict[str, Any] = {}
        content = data.get("result")
        if content is not None:
            result["content"] = content if isinstance(content, str) else canonical_json(content)
        refs = self._tool_refs.pop(uuid, None) if self._tool_refs else None
        if refs:
            result["subagent_trajectory_ref"] = refs
        scope_id = uuid_str(uuid)
        hermes: dict[str, Any] = {"status": status, "event_uuid": scope_id}
        exit_code = meta.get("process.exit.code")
        if isinstance(exit_code, int) and not isinstance(exit_code, bool):  # Hermes' status stays as reported
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
        approval = self._approvals.pop(uuid, None)
        if approval is not None:
            hermes["approval"] = approval
        annotation = profile.get("tool_result_annotation")
        result["extra"] = {"hermes": hermes} if annotation is None else \
            {"hermes": hermes, "tool_result_annotation": annotation}
        self._tool_results[uuid] = result
        toolset = start.metadata.get("hermes.toolset") if start is not None else None
        matched = self._calls.get(call_id) if isinstance(call_id, str) and call_id else None
        if matched is None:  # the model gave no id; the host may have made one up for the tool scope
            matched = self._claim_idless(turn, event)
        if matched is not None:
            step, call = matched
            extra = call.get("extra")
            extra = {**extra, "tool_scope_uuid": scope_id} if extra else {"tool_scope_uuid": scope_id}
            if toolset:
                extra["toolset"] = toolset
            if "parallel" in event.attributes:
                extra["parallel"] = True
            call["extra"] = extra
            self._observe(step, {"source_call_id": call["tool_call_id"], **result})
            return
        latest = turn.last_agent
        if latest is not None and not self._hermes(latest).get("synthetic"):
            hermes["unmatched"] = True
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
        self._observe(target, {"source_call_id": call["tool_call_id"], **result})

    @staticmethod
    def _observe(step: dict[str, Any], result: dict[str, Any]) -> None:
        step.setdefault("observation", {"results": []})["results"].append(result)
