"""Streaming form of a chat completion: OpenAI ``chat.completion.chunk`` server-sent events.

:func:`completion_chunks` turns one complete ``chat.completion`` payload into the chunk sequence an
OpenAI endpoint streams for it when the request has ``"stream": true``:

1. a role chunk: ``delta = {"role": "assistant", "content": ""}``;
2. content chunks: ``delta = {"content": <fragment>}`` (the text split into short fragments);
3. for each tool call ``i``: one chunk opening it (``index``, ``id``, ``type``, ``function.name``
   and empty ``arguments``), then chunks with ``{"index": i, "function": {"arguments": <fragment>}}``;
4. a finish chunk: ``delta = {}`` and the ``finish_reason``;
5. with ``stream_options.include_usage``: every chunk above carries ``"usage": null`` and a last
   chunk carries ``"choices": []`` and the ``usage`` object.

:func:`sse_event` frames one chunk as ``data: <json>\\n\\n``; the stream ends with :data:`SSE_DONE`.
Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, Final

__all__ = ["FRAGMENT_CHARS", "SSE_DONE", "completion_chunks", "fragments", "include_usage", "sse_event"]

FRAGMENT_CHARS: Final = 8
"""Content and argument text is streamed in fragments of at most this many characters."""

SSE_DONE: Final = b"data: [DONE]\n\n"
"""The event that ends an OpenAI stream."""


def include_usage(body: Mapping[str, Any]) -> bool:
    """Whether a request asks for the final usage chunk (``stream_options.include_usage`` is true)."""
    options = body.get("stream_options")
    return isinstance(options, Mapping) and options.get("include_usage") is True


def fragments(text: str, size: int = FRAGMENT_CHARS) -> list[str]:
    """``text`` cut into consecutive pieces of at most ``size`` characters (``[]`` for empty text)."""
    return [text[i:i + size] for i in range(0, len(text), size)]


def completion_chunks(completion: Mapping[str, Any], *, usage: bool) -> Iterator[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects streaming ``completion`` (see the module docstring).

    ``completion`` is a non-streaming ``chat.completion`` payload with one choice; joining the
    streamed fragments gives back its message exactly.
    """
    head = {"id": completion["id"], "object": "chat.completion.chunk", "created": completion["created"],
            "model": completion["model"]}
    choice = completion["choices"][0]
    message: Mapping[str, Any] = choice["message"]

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                                    "finish_reason": finish_reason}]}
        if usage:
            out["usage"] = None
        return out

    yield chunk({"role": message.get("role", "assistant"), "content": ""})
    content = message.get("content")
    if isinstance(content, str):
        for piece in fragments(content):
            yield chunk({"content": piece})
    for index, call in enumerate(message.get("tool_calls") or ()):
        function = call["function"]
        yield chunk({"tool_calls": [{"index": index, "id": call["id"], "type": call.get("type", "function"),
                                     "function": {"name": function["name"], "arguments": ""}}]})
        for piece in fragments(function["arguments"]):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, choice["finish_reason"])
    if usage:
        yield {**head, "choices": [], "usage": completion["usage"]}


def sse_event(chunk: Mapping[str, Any]) -> bytes:
    """One server-sent event carrying ``chunk`` as compact JSON."""
    return b"data: " + json.dumps(chunk, separators=(",", ":")).encode("utf-8") + b"\n\n"
