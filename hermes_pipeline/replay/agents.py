"""Agents a replay can run: the reference agent, or any factory of the ``hermes_pipeline.agents`` group.

An agent factory is a callable ``factory(run: AgentRun) -> str`` that runs the recorded turn once on
``run.host`` (whose engine carries the replay's middlewares) and returns the answer shown to the user.
Publish one as ``[project.entry-points."hermes_pipeline.agents"] my_agent = "pkg.mod:factory"`` and
select it with ``--agent my_agent`` (or ``--agent pkg.mod:factory``).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..engine.plugins import import_object
from ..host import Host
from .errors import TrajectoryError
from .recording import Recording

__all__ = ["GROUP", "SETTINGS", "AgentFactory", "AgentRun", "load_agent", "reference_agent"]

GROUP: Final = "hermes_pipeline.agents"

SETTINGS: Final[Mapping[str, str]] = {
    "model": "the model name sent to the provider",
    "provider": "the provider name reported in telemetry",
    "base_url": "the OpenAI-compatible endpoint of live steps",
    "api_key": "the API key of live steps (never recorded)",
    "system_prompt": "the system prompt",
    "temperature": "the sampling temperature sent with every request",
    "max_tokens": "the max_tokens sent with every request",
    "max_iterations": "LLM calls per turn before the agent gives up",
}
"""The replay configuration keys ``--set KEY=VALUE`` accepts, and what each changes."""


@dataclass
class AgentRun:
    """What an agent factory gets: the host to run on, the recording, the effective settings."""

    host: Host
    recording: Recording
    settings: dict[str, Any]
    workspace: Path
    """A temporary directory the agent's tools may use (live steps act here)."""
    context: dict[str, Any] = field(default_factory=dict)
    """The context snapshot to pass with the turn start."""


AgentFactory = Callable[[AgentRun], str]


def load_agent(spec: str | None) -> AgentFactory:
    """The factory named by ``spec``: ``None`` → the reference agent; an entry-point name of
    :data:`GROUP`; or ``module:attribute``.

    Raises:
        TrajectoryError: nothing by that name, or it does not import.
    """
    if spec is None or spec in ("reference", "hermes_pipeline.replay.agents:reference_agent"):
        return reference_agent
    for ep in importlib.metadata.entry_points(group=GROUP):
        if ep.name == spec:
            spec = ep.value
            break
    if ":" not in spec:
        names = sorted(ep.name for ep in importlib.metadata.entry_points(group=GROUP))
        raise TrajectoryError(f"no agent {spec!r}: use an entry-point name of {GROUP!r} "
                              f"({', '.join(names) or 'none installed'}) or MODULE:FACTORY", key="--agent")
    try:
        factory: Any = import_object(spec)
    except Exception as exc:
        raise TrajectoryError(f"the agent {spec!r} does not import: {type(exc).__name__}: {exc}",
                              key="--agent") from None
    if not callable(factory):
        raise TrajectoryError(f"the agent {spec!r} is not callable", key="--agent")
    return factory  # type: ignore[no-any-return]


def _recorded_tool_names(recording: Recording) -> set[str]:
    names: set[str] = set()

    def walk(doc: Mapping[str, Any]) -> None:
        for step in doc.get("steps") or []:
            for call in (step.get("tool_calls") or []) if isinstance(step, Mapping) else []:
                if isinstance(call, Mapping) and isinstance(call.get("function_name"), str):
                    names.add(call["function_name"])
        for child in doc.get("subagent_trajectories") or []:
            if isinstance(child, Mapping):
                walk(child)

    walk(recording.document)
    return names


def reference_agent(run: AgentRun) -> str:
    """Run the recorded turn with the reference agent (:mod:`hermes_pipeline.demo.agent`).

    Its history comes from the first recorded request, its user message from the user step (the replay
    adds the recorded plugin context again); tools the recording used but
    the reference agent lacks are stand-ins that, when actually run (live steps), return an error.
    Approvals are granted (recorded tool results are served without running the tool).
    """
    from ..demo.agent import ReferenceAgent
    from ..demo.openai_client import ChatCompletionsClient
    from ..demo.tools import Tool, Workspace

    settings = run.settings
    tools = Workspace(run.workspace).tools()
    for name in sorted(_recorded_tool_names(run.recording) - set(tools) - {"delegate"}):
        def missing(_name: str = name, **_: Any) -> str:
            return f'{{"error": "the tool {_name} is not available to the replay agent"}}'
        tools[name] = Tool(name, f"{name} (not available in replay)", {"type": "object"}, missing)
    client = ChatCompletionsClient(str(settings.get("base_url") or "http://127.0.0.1:9/v1"),
                                   api_key=settings.get("api_key"), timeout=60.0)
    extra = {key: settings[key] for key in ("temperature", "max_tokens") if settings.get(key) is not None}

    class _Agent(ReferenceAgent):
        def _request(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
            return {**super()._request(messages), **extra}

    agent = _Agent(run.host, client, tools, system_prompt=str(settings.get("system_prompt") or ""),
                   responder=lambda tool, command: "once",
                   max_iterations=int(settings.get("max_iterations") or 12), max_retries=0,
                   context=run.context or None)
    agent.history = list(run.recording.history)
    with run.host.session() as session:
        return agent.run_turn(session, run.recording.user_message)
