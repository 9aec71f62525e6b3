"""Issue #27 item 9: tool schemas and system prompts written once per session, referenced by hash in each
LLM request (``hermes_pipeline/export/definitions.py``), in the ATOF file sink; readers get the request
back exactly (FMT-25 keeps working beside it; every line stays ATOF 0.1 valid)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hermes_pipeline import Engine, Host
from hermes_pipeline.export import MemoryDestination
from hermes_pipeline.export.definitions import (DEFINITIONS_KEY, MEMO_ENTRIES, MIN_BYTES, digest, is_ref, resolve,
                                                resolve_request, shrink_request)
from hermes_pipeline.export.jsonenc import canonical
from hermes_pipeline.sinks.atof import build_atof_plugin

from tests.sinks.atof._support import collect
from hermes_pipeline.testing import chat_response

TOOLS = [{"type": "function", "function": {"name": f"tool_{n}", "description": "does a thing " * 40,
                                           "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}
         for n in range(5)]
PROMPT = "PROMPT-START " + "You are Hermes, a careful assistant. " * 20

texts = st.text(max_size=600)
messages = st.lists(st.fixed_dictionaries({"role": st.sampled_from(["system", "developer", "user", "assistant"]),
                                           "content": st.one_of(texts, st.none())}), max_size=5)
tool_lists = st.lists(st.fixed_dictionaries({"name": st.text(max_size=20), "description": texts}), max_size=4)
bodies = st.fixed_dictionaries({"messages": messages}, optional={"tools": tool_lists, "system": texts,
                                                                  "instructions": texts, "model": st.text(max_size=9)})


@given(st.lists(bodies, min_size=1, max_size=4))
def test_shrunk_requests_resolve_to_what_was_sent_and_each_value_is_defined_once(requests: list[dict[str, Any]]) -> None:
    """Any sequence of requests of one session: each resolves, with the definitions written so far, to the
    request as sent; every value is defined once, under the hash of its canonical JSON; small values stay inline."""
    known: set[str] = set()
    definitions: dict[str, Any] = {}
    for body in requests:
        request = {"method": "POST", "body": body}
        new: dict[str, Any] = {}
        shrunk = shrink_request(request, known, new)
        assert not set(new) & set(definitions)  # never defined twice
        definitions.update(new)
        assert all(digest(value) == ref for ref, value in new.items())
        assert resolve_request(shrunk, definitions) == request == resolve(shrunk, definitions)
        tools = shrunk["body"].get("tools")
        if tools is not None and is_ref(tools):
            assert len(digest(body["tools"])) and tools["$ref"] in definitions


def test_atof_lines_define_the_tools_and_prompt_once_per_session(engine: Engine) -> None:
    """Three LLM calls in each of two sessions: the first start of a session defines the tool list and the
    system prompt (``data.definitions``), the later ones carry only ``{"$ref": ...}``; each start resolves
    to its request (schema-valid lines, FMT-25 offsets unchanged)."""
    dest = MemoryDestination()
    plugin = build_atof_plugin({"enabled": True, "llm_history": "full", "sinks": [{"type": "file"}]},
                               destinations={0: dest}, deferred=False)
    engine.add_plugin(plugin, name="atof")
    host = Host(engine, model="m", provider="p")
    sent = []
    for _ in range(2):
        with host.session() as session:
            for n in range(3):
                request = {"messages": [{"role": "system", "content": PROMPT}, {"role": "user", "content": f"q{n}"}],
                           "tools": TOOLS}
                sent.append(request)
                with session.turn(f"q{n}") as turn:
                    turn.call_llm(request, lambda r: chat_response("ok"))
                    turn.complete("ok")
    lines = collect(plugin, dest)
    starts = [e for e in lines if e["name"] == "llm.call" and e["scope_category"] == "start"]
    assert len(starts) == 6
    defined = [sorted(s["data"].get(DEFINITIONS_KEY, {})) for s in starts]
    assert [len(d) for d in defined] == [2, 0, 0, 2, 0, 0]  # tools + prompt, once per session
    definitions: dict[str, Any] = {}
    for start, request in zip(starts, sent, strict=True):
        definitions.update(start["data"].get(DEFINITIONS_KEY, {}))
        body = start["data"]["request"]["body"]
        assert is_ref(body["tools"]) and is_ref(body["messages"][0]["content"])
        resolved = resolve_request(start["data"]["request"], definitions)["body"]
        assert resolved["tools"] == request["tools"] and resolved["messages"] == request["messages"]
    assert len(PROMPT) >= MIN_BYTES
    written = b"".join(dest.items)
    assert written.count(b'"tool_4"') == 2 and written.count(b"PROMPT-START") == 2  # once per session


schemas = st.lists(st.fixed_dictionaries({"name": st.text(max_size=12), "description": st.text(min_size=40, max_size=300)}),
                   min_size=1, max_size=6)


@given(schemas, st.lists(st.lists(st.integers(0, 5), max_size=6), min_size=1, max_size=12))
def test_a_remembered_reference_is_the_hash_of_what_is_sent_now(pool: list[dict[str, Any]],
                                                                 picks: list[list[int]]) -> None:
    """The references are remembered by the identity of the tool schemas (each request's list is new, its
    schemas the same objects): any list made of those objects, in any order, gets the hash of its own
    canonical JSON, the same as computed afresh (``digest``), also for lists that are dropped at once (an id
    must never be taken by a list of other content) and for equal copies."""
    for pick in picks:
        for tools in ([pool[i % len(pool)] for i in pick], [dict(pool[i % len(pool)]) for i in pick]):
            shrunk = shrink_request({"body": {"tools": tools}}, set(), {})
            expected = {"$ref": digest(tools)} if len(canonical(tools)) >= MIN_BYTES else tools
            assert shrunk["body"]["tools"] == expected


def test_more_values_than_the_memo_holds_keep_their_own_references() -> None:
    """Past :data:`MEMO_ENTRIES` distinct values the memo starts again; every reference stays the value's own."""
    for n in range(MEMO_ENTRIES * 2 + 5):
        prompt = f"{n} " + "You are Hermes. " * 20
        tools = [{"name": f"tool_{n}", "description": "x" * 300}]
        shrunk = shrink_request({"body": {"system": prompt, "tools": tools}}, set(), {})
        assert shrunk["body"] == {"system": {"$ref": digest(prompt)}, "tools": {"$ref": digest(tools)}}


def test_the_memo_holds_at_most_its_character_budget() -> None:
    """Issue #29 (flat RSS): the memo keeps its values alive, so it is bounded by the characters of their canonical
    JSON, not only by entries: large tool lists that are no longer used do not pile up; references stay right."""
    from hermes_pipeline.export import definitions

    for n in range(40):
        tools = [{"name": f"tool_{n}_{k}", "description": "y" * 2000} for k in range(30)]  # ~60 KB each
        shrunk = shrink_request({"body": {"tools": tools}}, set(), {})
        assert shrunk["body"] == {"tools": {"$ref": digest(tools)}}
        held = sum(len(canonical(list(v[0])) if isinstance(v[0], tuple) else canonical(v[0]))
                   for v in definitions._memo.values())
        assert held <= definitions.MEMO_CHARS
    assert len(definitions._memo) < 40
