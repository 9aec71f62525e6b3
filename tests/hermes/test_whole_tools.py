"""The bridge keeps the tool schemas the depth limit cut whole, only when they match what Hermes sent (BOOK-31a;
spec 01 §8.2.3 rule 1 stays for every other payload object, OBS-51; OBS-58 scrubbing applies to the whole schema)."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.engine.sanitize import PASS1_MAX_ITEMS, PASS1_MAX_STR, PASS2_MAX_ITEMS, PASS2_MAX_STR, jsonable
from hermes_pipeline.hermes.payloads import full_request, whole_tools

REDACTED = re.compile(r"<redacted(:[0-9a-f]{4,})?>")
SECRET = "ghp_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2"


def _deep(leaf: Any, levels: int) -> Any:
    node = leaf
    for i in range(levels):
        node = {"type": "object", "properties": {f"p{i}": node}} if i % 2 else {"type": "array", "items": node}
    return node


def _tool(name: str, parameters: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": f"the {name} tool", "parameters": parameters}}


def _cut(tool: Any, pass2: bool = False) -> Any:
    """What Hermes' sanitizer leaves of ``tool`` inside its ``request`` (a tool sits at depth 3)."""
    caps = (PASS2_MAX_STR, PASS2_MAX_ITEMS) if pass2 else (PASS1_MAX_STR, PASS1_MAX_ITEMS)
    return jsonable(tool, max_str=caps[0], max_items=caps[1], depth=3)


leaves = st.one_of(st.sampled_from([{"type": "string", "enum": ["a", "b"]}, {"type": "integer"}, ["x", "y"]]),
                   st.text(max_size=20))


@settings(max_examples=80, deadline=None)
@given(leaf=leaves, levels=st.integers(0, 12), pass2=st.booleans())
def test_a_cut_schema_is_replaced_by_the_registry_one_when_it_cuts_alike(leaf: Any, levels: int, pass2: bool) -> None:
    """Any depth: the whole schema comes back (strings scrubbed), a schema that was not cut stays the same object."""
    whole = _tool("deep", _deep(leaf, levels))
    sent = _cut(whole, pass2)
    (out,) = whole_tools([sent], {"deep": whole}.get)
    assert out == whole if sent != whole else out is sent


def test_a_registry_schema_that_differs_from_what_was_sent_is_not_used() -> None:
    """A description rewritten after the registry (or any visible field) keeps Hermes' cut copy: no guessing."""
    whole = _tool("t", _deep({"enum": ["a"]}, 10))
    sent = _cut(whole)
    other = {**whole, "function": {**whole["function"], "description": "another text"}}
    assert whole_tools([sent], {"t": other}.get) == [sent]
    assert whole_tools([sent], {}.get) == [sent]

    def broken(name: str) -> object:
        raise RuntimeError("registry gone")

    assert whole_tools([sent], broken) == [sent]


def test_the_whole_schema_is_scrubbed() -> None:
    """OBS-58: a credential deep in a schema (an example value) is redacted in the kept schema too."""
    whole = _tool("t", _deep({"type": "string", "examples": [f"token {SECRET}"]}, 10))
    request = {"method": "POST", "body": {"model": "m", "tools": [_cut(whole)], "messages": []}}
    out = full_request(request, [{"role": "user", "content": "hi"}], "chat_completions", "m", {"t": whole}.get)
    text = repr(out)
    assert SECRET not in text and REDACTED.search(text) and "depth limit" not in text


def test_the_outcome_is_remembered_per_registry_generation() -> None:
    """The registry is asked once per distinct cut schema and generation (building a definition can read Hermes'
    config); a new generation asks again, so a re-registered schema is seen."""
    whole = _tool("memo", _deep({"enum": ["a"]}, 10))
    newer = _tool("memo", _deep({"enum": ["b"]}, 10))  # differs only below the cut
    sent = _cut(whole)
    asked: list[str] = []

    def definition(name: str) -> object:
        asked.append(name)
        return registry[name]

    registry = {"memo": whole}
    assert whole_tools([sent], definition, 1) == [whole]
    assert whole_tools([sent], definition, 1) == [whole]
    assert asked == ["memo"]
    registry["memo"] = newer
    assert whole_tools([sent], definition, 2) == [newer]
    assert asked == ["memo", "memo"]
