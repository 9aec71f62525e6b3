"""``request_facts`` counts a request's text (``request_char_count``, spec 01 §7.4) the same for every message shape.

The count reads each message of the history on every provider call, so a plain ``dict`` message is read without a
call per message; any other message (an SDK object, a mapping view, a ``str`` subclass of content, content parts)
goes through ``field`` and ``_content_chars`` as before. The count also sizes the LLM call's record for the
publication queue's byte bound (FMT-80), so it must not drift: it is held here against the plain formula.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.host.facts import _content_chars, field, request_facts
from hermes_pipeline.host.message import MessageView

SECRET = "sk-ZX0123456789ABCDEFGHIJ"


class Text(str):
    """Content of a ``str`` subclass."""


_text = st.one_of(st.text(max_size=30), st.just(f"key {SECRET}"), st.sampled_from(["x" * 1_500, "é" * 9_000]),
                  st.builds(Text, st.text(max_size=10)))
_part = st.one_of(st.fixed_dictionaries({"type": st.just("text"), "text": _text}), _text,
                  st.fixed_dictionaries({"type": st.just("image_url"), "image_url": st.fixed_dictionaries(
                      {"url": st.just("data:image/png;base64,AAAA")})}),
                  st.builds(lambda t: SimpleNamespace(type="text", text=t), _text), st.none(), st.integers())
_content = st.one_of(st.none(), _text, st.lists(_part, max_size=4), st.integers(), st.just({"text": "x"}))


def _message(content: Any, shape: str) -> Any:
    if shape == "dict":
        return {"role": "user", "content": content}
    if shape == "missing":
        return {"role": "user"}
    if shape == "view":
        return MessageView({"role": "user", "content": content})
    if shape == "object":
        return SimpleNamespace(role="user", content=content)
    return content  # not a message at all


_messages = st.lists(st.builds(_message, _content, st.sampled_from(["dict", "missing", "view", "object", "odd"])),
                     max_size=8)


@settings(max_examples=300, deadline=None)
@given(messages=_messages, system=st.one_of(st.none(), _text, st.lists(st.fixed_dictionaries({"text": _text}),
                                                                     max_size=2)),
       key=st.sampled_from(["messages", "input"]))
def test_request_char_count_is_the_text_of_every_message(messages: list[Any], system: Any, key: str) -> None:
    """OBS-52: the count is every message's text (``_content_chars`` of ``field(message, "content")``) plus the
    system prompt's, whatever the messages are (dicts, views, SDK objects, odd values, content parts)."""
    request: dict[str, Any] = {"model": "m", key: messages}
    if system is not None:
        request["system"] = system
    facts = request_facts(request)
    expected = sum(_content_chars(field(m, "content")) for m in messages)
    if isinstance(system, list):
        system = "\n".join(t for t in (field(p, "text") for p in system) if isinstance(t, str))
    if isinstance(system, str):
        expected += len(system)
    assert facts["request_char_count"] == expected
    assert facts["approx_input_tokens"] == expected // 4
    assert facts["request_messages"] == messages and facts["request_messages"] is not messages
