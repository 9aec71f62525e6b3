"""Issue #27 item 9: an ATOF file sink keeps tool schemas and system prompts once for every session of its
directory, in the ``definitions/`` sidecar (content-addressed, written atomically before the line that refers to
it); its lines carry only ``{"$ref": "sha256:…"}``; the reader gives back every request exactly as the sink
without a sidecar records it (FMT-25's history delta beside it; every line stays ATOF 0.1 valid, FMT-1); a
sidecar that cannot be written puts the definitions back into the line (nothing lost); a missing or damaged
sidecar file is a typed error naming the file and the line."""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline import Engine, Host
from hermes_pipeline.export import MemoryDestination
from hermes_pipeline.export.definitions import DEFINITIONS_KEY, is_ref
from hermes_pipeline.readers.definitions import DefinitionFileError, resolve_atof_requests
from hermes_pipeline.sinks.atof import build_atof_plugin

from tests.sinks.atof._support import VALIDATOR, decode
from hermes_pipeline.testing import chat_response

TOOLS = [{"type": "function", "function": {"name": f"tool_{n}", "description": "does a thing " * 40,
                                           "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}
         for n in range(5)]
PROMPT = "PROMPT-START " + "You are Hermes, a careful assistant. " * 20


def _record(directory: Path, sessions: list[list[dict[str, Any]]]) -> tuple[Path, list[dict[str, Any]]]:
    """Run ``sessions`` (each a list of request bodies) through one ATOF plugin with two file sinks: a real file
    in ``directory`` (with its sidecar) and an in-memory one (no sidecar: definitions in its lines). Returns the
    file and the in-memory sink's events."""
    memory = MemoryDestination()
    plugin = build_atof_plugin({"enabled": True, "sinks": [
        {"type": "file", "output_directory": str(directory), "filename": "events.jsonl"},
        {"type": "file", "output_directory": str(directory / "unused"), "filename": "memory.jsonl"}]},
        destinations={1: memory}, deferred=False)
    engine = Engine()
    engine.add_plugin(plugin, name="atof")
    host = Host(engine, model="m", provider="p")
    for requests in sessions:
        with host.session() as session:
            for n, request in enumerate(requests):
                with session.turn(f"q{n}") as turn:
                    turn.call_llm(request, lambda r: chat_response("ok"))
                    turn.complete("ok")
    assert plugin.flush(10.0) and plugin.shutdown(10.0)
    path = directory / "events.jsonl"
    assert not (directory / "unused").exists()  # the in-memory sink writes nothing, no sidecar either
    return path, decode(memory)


def _requests(events: list[dict[str, Any]], path: Path) -> list[Any]:
    """Every ``llm.call`` start's whole request: definitions resolved, the FMT-25 history delta rebuilt per
    session."""
    history: dict[Any, list[Any]] = {}
    out = []
    for event in resolve_atof_requests(events, path):
        if event["name"] != "llm.call" or event["scope_category"] != "start":
            continue
        request = event["data"]["request"]
        session = event["metadata"].get("hermes.session_id") or event.get("parent_uuid")
        offset = event["data"].get("messages_offset", 0)
        whole = history.get(session, [])[:offset] + request["body"]["messages"]
        history[session] = whole
        out.append({**request, "body": {**request["body"], "messages": whole}})
    return out


def _lines(path: Path) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for event in events:
        VALIDATOR.validate(event)
    return events


def test_the_file_sink_keeps_tools_and_prompt_once_for_every_session_of_its_directory(tmp_path: Path) -> None:
    sessions = [[{"messages": [{"role": "system", "content": PROMPT}, {"role": "user", "content": f"q{n}"}],
                  "tools": TOOLS} for n in range(3)] for _ in range(2)]
    path, memory = _record(tmp_path, sessions)
    events = _lines(path)
    starts = [e for e in events if e["name"] == "llm.call" and e["scope_category"] == "start"]
    assert len(starts) == 6 and not any(DEFINITIONS_KEY in s["data"] for s in starts)  # all in the sidecar
    assert all(is_ref(s["data"]["request"]["body"]["tools"]) for s in starts)
    sidecar = sorted((tmp_path / "definitions").iterdir())
    assert len(sidecar) == 2  # the tool list and the prompt, once for both sessions
    for file in sidecar:
        assert file.name == hashlib.sha256(file.read_bytes()).hexdigest() + ".json"  # checkable by its name
    assert b'"tool_4"' not in path.read_bytes() and b"PROMPT-START" not in path.read_bytes()
    written = b"".join(f.read_bytes() for f in sidecar)
    assert written.count(b'"tool_4"') == 1 and written.count(b"PROMPT-START") == 1
    assert _requests(events, path) == _requests(memory, path)  # what the sink without a sidecar recorded
    assert [r["body"]["tools"] for r in _requests(events, path)] == [TOOLS] * 6


texts = st.text(st.characters(codec="utf-8", categories=("L", "N", "P", "Zs")), max_size=400)
messages = st.lists(st.fixed_dictionaries({"role": st.sampled_from(["system", "developer", "user", "assistant"]),
                                           "content": st.one_of(texts, st.none())}), min_size=1, max_size=4)
tool_lists = st.lists(st.fixed_dictionaries({"type": st.just("function"), "function": st.fixed_dictionaries(
    {"name": st.text("abcdefgh_", min_size=1, max_size=12), "description": texts})}), max_size=4)
bodies = st.fixed_dictionaries({"messages": messages}, optional={"tools": tool_lists, "model": st.text("mx-1", max_size=6)})


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(bodies, min_size=1, max_size=3), min_size=1, max_size=3))
def test_generated_sessions_resolve_back_to_exactly_what_was_recorded(tmp_path: Path,
                                                                     sessions: list[list[dict[str, Any]]]) -> None:
    """Any sessions of any requests, in one directory: each line resolves, through the sidecar, to the request
    the same sink records without one; every sidecar file holds the value its name hashes."""
    directory = tmp_path / uuid.uuid4().hex
    path, memory = _record(directory, sessions)
    events = _lines(path)
    assert _requests(events, path) == _requests(memory, path)
    for file in (directory / "definitions").glob("*.json"):
        assert file.name == hashlib.sha256(file.read_bytes()).hexdigest() + ".json"


def test_a_sidecar_that_cannot_be_written_puts_the_definitions_in_the_line(tmp_path: Path) -> None:
    """The sidecar's place is taken by a file: the first start of each session defines its values in the line
    (``data.definitions``), as without a sidecar; nothing is lost."""
    (tmp_path / "definitions").write_text("not a directory")
    sessions = [[{"messages": [{"role": "system", "content": PROMPT}], "tools": TOOLS}] * 2]
    path, memory = _record(tmp_path, sessions)
    events = _lines(path)
    starts = [e for e in events if e["name"] == "llm.call" and e["scope_category"] == "start"]
    assert [len(s["data"].get(DEFINITIONS_KEY, {})) for s in starts] == [2, 0]
    assert _requests(events, path) == _requests(memory, path)


@pytest.mark.parametrize("fault", ["missing", "corrupt"])
def test_a_missing_or_damaged_sidecar_file_is_a_typed_error_naming_it(tmp_path: Path, fault: str) -> None:
    path, _ = _record(tmp_path, [[{"messages": [{"role": "system", "content": PROMPT}], "tools": TOOLS}]])
    events = _lines(path)
    tools = next(e for e in events if e["name"] == "llm.call")["data"]["request"]["body"]["tools"]["$ref"]
    target = tmp_path / "definitions" / f"{tools.removeprefix('sha256:')}.json"
    if fault == "missing":
        target.unlink()
    else:
        target.write_bytes(b'[{"name": "tampered"}]')
    with pytest.raises(DefinitionFileError) as caught:
        resolve_atof_requests(events, path)
    assert caught.value.path == str(target) and caught.value.field is not None
    assert caught.value.field.startswith("line ") and str(target) in str(caught.value)
    said = caught.value.reason.rsplit("): ", 1)[-1]  # after the file names
    assert caught.value.missing is (fault == "missing") and said.startswith("damaged" if fault == "corrupt" else "no such")
