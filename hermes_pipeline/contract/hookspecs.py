"""The observer (``hermes.observer.v1``) and middleware (``hermes.middleware.v1``) contracts.

(Longer than our usual module on purpose: the whole contract reads best in one file, one
hookspec per hook, each with its fields.)

Each function below is a pluggy hookspec: its name is the hook name, its parameters are the payload
fields (plus ``telemetry_schema_version``), and its docstring is the documentation of that hook.
Implement a hook by writing a function with the same name decorated with :data:`hookimpl` and
declaring only the parameters you read; fields absent from a payload arrive as ``None`` (OBS-10).

Observer specs use neither ``firstresult`` nor ``historic`` (OBS-9). The engine iterates the
implementations itself so that a failing one never affects the host (OBS-12); wrapper hookimpls
are refused (OBS-13).

This module is also the single source of the field lists: :mod:`hermes_pipeline.contract.hooks`
reads the parameter names from here.
"""

# ruff: noqa: ARG001  (hookspecs have no bodies)
from __future__ import annotations

from typing import Any

import pluggy

from .versions import PROJECT_NAME

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
"""Marker for ``hermes_pipeline`` hook specifications."""

hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marker for ``hermes_pipeline`` hook implementations (``@hookimpl``, ``@hookimpl(tryfirst=True)``)."""


# --------------------------------------------------------------------------------------------
# Session lifecycle (spec 01 §7.2)
# --------------------------------------------------------------------------------------------


@hookspec
def on_session_start(session_id: str, model: str, platform: str, agent_version: str | None,
                     telemetry_schema_version: str) -> None:
    """A brand-new session started, after the system prompt was built. Not fired for resumed sessions.

    Fields: ``session_id``, ``model``, ``platform``; optional ``agent_version`` (hermes_pipeline
    extension: the host agent's own version, e.g. Hermes ``0.19.0``, when the host declared it).
    Return ignored.
    """


@hookspec
def on_session_end(
    session_id: str,
    task_id: str,
    turn_id: str,
    completed: bool,
    interrupted: bool,
    model: str,
    platform: str,
    failed: bool | None,
    turn_exit_reason: str | None,
    reason: str | None,
    api_request_id: str | None,
    telemetry_schema_version: str,
) -> None:
    """End of every run-conversation call (one turn), including interrupted and incomplete turns.

    Fields: ``session_id``, ``task_id``, ``turn_id``, ``completed``, ``interrupted``, ``model``,
    ``platform``; optional ``failed``, ``turn_exit_reason`` (``completed``, ``interrupted_by_user``,
    ``max_iterations``, ``budget_exhausted``, ``timeout``, ``error``...), ``reason``, ``api_request_id``
    (the request in flight when an interrupt ended the turn). Return ignored.
    """


@hookspec
def on_session_finalize(session_id: str, platform: str, reason: str, telemetry_schema_version: str) -> None:
    """The host tore down a session identity; fires exactly once per identity (OBS-36).

    Fields: ``session_id``, ``platform``, ``reason`` (``shutdown``, ``session_boundary``,
    ``session_expired``). Return ignored.
    """


@hookspec
def on_session_reset(
    session_id: str,
    platform: str,
    reason: str,
    old_session_id: str | None,
    new_session_id: str | None,
    telemetry_schema_version: str,
) -> None:
    """The host switched from an old session identity to a new one (after ``on_session_finalize``).

    Fields: ``session_id`` (the new identity), ``platform``, ``reason`` (``new_session``),
    ``old_session_id``, ``new_session_id``. Return ignored.
    """


# --------------------------------------------------------------------------------------------
# Turn-level LLM hooks (spec 01 §7.3, §7.6)
# --------------------------------------------------------------------------------------------


@hookspec
def pre_llm_call(
    session_id: str,
    task_id: str,
    turn_id: str,
    user_message: str,
    conversation_history: list[dict[str, Any]],
    is_first_turn: bool,
    model: str,
    platform: str,
    sender_id: str | None,
    agent_version: str | None,
    telemetry_schema_version: str,
) -> str | dict[str, Any] | None:
    """Once per turn, before the turn's tool loop starts.

    Fields: ``session_id``, ``task_id``, ``turn_id``, ``user_message`` (raw),
    ``conversation_history`` (shallow copy), ``is_first_turn``, ``model``, ``platform``, ``sender_id``;
    optional ``agent_version`` (as on ``on_session_start``; also here because resumed sessions
    have no ``on_session_start``).

    Return: a non-empty ``str`` or ``{"context": str}``; all valid returns are joined with a blank
    line and injected into the current user message (never the system prompt, never persisted).
    """


@hookspec
def post_llm_call(
    session_id: str,
    task_id: str,
    turn_id: str,
    user_message: str,
    assistant_response: str,
    conversation_history: list[dict[str, Any]],
    model: str,
    platform: str,
    telemetry_schema_version: str,
) -> None:
    """Once per turn that completed with a final assistant output (not when interrupted).

    Fields: ``session_id``, ``task_id``, ``turn_id``, ``user_message``, ``assistant_response`` (after
    ``transform_llm_output``, OBS-32), ``conversation_history``, ``model``, ``platform``. Return ignored.
    """


@hookspec
def transform_llm_output(
    response_text: str,
    session_id: str,
    model: str,
    platform: str,
    turn_id: str,
    telemetry_schema_version: str,
) -> str | None:
    """The final assistant text is ready, before ``post_llm_call``.

    Fields: ``response_text``, ``session_id``, ``model``, ``platform``, ``turn_id``.

    Return: a non-empty ``str`` replaces the final text; the first one in dispatch order wins.
    """


# --------------------------------------------------------------------------------------------
# Request-level API hooks (spec 01 §7.4). Group A = session_id, task_id, turn_id,
# api_request_id, platform, model, provider, base_url, api_mode, api_call_count.
# --------------------------------------------------------------------------------------------


@hookspec
def pre_api_request(
    session_id: str,
    task_id: str,
    turn_id: str,
    api_request_id: str,
    platform: str,
    model: str,
    provider: str,
    base_url: str,
    api_mode: str,
    api_call_count: int,
    user_message: str,
    conversation_history: list[dict[str, Any]],
    request_messages: list[Any],
    message_count: int,
    tool_count: int,
    approx_input_tokens: int,
    request_char_count: int,
    max_tokens: int | None,
    started_at: float,
    middleware_trace: list[dict[str, str]],
    request: dict[str, Any],
    retry_count: int,
    system_prompt: str | None,
    telemetry_schema_version: str,
) -> None:
    """Immediately before each provider attempt, built from the effective (post-middleware) request.

    Fields: group A; ``user_message``, ``conversation_history`` (this attempt's running message
    list: a shallow copy of the request's messages), ``request_messages`` (legacy raw);
    ``message_count``, ``tool_count``, ``approx_input_tokens``, ``request_char_count``,
    ``max_tokens``, ``started_at`` (epoch s), ``middleware_trace`` (from ``llm_request``),
    ``request`` (**sanitized** ``{"method": "POST", "body": ...}``), ``retry_count`` (0 on the first
    attempt), ``system_prompt``. Return ignored.
    """


@hookspec
def post_api_request(
    session_id: str,
    task_id: str,
    turn_id: str,
    api_request_id: str,
    platform: str,
    model: str,
    provider: str,
    base_url: str,
    api_mode: str,
    api_call_count: int,
    api_duration: float,
    started_at: float,
    ended_at: float,
    finish_reason: str | None,
    message_count: int,
    response_model: str | None,
    usage: dict[str, Any] | None,
    assistant_content_chars: int,
    assistant_tool_call_count: int,
    response: dict[str, Any],
    assistant_message: Any,
    retry_count: int,
    telemetry_schema_version: str,
) -> None:
    """After a successful provider response.

    Fields: group A; ``api_duration`` (s), ``started_at``, ``ended_at``, ``finish_reason``,
    ``message_count``, ``response_model``, ``usage`` (normalized: ``input_tokens``,
    ``output_tokens``, ``cache_read_tokens``, ``cache_write_tokens``, ``reasoning_tokens``,
    ``request_count``, ``prompt_tokens``, ``total_tokens``), ``assistant_content_chars``,
    ``assistant_tool_call_count``, ``response`` (**sanitized**), ``assistant_message`` (legacy raw
    provider message, unsanitized, as a read-only ``MessageView``: readable as a mapping and by
    attribute, ``msg["content"]`` and ``msg.tool_calls[0].function.name`` alike), ``retry_count``.
    Return ignored.
    """


@hookspec
def api_request_error(
    session_id: str,
    task_id: str,
    turn_id: str,
    api_request_id: str,
    platform: str,
    model: str,
    provider: str,
    base_url: str,
    api_mode: str,
    api_call_count: int,
    api_duration: float,
    started_at: float,
    ended_at: float,
    status_code: int | None,
    retry_count: int | None,
    max_retries: int | None,
    retryable: bool | None,
    reason: str | None,
    error: dict[str, str],
    request: dict[str, Any],
    first_chunk_at: float | None,
    first_delta_at: float | None,
    credential_id: str | None,
    account_name: str | None,
    telemetry_schema_version: str,
) -> None:
    """After a provider attempt failed or entered a retryable error path.

    Fields: group A; ``api_duration``, ``started_at``, ``ended_at``, ``status_code``,
    ``retry_count``, ``max_retries``, ``retryable``, ``reason`` (``rate_limit``, ``timeout``,
    ``server_error``...), ``error`` (**sanitized** ``{"type", "message"}``), ``request``
    (**sanitized**); optional ``first_chunk_at``, ``first_delta_at``, ``credential_id``,
    ``account_name``. Return ignored.
    """


# --------------------------------------------------------------------------------------------
# Tool lifecycle (spec 01 §7.5). Group T = tool_name, args, task_id, session_id,
# tool_call_id, turn_id, api_request_id.
# --------------------------------------------------------------------------------------------


@hookspec
def pre_tool_call(
    tool_name: str,
    args: dict[str, Any],
    task_id: str,
    session_id: str,
    tool_call_id: str,
    turn_id: str,
    api_request_id: str,
    middleware_trace: list[dict[str, str]],
    toolset: str | None,
    telemetry_schema_version: str,
) -> dict[str, Any] | None:
    """Before an admitted tool call is dispatched (after ``tool_request`` middleware), exactly once.

    Fields: group T (``args`` after ``tool_request``, before modify), ``middleware_trace``; optional
    ``toolset`` (hermes_pipeline extension: the toolset declaring the tool in the host's registry).

    Return: ``{"action": "block", "message": str}`` refuses the call (first valid block wins);
    ``{"action": "modify", "args": dict}`` shallow-merges into the arguments. Anything else is ignored.
    """


@hookspec
def post_tool_call(
    tool_name: str,
    args: dict[str, Any],
    task_id: str,
    session_id: str,
    tool_call_id: str,
    turn_id: str,
    api_request_id: str,
    result: str,
    duration_ms: int,
    status: str,
    error_type: str | None,
    error_message: str | None,
    middleware_trace: list[dict[str, str]],
    toolset: str | None,
    exit_code: int | None,
    telemetry_schema_version: str,
) -> None:
    """Once per tool call that reached pre-execution, on every outcome (OBS-37).

    Fields: group T (``args`` actually used or refused), ``result`` (text returned to the model,
    before ``transform_tool_result``), ``duration_ms``, ``status`` (``ok``, ``error``, ``blocked``,
    ``cancelled``), ``error_type``, ``error_message``, ``middleware_trace``; optional ``toolset`` (as
    on ``pre_tool_call``); optional ``exit_code`` (hermes_pipeline extension: the exit code of the
    command the tool ran, e.g. a shell tool; a non-zero one is a failed command whatever ``status``
    the host reported). Return ignored.
    """


@hookspec
def transform_tool_result(
    tool_name: str,
    args: dict[str, Any],
    task_id: str,
    session_id: str,
    tool_call_id: str,
    turn_id: str,
    api_request_id: str,
    result: str,
    duration_ms: int,
    status: str,
    error_type: str | None,
    error_message: str | None,
    telemetry_schema_version: str,
) -> str | None:
    """After ``post_tool_call``, only when the execution chain returned a result (OBS-41).

    Fields: group T, ``result``, ``duration_ms``, ``status`` (``ok`` or ``error``), ``error_type``,
    ``error_message``.

    Return: a ``str`` replaces the result appended to the model context; the first one wins.
    """


# --------------------------------------------------------------------------------------------
# Approval lifecycle (spec 01 §7.7)
# --------------------------------------------------------------------------------------------


@hookspec
def pre_approval_request(
    command: str,
    description: str,
    pattern_key: str,
    pattern_keys: list[str],
    session_key: str,
    surface: str,
    turn_id: str,
    tool_call_id: str,
    session_id: str,
    telemetry_schema_version: str,
) -> None:
    """Before an approval prompt is displayed or sent. Observe-only (OBS-42).

    Fields: ``command`` (raw), ``description``, ``pattern_key``, ``pattern_keys``, ``session_key``,
    ``surface`` (``cli``, ``gateway``), ``turn_id`` and ``tool_call_id`` (from the call context, else
    ``""``), ``session_id`` (hermes_pipeline addition). Return ignored.
    """


@hookspec
def post_approval_response(
    command: str,
    description: str,
    pattern_key: str,
    pattern_keys: list[str],
    session_key: str,
    surface: str,
    turn_id: str,
    tool_call_id: str,
    session_id: str,
    choice: str,
    decided_by: str | None,
    telemetry_schema_version: str,
) -> None:
    """Exactly once per ``pre_approval_request``: answered, timed out or withdrawn (OBS-43).

    Fields: those of ``pre_approval_request`` plus ``choice`` (``once``, ``session``, ``always``,
    ``deny``, ``timeout``, ``cancelled``); optional ``decided_by`` (hermes_pipeline extension: who
    decided - ``user``, ``smart_approval`` (an auxiliary model's review), ``timeout`` (nobody answered
    in time), ``none`` (withdrawn), or the host's own word). Return ignored.
    """


# --------------------------------------------------------------------------------------------
# Human-input lifecycle (spec 01 §7.8)
# --------------------------------------------------------------------------------------------


@hookspec
def on_human_input_request(
    kind: str,
    request_id: str,
    session_id: str,
    session_key: str,
    platform: str,
    prompt: str,
    telemetry_schema_version: str,
) -> None:
    """Right before the agent blocks waiting for a human.

    Fields: ``kind`` (``sudo``, ``clarify``, ``approval``), ``request_id`` (32 hex chars),
    ``session_id``, ``session_key``, ``platform``, ``prompt`` (always redacted). Never contains what
    the human typed (OBS-45). Return ignored.
    """


@hookspec
def on_human_input_resolved(
    kind: str,
    request_id: str,
    session_id: str,
    session_key: str,
    platform: str,
    prompt: str,
    outcome: str,
    telemetry_schema_version: str,
) -> None:
    """Exactly once when the human-input wait ends, with the request's ``request_id`` (OBS-44).

    Fields: those of ``on_human_input_request`` plus ``outcome`` (``submitted``, ``provided``,
    ``cancelled``, ``deny``, ``error``). Return ignored.
    """


# --------------------------------------------------------------------------------------------
# Subagent lifecycle (spec 01 §7.9)
# --------------------------------------------------------------------------------------------


@hookspec
def subagent_start(
    parent_session_id: str,
    parent_turn_id: str,
    parent_subagent_id: str | None,
    child_session_id: str,
    child_subagent_id: str,
    child_role: str,
    child_goal: str,
    telemetry_schema_version: str,
) -> None:
    """A delegated child agent was created, inside the parent's delegation tool call.

    Fields: ``parent_session_id``, ``parent_turn_id``, ``parent_subagent_id`` (``None`` for the
    top-level agent), ``child_session_id``, ``child_subagent_id``, ``child_role``, ``child_goal``.
    Return ignored.
    """


@hookspec
def subagent_stop(
    parent_session_id: str,
    parent_turn_id: str,
    child_session_id: str,
    child_subagent_id: str,
    child_role: str,
    child_status: str,
    child_outcome: str | None,
    child_summary: str | None,
    duration_ms: int,
    tool_call_history: list[dict[str, Any]],
    tool_call_history_dropped: int,
    telemetry_schema_version: str,
) -> None:
    """Once per child, when it returned or failed.

    Fields: ``parent_session_id``, ``parent_turn_id``, ``child_session_id``, ``child_subagent_id``,
    ``child_role``, ``child_status`` (``completed``, ``failed``, ``interrupted``, ``timeout``,
    ``error``), ``child_outcome``, ``child_summary``, ``duration_ms``, ``tool_call_history``
    (metadata only: ``tool_name``, ``arg_names``, ``targets``, ``input_bytes``, ``output_bytes``,
    ``outcome``; at most 200 newest), ``tool_call_history_dropped``. Return ignored.
    """


# --------------------------------------------------------------------------------------------
# Middleware (spec 02). Context: session_id, task_id, turn_id, api_request_id and, where known,
# platform, model, provider, base_url, api_mode, api_call_count, tool_call_id.
# --------------------------------------------------------------------------------------------


@hookspec
def middleware_llm_request(
    request: dict[str, Any],
    original_request: dict[str, Any],
    session_id: str,
    task_id: str,
    turn_id: str,
    api_request_id: str,
    platform: str,
    model: str,
    provider: str,
    base_url: str,
    api_mode: str,
    api_call_count: int,
    telemetry_schema_version: str,
    middleware_schema_version: str,
) -> dict[str, Any] | None:
    """Rewrite the provider arguments before the provider is called (MW-11..MW-19).

    Every ``llm_request`` callback sees the same ``request`` copy; do not mutate it. Return
    ``{"request": <complete replacement dict>}`` with optional trace fields ``source``, ``reason``,
    ``name``; the last valid result wins.
    """


@hookspec
def middleware_tool_request(
    tool_name: str,
    args: dict[str, Any],
    original_args: dict[str, Any],
    session_id: str,
    task_id: str,
    turn_id: str,
    api_request_id: str,
    tool_call_id: str,
    platform: str,
    model: str,
    provider: str,
    api_mode: str,
    telemetry_schema_version: str,
    middleware_schema_version: str,
) -> dict[str, Any] | None:
    """Rewrite tool arguments before hooks, guardrails, approvals and execution.

    Return ``{"args": <complete replacement dict>}`` with optional ``source``, ``reason``, ``name``.
    """


@hookspec
def middleware_llm_execution(
    request: dict[str, Any],
    original_request: dict[str, Any],
    next_call: Any,
    middleware_trace: list[dict[str, str]],
    session_id: str,
    task_id: str,
    turn_id: str,
    api_request_id: str,
    platform: str,
    model: str,
    provider: str,
    base_url: str,
    api_mode: str,
    api_call_count: int,
    telemetry_schema_version: str,
    middleware_schema_version: str,
) -> Any:
    """Wrap or replace the real provider call.

    Call ``next_call(request)`` (or ``next_call()``) at most once and return the provider response
    in the shape the host expects (MW-8). The first registered middleware is the outermost (MW-26).
    """


@hookspec
def middleware_tool_execution(
    tool_name: str,
    args: dict[str, Any],
    original_args: dict[str, Any],
    next_call: Any,
    middleware_trace: list[dict[str, str]],
    session_id: str,
    task_id: str,
    turn_id: str,
    api_request_id: str,
    tool_call_id: str,
    platform: str,
    model: str,
    provider: str,
    api_mode: str,
    telemetry_schema_version: str,
    middleware_schema_version: str,
) -> Any:
    """Wrap or replace the real tool call. Call ``next_call(args)`` at most once; return the result."""


# --------------------------------------------------------------------------------------------
# hermes_pipeline extensions (outside the hermes.observer.v1 catalogue; spec 03 §14, spec 04 §2.11
# rows 2 and 21). Hosts that never report compaction and profiles without segmentation never fire
# them.
# --------------------------------------------------------------------------------------------


@hookspec
def on_session_segment(
    session_id: str,
    segment: int,
    segment_reason: str,
    platform: str,
    model: str,
    turn_id: str,
    telemetry_schema_version: str,
) -> None:
    """The session scope rotates at a turn boundary, before that turn's ``pre_llm_call`` (CFG-70..74).

    Close the current session scope with reason ``rotation`` and this ``segment_reason``, then open a
    new one for the same ``session_id`` carrying ``hermes.session.segment = segment`` (1 for the first
    rotation) and ``hermes.session.segment_reason`` (``compaction`` or ``max_turns``).

    Fields: ``session_id``, ``segment``, ``segment_reason``, ``platform``, ``model``, ``turn_id`` (the
    turn about to start). Return ignored.
    """


@hookspec
def on_compaction(
    session_id: str,
    new_session_id: str,
    rotated: bool,
    platform: str,
    telemetry_schema_version: str,
) -> None:
    """The host reported a completed context compaction (spec 04 §2.11 row 21, CFG-75).

    In place (``rotated`` false, ``new_session_id == session_id``) it only marks the event and, with
    ``on_compaction`` segmentation, makes the next turn rotate. ID-rotating (``rotated`` true) closes
    the old session's scope; it is reported after the old session's live turn ended, if any.

    Fields: ``session_id`` (the old identity), ``new_session_id``, ``rotated``, ``platform``.
    Return ignored.
    """


@hookspec
def on_context_snapshot(
    session_id: str,
    task_id: str,
    turn_id: str,
    context: dict[str, Any],
    platform: str,
    telemetry_schema_version: str,
) -> None:
    """The host passed a context snapshot with the turn start, right after its ``pre_llm_call``
    (spec 04 §2.11 row 22, note 8; spec 06 BOOK-29).

    ``context`` holds only what the host supplied, all keys optional: ``model``, ``provider``,
    ``toolsets`` (names of the enabled toolsets), ``config_sha256`` (SHA-256 of the sanitized effective
    configuration), ``skills`` (``[{name, sha256, files}]``, ``files`` the SHA-256 of each of the skill's
    files by path), ``memory`` (``[{path, sha256, chars}]``, paths relative to ``$HERMES_HOME``) and
    ``persona`` (``{path, sha256}`` of ``SOUL.md``): hashes, never skill or memory text. It becomes the
    ``hermes.context`` mark under the turn's ``agent.run`` scope, and a trajectory's root
    ``extra.hermes.context``.

    Fields: ``session_id``, ``task_id``, ``turn_id``, ``context``, ``platform``. Return ignored.
    """


@hookspec
def on_skill_lifecycle(
    action: str,
    skill_name: str,
    provenance: str | None,
    success: bool,
    reason: str | None,
    session_id: str,
    turn_id: str,
    use_count: int | None,
    reused: bool | None,
    reuse_after_patch: bool | None,
    telemetry_schema_version: str,
) -> None:
    """A skill mutation or load that succeeded (spec 04 FMT-24 rows 18-20, spec 05 SM-31..33).

    Fields: ``action`` (``created``, ``patched``, ``edited``, ``file_written`` / ``file_removed`` (a
    supporting file of the skill), ``stale``, ``archived``, ``deleted``, ``restored``, ``installed`` or
    ``loaded``), ``skill_name`` (the skill's directory name, which may sit in a category folder under
    ``$HERMES_HOME/skills``), ``provenance`` (``agent_created``, ``external``, ``installed``,
    ``local`` or ``unknown``), ``success`` (always true: hosts report only changes that happened),
    ``reason`` (the natural-language reason given with a mutation, else ``None``), ``session_id`` and
    ``turn_id`` (``""`` outside a session or turn), and for ``loaded`` the reuse facts ``use_count``,
    ``reused`` and ``reuse_after_patch``. A load inside a turn opens a detached ``skill.run`` scope
    that ends with that turn; every other action is a ``hermes.skill.lifecycle`` mark. Fired by
    ``Host.skill_lifecycle`` (and ``Session`` / ``Turn.skill_lifecycle``); for Hermes Agent, which
    has no such hook, the bridge fires it for each successful ``skill_manage`` call. Return ignored.
    """


# --------------------------------------------------------------------------------------------
# Hermes Agent hooks (family "hermes"): fired by Hermes Agent 0.19 (its ``VALID_HOOKS``) but outside
# the hermes.observer.v1 catalogue. The Hermes bridge (hermes_pipeline.hermes) forwards them with
# Hermes' own fields; other hosts never fire them. Returns are used where Hermes uses them.
# --------------------------------------------------------------------------------------------


@hookspec
def pre_verify(
    session_id: str,
    platform: str,
    model: str,
    coding: bool,
    attempt: int,
    final_response: str,
    changed_paths: list[str],
    telemetry_schema_version: str,
) -> dict[str, Any] | None:
    """Once per turn when the agent edited files and is about to verify or finish (Hermes only).

    Fields: ``session_id``, ``platform``, ``model``, ``coding`` (a coding context), ``attempt``
    (nudges already made this turn), ``final_response``, ``changed_paths``.

    Return: ``{"action": "continue", "message": str}`` (or ``{"decision": "block", "reason": str}``)
    keeps the agent going with that message; the first such directive wins. Anything else lets the
    turn finish.
    """


@hookspec
def transform_terminal_output(
    command: str,
    output: str,
    returncode: int,
    task_id: str,
    env_type: str,
    telemetry_schema_version: str,
) -> str | None:
    """The output of a terminal command, before Hermes truncates it for the model (Hermes only).

    Fields: ``command`` and ``output`` (raw), ``returncode``, ``task_id``, ``env_type`` (the
    execution environment). Return: a ``str`` replaces the output; the first one wins.
    """


@hookspec
def pre_gateway_dispatch(
    event: Any,
    gateway: Any,
    session_store: Any,
    platform: str,
    event_type: str,
    session_key: str,
    session_id: str,
    telemetry_schema_version: str,
) -> dict[str, Any] | None:
    """An incoming gateway message, before authorization and agent dispatch (Hermes only).

    Fields: ``event`` (Hermes' ``MessageEvent``), ``gateway``, ``session_store`` (raw host objects),
    and, added by the bridge, ``platform``, ``event_type`` (the message type), ``session_key`` and
    ``session_id`` (``""`` when the session is not known yet).

    Return: ``{"action": "skip", "reason": str}`` drops the message, ``{"action": "rewrite",
    "text": str}`` replaces its text, ``{"action": "allow"}`` dispatches it; the first wins.
    """


@hookspec
def post_gateway_dispatch(
    platform: str,
    event_type: str,
    session_key: str,
    session_id: str,
    action: str,
    reason: str | None,
    telemetry_schema_version: str,
) -> None:
    """The dispatch decision of this engine's ``pre_gateway_dispatch`` consumers (fired by the bridge).

    Fields: as ``pre_gateway_dispatch`` without the host objects, plus ``action`` (``allow``,
    ``skip`` or ``rewrite``) and ``reason``. It ends the ``trigger.process`` scope of a skipped
    message; an allowed one ends at that session's next ``pre_llm_call``. Return ignored.
    """


@hookspec
def kanban_task_claimed(
    task_id: str,
    board: str | None,
    assignee: str | None,
    run_id: int | None,
    profile_name: str,
    telemetry_schema_version: str,
) -> None:
    """A kanban task was claimed, in the dispatcher process (Hermes only; after the board commit).

    Fields: ``task_id``, ``board``, ``assignee``, ``run_id``, ``profile_name``. Return ignored.
    """


@hookspec
def kanban_task_completed(
    task_id: str,
    board: str | None,
    assignee: str | None,
    run_id: int | None,
    profile_name: str,
    summary: str | None,
    telemetry_schema_version: str,
) -> None:
    """A kanban task was completed, in the worker process (Hermes only).

    Fields: as ``kanban_task_claimed`` plus ``summary``. Return ignored.
    """


@hookspec
def kanban_task_blocked(
    task_id: str,
    board: str | None,
    assignee: str | None,
    run_id: int | None,
    profile_name: str,
    reason: str | None,
    telemetry_schema_version: str,
) -> None:
    """A kanban task was blocked (Hermes only).

    Fields: as ``kanban_task_claimed`` plus ``reason``. Return ignored.
    """
