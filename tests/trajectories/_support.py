"""Helpers of the trajectory tests: a profile with the store on, a scripted run, a socket guard."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hermes_pipeline.profile import open_profile
from hermes_pipeline.profile import Profile


def store_profile(home: Path, extra: str = "") -> Profile:
    """Open the profile at ``home`` with the trajectory store enabled."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("observability:\n  trajectories:\n    enabled: true\n" + extra)
    return open_profile(home)


def tool_response(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions response asking for one tool call."""
    return {"id": f"resp-{call_id}", "model": "m1", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "tool_calls": [{"id": call_id, "type": "function", "function": {
            "name": name, "arguments": json.dumps(args)}}]}}], "usage": {"prompt_tokens": 10, "completion_tokens": 3}}


def text_response(text: str) -> dict[str, Any]:
    """A chat-completions response with a final text."""
    return {"id": "resp-final", "model": "m1", "choices": [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": text}}], "usage": {"prompt_tokens": 12, "completion_tokens": 4}}


def only_file(directory: Path) -> Path:
    files = sorted(p for p in directory.iterdir() if p.suffix == ".json")
    assert len(files) == 1, files
    return files[0]


@contextmanager
def no_network() -> Iterator[list[str]]:
    """Refuse every socket connection while active; yields the attempts (host:port)."""
    attempts: list[str] = []
    original: Callable[..., Any] = socket.socket.connect

    def refuse(self: socket.socket, address: Any) -> None:
        attempts.append(repr(address))
        raise OSError("networking is disabled in this test")

    socket.socket.connect = refuse  # type: ignore[method-assign, assignment]
    try:
        yield attempts
    finally:
        socket.socket.connect = original  # type: ignore[method-assign]


def record_reference_run(tmp_path: Path, script: list[Any], question: str = "What do my notes say?",
                         *, files: dict[str, str] | None = None) -> tuple[Path, list[dict[str, Any]]]:
    """Run the reference agent once against the scripted model server with a trajectory store; stop the
    server; return the trajectory file and the requests the server received."""
    from hermes_pipeline.demo.agent import ReferenceAgent
    from hermes_pipeline.demo.model_server import ScriptedModelServer
    from hermes_pipeline.demo.openai_client import ChatCompletionsClient
    from hermes_pipeline.demo.tools import Workspace
    from hermes_pipeline.engine.core import Engine
    from hermes_pipeline.host import Host
    from hermes_pipeline.sinks.trajectory_store import attach_store

    home = tmp_path / "recorded-home"
    workspace = tmp_path / "recorded-files"
    workspace.mkdir(parents=True, exist_ok=True)
    for name, text in (files or {"notes.txt": "oats, apples\n"}).items():
        (workspace / name).write_text(text)
    engine = Engine()
    handle = attach_store(engine, home, home / "trajectories", retention_days=0)
    try:
        with ScriptedModelServer(script) as server:
            host = Host(engine, platform="cli", model=server.model, provider="local-scripted",
                        base_url=server.base_url, api_mode="chat_completions")
            agent = ReferenceAgent(host, ChatCompletionsClient(server.base_url, timeout=10.0),
                                   Workspace(workspace).tools(), responder=lambda tool, command: "once",
                                   context=host.context_snapshot(home, toolsets=["file"]))
            with host.session() as session:
                agent.run_turn(session, question)
            requests = list(server.requests)
    finally:
        handle.close()
    return only_file(home / "trajectories"), requests
