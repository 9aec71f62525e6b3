"""A tool call's status from its result text (spec 01 OBS-38), without parsing every JSON result on the agent's thread.

``derive_status`` runs on the agent's thread for every tool call; Hermes' tools return JSON objects of kilobytes
(``{"content": ...}``, ``{"output": ..., "error": null}``). It now parses a result only when it may hold a truthy
top-level ``"error"``; the answer must stay exactly what parsing every JSON object gave.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline.host import tools
from hermes_pipeline.host.tools import derive_status


def reference(result: str) -> tuple[str, str | None, str | None]:
    """The rule as first written: parse every text that can be a JSON object."""
    if result.lstrip()[:1] == "{" and (result[:1] == "{" or result[:1].isspace()):
        try:
            parsed = json.loads(result)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("error"):
            return "error", "tool_error", tools.scrub_message(str(parsed["error"]))
    return "ok", None, None


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(["", "boom", "error", '"error": 1', "\\u0065"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["error", "output", "e", "x"]),
                                                               inner, max_size=3),
    max_leaves=8)
OBJECTS = st.dictionaries(st.sampled_from(["error", "output", "content", "exit_code", "status"]), VALUES, max_size=4)


@settings(max_examples=400, deadline=None)
@given(OBJECTS, st.sampled_from([{}, {"indent": 2}, {"separators": (",", ":")}, {"ensure_ascii": False}]),
       st.sampled_from(["", " ", "\n  "]), st.booleans())
def test_obs38_status_is_what_parsing_every_object_gives(value: dict[str, Any], options: dict[str, Any], lead: str,
                                                         escape: bool) -> None:
    text = lead + json.dumps(value, **options)
    if escape:  # the key spelled with escapes: still the key "error"
        text = text.replace('"error"', '"\\u0065rr\\u006fr"')
    assert derive_status(text) == reference(text)


@pytest.mark.parametrize("text", [
    '{"output": "x", "exit_code": 0, "error": null}', '{"content": "1|error: none"}', '{"error": ""}',
    '{"error": false }', '{"error": "denied"}', '{"error": {"code": 1}}', '{"\\u0065rror": "x"}', '{"error": 0}',
    '{"error": []}', '{"a": {"error": "inner"}, "error": null}', '{"error": null, "error": "last wins"}',
    "not json", "{broken", '  {"error": "lead"}'])
def test_obs38_examples(text: str) -> None:
    assert derive_status(text) == reference(text)


def test_a_large_result_without_an_error_key_is_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 7 KB file read (Hermes' ``read_file`` shape) is judged without ``json.loads`` on the agent's thread."""
    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("parsed")

    monkeypatch.setattr(tools.json, "loads", forbidden)
    text = json.dumps({"content": "1|line\n" * 1000, "total_lines": 1000, "truncated": False})
    assert derive_status(text) == ("ok", None, None)
    assert derive_status(json.dumps({"output": "ok\n" * 500, "exit_code": 0, "error": None})) == ("ok", None, None)
