"""The NeMo Relay rows and the row type shared by ``bench_exporters.py`` and ``bench_real_payloads.py``.

:func:`relay_replay` drives NeMo Relay with the same events the hermes_pipeline rows send: per session a
``hermes.session`` scope, per turn an ``agent.run`` scope, per LLM call ``llm.call`` / ``call_end``
(``OpenAIChatCodec``) and per tool call ``tools.call`` / ``call_end`` (timed). ``mode``: ``none`` (no
subscriber), ``manual`` (its ``AtofExporter`` + one ``AtifExporter`` per session, exported by the host as
Relay's manual exporters require) or ``plugin`` (its ``observability`` plugin given the same component config
as hermes_pipeline's ``observability`` component).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ToolCall = tuple[str, str, dict[str, Any], Callable[..., str]]
"""``(call id, tool name, arguments, the tool)``: the tool is called with the arguments, timed."""
LLMCall = tuple[dict[str, Any], dict[str, Any], list[ToolCall]]
"""``(request, response, the tool calls of the response)``."""
Session = Iterable[Iterable[LLMCall]]
"""A session's turns, each its LLM calls."""


@dataclass(frozen=True)
class Row:
    """One row of a bench's table: who (``side``), what (``config``), the run, and what is checked."""

    side: str
    config: str
    fn: Callable[..., Any]
    files: bool = False  # writes ATOF + ATIF: checked
    otlp: bool = False  # sends OTLP: checked
    scrubs: bool = False  # must not let a planted secret through (bench_real_payloads)


def relay_replay(relay: Any, relay_plugin: Any, sessions: Iterable[Session], directory: Path, model: str,
                 new_timed: Callable[[], Any], *, mode: str, component_config: dict[str, Any] | None = None) -> Any:
    """Send ``sessions`` through NeMo Relay (see the module docstring); the clocks of the run (``new_timed()``,
    started once the exporters are set up, as for every row) time each tool call, ``loop_done()`` after the
    last session; returned once the outputs are flushed and closed."""
    atof = activation = None
    if mode == "manual":
        config = relay.AtofExporterConfig()
        config.output_directory, config.filename = str(directory), "events.jsonl"
        config.mode = relay.AtofExporterMode.Overwrite
        atof = relay.AtofExporter(config)
        atof.register("bench-atof")
        (directory / "atif").mkdir(parents=True)
    elif mode == "plugin":
        component = {"kind": "observability", "enabled": True, "config": component_config}
        activation = asyncio.run(relay_plugin.initialize({"version": 1, "components": [component]}))
    codec, timed = relay.codecs.OpenAIChatCodec(), new_timed()
    scope, llm, tools, Result = relay.scope, relay.llm, relay.tools, relay.ToolExecutionResult
    for index, turns in enumerate(sessions):
        atif = None
        if mode == "manual":
            atif = relay.AtifExporter(f"session-{index}", "hermes", "bench", model_name=model)
            atif.register("bench-atif")
        with scope.scope("hermes.session", relay.ScopeType.Agent):
            for calls in turns:
                with scope.scope("agent.run", relay.ScopeType.Function):
                    for request, response, tool_calls in calls:
                        handle = llm.call("bench", relay.LLMRequest({}, request), model_name=model)
                        llm.call_end(handle, (lambda r, response=response: response)(request), response_codec=codec)
                        for call_id, name, args, fn in tool_calls:

                            def tool_call() -> None:
                                h = tools.call(name, args, tool_call_id=call_id)
                                tools.call_end(h, Result(fn(**args)))

                            timed(tool_call)
        if atif is not None:  # the manual exporter keeps events until the host exports them
            relay.subscribers.flush()
            (directory / "atif" / f"atif-session-{index}.json").write_text(atif.export_json(), encoding="utf-8")
            atif.deregister("bench-atif")
    timed.loop_done()
    relay.subscribers.flush()
    if atof is not None:
        atof.shutdown()  # flush + close
        atof.deregister("bench-atof")
    if activation is not None:
        asyncio.run(activation.close())
    return timed
