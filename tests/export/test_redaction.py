"""The exporters' credential redaction of scope events (spec 04 FMT-33a; spec 06 BOOK-12, BOOK-15).

FMT-33a: before any sink sees an event, one scrubber is applied to every content field, the legacy raw ones
included, and the same string is scrubbed the same way wherever it appears.
"""

from __future__ import annotations

import copy
import json
import string
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_pipeline import Engine, Host
from hermes_pipeline.engine.sanitize import sanitize
import hermes_pipeline.engine.scrub as sc
from hermes_pipeline.engine.scrub import REDACTED, scrub_text
from hermes_pipeline.export.atof_object import atof_object
from hermes_pipeline.export.redaction import MAX_DEPTH, redact_event as _redact_event, redact_value as _redact_value
from hermes_pipeline.testing import unmark

from hermes_pipeline.export import ScopeEvent, ScopePlugin
from hermes_pipeline.sinks.atif import build_atif_plugin
from hermes_pipeline.sinks.atof import build_atof_plugin

from hermes_pipeline.testing import chat_response


def _unmarked(fn: Any) -> Any:
    """The function with its result's ``<redacted:xxxxxxxx>`` markers written ``<redacted>`` (these tests check
    where redactions are, not which secret each one hides: tests/engine/test_scrub_precision.py does)."""
    return lambda *args, **kwargs: unmark(fn(*args, **kwargs))


scrub_text = _unmarked(scrub_text)
redact_value = _unmarked(_redact_value)


def redact_event(event: Any) -> Any:
    """:func:`redact_event` with its changed fields' markers written ``<redacted>``; an unchanged event is
    returned as it is (identity matters to these tests)."""
    out = _redact_event(event)
    if out is event:
        return out
    out.data, out.profile, out.metadata = unmark(out.data), unmark(out.profile), unmark(out.metadata)
    return out


SECRET = "ZQ3N6B9V2C5X8Z1L4K7J0H"

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
              # free text never holds the bare SECRET: hypothesis draws the test module's own string constants,
              # and a bare token is no credential (only its planted forms below must never survive)
              st.text(max_size=40).filter(lambda text: SECRET not in text),
              st.sampled_from([f"sk-proj-{SECRET}", f"password: {SECRET}", "notes.txt"])),
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.tuples(inner, inner),
                            st.dictionaries(st.sampled_from(["path", "password", "input_tokens", "pwd", "cmd", "x"]),
                                            inner, max_size=5)),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(value=json_values)
def test_property_fmt33a_redact_value_scrubs_never_mutates_and_matches_the_sanitizer(value: Any) -> None:
    """FMT-33a: the planted secrets never survive; the input is not changed; an unchanged value is returned as
    the same object; and the result agrees with the payload sanitizer on plain JSON (one scrubber, one result)."""
    before = copy.deepcopy(value)
    out = redact_value(value)
    assert value == before  # not mutated
    assert SECRET not in json.dumps(out)
    if json.dumps(out) == json.dumps(value):
        assert out is value or isinstance(value, (int, float, bool)) or value is None or isinstance(value, str)
    plain = json.loads(json.dumps(value))  # tuples as lists, as an encoder would see them
    assert json.loads(json.dumps(_redact_value(plain))) == sanitize(plain)  # the same markers too


def test_fmt33a_redact_value_cycles_depth_and_objects() -> None:
    """Cycles and very deep nesting end in the depth marker instead of recursing forever; values that are not
    JSON types are rendered by the sanitizer (bounded, scrubbed) as the encoders would."""
    loop: list[Any] = []
    loop.append(loop)
    assert redact_value(loop) == ["<list depth limit>"]
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    out = redact_value(deep)
    for _ in range(MAX_DEPTH):
        out = out[0]
    assert out == "<list depth limit>"

    class Token:  # no __dict__: the sanitizer renders it with str()
        __slots__ = ()

        def __str__(self) -> str:
            return f"Bearer {SECRET}"

    assert redact_value({"value": Token(), "n": {1, 2}}) == {"value": f"Bearer {REDACTED}", "n": [1, 2]}


def test_fmt33a_unchanged_event_is_shared_and_changed_event_is_a_copy() -> None:
    """Events are immutable and shared: redaction returns the same event when nothing matched, and a new event
    (the original left intact) when something did."""
    clean = ScopeEvent("scope", "start", 1, None, 10, "read_file", "tool", (), {"tool_call_id": "c1"},
                       {"arguments": {"path": "notes.txt"}}, {"hermes.session_id": "s"}, 1, 1)
    assert redact_event(clean) is clean
    data = {"arguments": {"cmd": f"export OPENAI_API_KEY={SECRET}", "pwd": SECRET}}
    dirty = ScopeEvent("scope", "start", 2, None, 10, "terminal", "tool", (), None, data, {"m": "x"}, 1, 1)
    out = redact_event(dirty)
    assert out is not dirty and out.data == {"arguments": {"cmd": f"export OPENAI_API_KEY={REDACTED}",
                                                           "pwd": REDACTED}}
    assert dirty.data["arguments"]["pwd"] == SECRET and out.metadata is dirty.metadata


def test_fmt33a_scope_plugin_redacts_for_every_listener_and_can_be_switched_off() -> None:
    """The one choke point: every listener of a scope plugin gets the scrubbed event; ``redact_credentials=False``
    hands them the content as the hooks gave it."""
    for redact in (True, False):
        engine = Engine()
        seen: list[ScopeEvent] = []
        scope_plugin = ScopePlugin((seen.append, seen.append), redact_credentials=redact)
        engine.add_plugin(scope_plugin, name="scope_plugin")
        host = Host(engine, platform="cli", model="m")
        with host.session() as session, session.turn(f"my key is sk-proj-{SECRET}") as turn:
            turn.call_tool("terminal", {"cmd": f"mysql -u root -p{SECRET}"}, lambda cmd: "ok", tool_call_id="c1")
            turn.complete("done")
        text = json.dumps([atof_object(e) for e in seen])
        assert (SECRET in text) is (not redact)
        assert len(seen) % 2 == 0 and seen[0] is seen[1]  # both listeners got the same (scrubbed) object


def test_fmt33a_same_string_same_result_in_atof_and_atif(tmp_path: Path) -> None:
    """FMT-33a: the user message is scrubbed the same way in ``agent.run`` data, in the ``llm.call`` request and
    in the ATIF user step; a tool result the same way in ATOF and in the ATIF observation (it was raw in the
    first and the last, redacted only inside the request)."""
    engine = Engine()
    atof = build_atof_plugin({"enabled": True, "sinks": [{"type": "file", "output_directory": str(tmp_path),
                                                          "filename": "events.jsonl"}]})
    atif = build_atif_plugin({"enabled": True, "output_directory": str(tmp_path)})
    engine.add_plugin(atof, name="atof")
    engine.add_plugin(atif, name="atif")
    message = f"Deploy. My key is sk-proj-{SECRET} and password: {SECRET}"
    result = f"done; AWS key AKIA{SECRET[:16]} in use"
    host = Host(engine, platform="cli", model="m", provider="openai", api_mode="chat_completions")
    call = {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": '{"cmd": "ls"}'}}
    with host.session() as session, session.turn(message) as turn:
        turn.call_llm({"model": "m", "messages": [{"role": "user", "content": message}]},
                      lambda r: chat_response(None, [call]))
        turn.call_tool("terminal", {"cmd": "ls"}, lambda cmd: result, tool_call_id="c1")
        turn.complete("ok")
    assert atof.shutdown(5.0) and atif.shutdown(5.0)
    expected = sc.scrub_text(message)  # with its markers: the same secret gets the same marker in both files
    assert SECRET not in expected
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    [run] = [e for e in events if e["name"] == "agent.run" and e.get("scope_category") == "start"]
    [llm] = [e for e in events if e["name"] == "llm.call" and e.get("scope_category") == "start"]
    [tool_end] = [e for e in events if e["name"] == "terminal" and e.get("scope_category") == "end"]
    assert run["data"]["user_message"] == expected
    assert llm["data"]["request"]["body"]["messages"][0]["content"] == expected
    assert tool_end["data"]["result"] == sc.scrub_text(result) != result
    [trajectory] = list(tmp_path.glob("hermes-atif-*.json"))
    text = trajectory.read_text()
    assert SECRET not in text and SECRET[:16] not in text
    doc = json.loads(text)
    user_steps = [s for s in doc["steps"] if s.get("source") == "user"]
    assert user_steps and user_steps[0]["message"] == expected
    assert sc.scrub_text(result) in text


@settings(max_examples=50, deadline=None)
@given(secret=st.text(alphabet=string.ascii_uppercase + string.digits, min_size=20, max_size=30))
def test_property_fmt33a_idempotent_on_exported_strings(secret: str) -> None:
    """Scrubbing what was already scrubbed changes nothing (the engine's ``request`` is scrubbed once at
    dispatch and again at the scope plugin: the same result)."""
    for form in (f"sk-proj-{secret}", f"password: {secret}", f"--password {secret}", f'{{"pwd": "{secret}"}}'):
        once = scrub_text(f"use {form} now")
        assert scrub_text(once) == once
        assert redact_value({"x": once}) == {"x": once}


def test_fmt33a_cached_key_classes_still_redact_every_time() -> None:
    """The walk caches how a key is classified (plain, or plural-token); a cached key is judged the same way on
    every later event: a ``*_tokens`` value that is not ``None`` / ``int`` / ``float`` (a ``bool`` included) is
    redacted every time, a sensitive key is never cached as plain, and a clean string value is still scrubbed
    when it is a new credential."""
    for _ in range(3):  # the first round fills the caches, the later ones use them
        out = redact_value({"usage": {"input_tokens": 12, "cache_tokens": None, "output_tokens": 1.5,
                                      "auth_tokens": SECRET, "refresh_tokens": True, "more_tokens": [SECRET]},
                            "api_key": SECRET, "path": f"sk-proj-{SECRET}", "nested": [{"password": SECRET}]})
        assert out == {"usage": {"input_tokens": 12, "cache_tokens": None, "output_tokens": 1.5,
                                 "auth_tokens": REDACTED, "refresh_tokens": REDACTED, "more_tokens": REDACTED},
                       "api_key": REDACTED, "path": REDACTED, "nested": [{"password": REDACTED}]}


def test_fmt33a_cycles_found_below_containers_of_plain_values() -> None:
    """A container enters the cycle check only once it has a child container; cycles are still cut at the
    repeated container, whatever came before it, and shared (acyclic) containers are walked each time."""
    shared = {"path": "notes.txt", "n": 1}
    node: dict[str, Any] = {"a": "x", "b": 2, "leaf": ["y", 3], "shared": [shared, shared]}
    node["inner"] = {"c": "z", "back": node, "list": [1, node]}
    assert redact_value(node) == {"a": "x", "b": 2, "leaf": ["y", 3], "shared": [shared, shared],
                                  "inner": {"c": "z", "back": "<dict depth limit>", "list": [1, "<dict depth limit>"]}}
