"""Helpers of the trajectory tests: a profile with the store on, a scripted run, a socket guard."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hermes_pipeline.config import open_profile
from hermes_pipeline.config.profile import Profile


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

    socket.socket.connect = refuse  # type: ignore[method-assign]
    try:
        yield attempts
    finally:
        socket.socket.connect = original  # type: ignore[method-assign]
