"""FMT-32: the flattened text of messages with tool calls, and the summary values it is hashed into (FMT-31).

The canonical text of a tool call's argument string is remembered (a call's arguments are flattened again in every
later request of its session): these tests hold what is remembered equal to what a fresh parse gives, whatever the
arguments and however often they come back.
"""

from __future__ import annotations

import hashlib
import json

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.export import content
from hermes_pipeline.export.content import canonical_json, flatten_messages, summary, summary_values

_scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=20)
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                            max_size=3), max_leaves=8)


def _expected(raw: str) -> str:
    """The canonical text of an argument string, parsed afresh (FMT-32), or the string itself when it is no JSON."""
    try:
        return canonical_json(json.loads(raw))
    except ValueError:
        return raw


def _message(raw: str) -> dict[str, object]:
    return {"role": "assistant", "content": "",
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "t", "arguments": raw}}]}


@settings(max_examples=200, deadline=None)
@given(args=st.dictionaries(st.text(max_size=8), _json, max_size=4), indent=st.sampled_from([None, 1]),
       again=st.integers(1, 3))
def test_fmt32_a_tool_call_flattens_to_its_canonical_arguments_every_time(args: dict[str, object], indent: int | None,
                                                                          again: int) -> None:
    raw = json.dumps(args, indent=indent)
    want = f"assistant: [tool_call t {_expected(raw)}]"
    for _ in range(again):  # remembered after the first time: the same text each time
        assert flatten_messages([_message(raw)]) == want


@settings(max_examples=100, deadline=None)
@given(raw=st.text(max_size=40))
def test_fmt32_arguments_that_are_no_json_stay_as_they_are(raw: str) -> None:
    want = _expected(raw)
    assert flatten_messages([_message(raw)]) == f"assistant: [tool_call t {want}]"
    assert flatten_messages([_message(raw)]) == f"assistant: [tool_call t {want}]"


def test_fmt32_the_remembered_texts_stay_bounded() -> None:
    """More distinct argument strings than the memo holds, in count and in characters: it never grows past its
    bounds, and every text is still right after it was emptied."""
    bound = content._ARGUMENTS_TEXTS_MAX
    for n in range(bound + 10):
        raw = orjson.dumps({"n": n, "z": "é"}).decode()
        assert flatten_messages([_message(raw)]) == f'assistant: [tool_call t {{"n":{n},"z":"é"}}]'
        assert len(content._arguments_texts) <= bound
    for n in range(2 * content._ARGUMENTS_TEXTS_BUDGET // 4000):  # strings of 2,000 characters: the text budget
        raw = json.dumps({"n": n, "text": "y" * 2000})
        assert flatten_messages([_message(raw)]).startswith(f'assistant: [tool_call t {{"n":{n},"text":"yy')
        kept = sum(len(key) + len(value) for key, value in content._arguments_texts.items())
        assert kept <= content._ARGUMENTS_TEXTS_BUDGET + 2 * content._ARGUMENTS_TEXT_CHARS
    long = json.dumps({"text": "x" * (content._ARGUMENTS_TEXT_CHARS + 1)})
    assert flatten_messages([_message(long)]).endswith(f'{{"text":"{"x" * (content._ARGUMENTS_TEXT_CHARS + 1)}"}}]')
    assert long not in content._arguments_texts  # a long argument string is not kept


@given(text=st.text(max_size=300), mode=st.sampled_from(["preview", "digest"]))
def test_fmt31_summary_values_are_the_summary(text: str, mode: str) -> None:
    preview, chars, digest = summary_values(text, mode)
    assert digest == hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    assert chars == len(text)
    assert preview == (None if mode == "digest" else text[:200])
    expected = {"chars": chars, "sha256": digest} if preview is None else {"preview": preview, "chars": chars,
                                                                            "sha256": digest}
    assert summary(text, mode) == expected
    assert summary(text, "off") is None
