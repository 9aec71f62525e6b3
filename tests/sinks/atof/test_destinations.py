"""ATOF sinks: configuration (§2.16), JSONL files (§2.14), HTTP streams (§2.15) and failure handling (§5)."""

from __future__ import annotations

import errno
import json
import logging
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline import Engine, HermesPipelineError, Host
from hermes_pipeline.export import ExportConfigError, FailingDestination, MemoryDestination
from hermes_pipeline.export.files import prune_files, filename_pattern
from hermes_pipeline.sinks.atof import build_atof_plugin, build_atof_sink, replace_dots

from hermes_pipeline.testing import closed_port
from tests.sinks.atof._support import VALIDATOR, Receiver, decode, stuck_scope_plugin

SECRET = "s3cr3t-token-value-9f8e7d"


def run_session(engine: Engine, tools: int = 2) -> None:
    host = Host(engine, model="m", provider="p")
    with host.session() as session, session.turn("hello") as turn:
        for i in range(tools):
            turn.call_tool("read_file", {"path": f"{i}.txt"}, lambda path: "text", tool_call_id=f"c{i}")
        turn.complete("done")


def file_plugin(engine: Engine, directory: Path, **sink: Any) -> Any:
    plugin = build_atof_plugin({"enabled": True, "sinks": [{"type": "file", "output_directory": str(directory),
                                                            "filename": "events.jsonl", **sink}]})
    engine.add_plugin(plugin, name="atof")
    return plugin


def read_lines(path: Path) -> list[dict[str, Any]]:
    raw = path.read_bytes()
    assert raw.endswith(b"\n") and not raw.startswith(b"\xef\xbb\xbf")
    events = [json.loads(line) for line in raw.decode("utf-8").splitlines()]
    for event in events:
        VALIDATOR.validate(event)
    return events


# ---------------------------------------------------------------------------------- configuration


@pytest.mark.parametrize(("config", "path"), [
    ({"enabled": True, "output_directory": "x"}, "atof.output_directory"),
    ({"enabled": True, "endpoints": []}, "atof.endpoints"),
    ({"enabled": True, "sinks": []}, "atof.sinks"),
    ({"enabled": "yes"}, "atof.enabled"),
    ({"llm_history": "some"}, "atof.llm_history"),
    ({"colour": "blue"}, "atof.colour"),
    ({"enabled": True, "sinks": [{"type": "disk"}]}, "atof.sinks[0].type"),
    ({"enabled": True, "sinks": [{"type": "file", "mode": "truncate"}]}, "atof.sinks[0].mode"),
    ({"enabled": True, "sinks": [{"type": "file", "max_queue_size": 0}]}, "atof.sinks[0].max_queue_size"),
    ({"enabled": True, "sinks": [{"type": "file", "retention_days": True}]}, "atof.sinks[0].retention_days"),
    ({"enabled": True, "sinks": [{"type": "file", "filename": "../x.jsonl"}]}, "atof.sinks[0].filename"),
    ({"enabled": True, "sinks": [{"type": "file", "url": "http://x"}]}, "atof.sinks[0].url"),
    ({"enabled": True, "sinks": [{"type": "stream"}]}, "atof.sinks[0].url"),
    ({"enabled": True, "sinks": [{"type": "stream", "url": "ftp://h/x"}]}, "atof.sinks[0].url"),
    ({"enabled": True, "sinks": [{"type": "stream", "url": "http://h", "transport": "websocket"}]},
     "atof.sinks[0].transport"),
    ({"enabled": True, "sinks": [{"type": "stream", "url": "http://h", "timeout_millis": 0}]},
     "atof.sinks[0].timeout_millis"),
    ({"enabled": True, "sinks": [{"type": "stream", "url": "http://h", "name": " x "}]}, "atof.sinks[0].name"),
    ({"enabled": True, "sinks": [{"type": "stream", "url": "http://h", "name": "a"},
                                 {"type": "stream", "url": "http://h", "name": "a"}]}, "atof.sinks[1].name"),
])
def test_fmt_2_16_config_errors_name_the_key(config: dict[str, Any], path: str) -> None:
    """§2.16 / spec 03 §7.2: invalid atof tables raise ExportConfigError naming the key path."""
    with pytest.raises(ExportConfigError) as info:
        build_atof_sink(config)
    assert info.value.path == path and str(info.value).startswith(path)
    assert isinstance(info.value, HermesPipelineError)


def test_fmt_2_16_removed_keys_name_the_sinks_replacement() -> None:
    """§2.16: version-1 flat keys are rejected with a message naming the sinks form."""
    with pytest.raises(ExportConfigError, match=r"sinks"):
        build_atof_sink({"enabled": True, "filename": "x.jsonl", "sinks": [{"type": "file"}]})


def test_fmt_41_header_env_rules(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """FMT-41 / FMT-73: unset header_env or a header in both tables; skip mode skips only that entry."""
    monkeypatch.delenv("ATOF_TEST_TOKEN", raising=False)
    stream = {"type": "stream", "url": "http://127.0.0.1:9/x", "header_env": {"Authorization": "ATOF_TEST_TOKEN"}}
    with pytest.raises(ExportConfigError) as info:
        build_atof_sink({"enabled": True, "sinks": [stream]})
    assert info.value.path == "atof.sinks[0].header_env" and "ATOF_TEST_TOKEN" in str(info.value)
    both = {**stream, "headers": {"authorization": "x"}}
    monkeypatch.setenv("ATOF_TEST_TOKEN", SECRET)
    with pytest.raises(ExportConfigError, match="both"):
        build_atof_sink({"enabled": True, "sinks": [both]})
    with caplog.at_level(logging.WARNING):
        sink = build_atof_sink({"enabled": True, "sinks": [both, {"type": "file", "output_directory": "/tmp"}]},
                               on_invalid="skip")
    assert [path for path, _ in sink.skipped] == ["atof.sinks[0].header_env"]
    assert len(sink.destinations()) == 1 and sink.destinations()[0].startswith("atof.sinks[1]: file ")
    assert SECRET not in caplog.text
    sink.shutdown(1.0)


def test_disabled_section_exports_nothing() -> None:
    """enabled = false (default): the plugin is disabled and has no destinations."""
    plugin = build_atof_plugin({"sinks": [{"type": "file"}]})
    assert plugin.enabled is False and plugin.destinations() == []
    assert plugin.flush(0.1) and plugin.shutdown(0.1)


def test_cfg_83_relative_directory_resolves_against_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CFG-83: a relative output_directory is resolved against the working directory at activation."""
    monkeypatch.chdir(tmp_path)
    sink = build_atof_sink({"enabled": True, "sinks": [{"type": "file", "output_directory": "telemetry",
                                                        "filename": "e.jsonl"}]})
    assert sink.destinations() == [f"atof.sinks[0]: file {tmp_path / 'telemetry' / 'e.jsonl'}"]
    sink.shutdown(1.0)
    other = tmp_path / "base"
    sink = build_atof_sink({"enabled": True, "sinks": [{"type": "file", "output_directory": "t"}]}, base_dir=other)
    [line] = sink.destinations()
    assert line.startswith(f"atof.sinks[0]: file {other / 't'}/hermes-events-") and line.endswith("Z.jsonl")
    sink.shutdown(1.0)


# ---------------------------------------------------------------------------------- file sink


def test_fmt_34_35_36_file_sink_append_and_overwrite(engine: Engine, tmp_path: Path) -> None:
    """FMT-34 / FMT-35 / FMT-36: one JSON object per line; append keeps, overwrite truncates; 0600 / 0700."""
    directory = tmp_path / "out" / "atof"
    plugin = file_plugin(engine, directory)
    run_session(engine)
    plugin.shutdown(5.0)
    path = directory / "events.jsonl"
    first = read_lines(path)
    assert len(first) == 8
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(directory.stat().st_mode) == 0o700
    engine2 = Engine()
    plugin = file_plugin(engine2, directory, mode="append")
    run_session(engine2, tools=1)
    plugin.shutdown(5.0)
    assert len(read_lines(path)) == 8 + 6
    engine3 = Engine()
    plugin = file_plugin(engine3, directory, mode="overwrite")
    assert plugin.flush(5.0)
    assert path.read_bytes() == b""  # truncated at activation
    run_session(engine3, tools=0)
    plugin.shutdown(5.0)
    assert [e["name"] for e in read_lines(path)] == ["hermes.session", "agent.run", "agent.run", "hermes.session"]


def test_fmt_35_date_placeholder_and_fmt_87a_retention(tmp_path: Path) -> None:
    """FMT-35 {date} file names; FMT-87a retention deletes only this sink's old files, never the open one."""
    engine = Engine()
    plugin = file_plugin(engine, tmp_path, filename="events-{date}.jsonl", retention_days=1)
    run_session(engine, tools=0)
    assert plugin.flush(5.0)
    [current] = list(tmp_path.glob("events-*.jsonl"))
    old = tmp_path / "events-2001-01-01.jsonl"
    unrelated = tmp_path / "notes-2001-01-01.jsonl"
    for path in (old, unrelated):
        path.write_text("x")
        os.utime(path, (0, 0))
    os.utime(current, (0, 0))
    assert prune_files(tmp_path, filename_pattern("events-{date}.jsonl"), 1, keep=current) == 1
    assert not old.exists() and unrelated.exists() and current.exists()
    plugin.shutdown(5.0)


def test_fmt_37_unwritable_directory_is_counted_and_agent_unaffected(engine: Engine, tmp_path: Path,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    """FMT-37 / FMT-83: a write error is counted (atof.file_errors), warned once, and never reaches the agent."""
    if os.geteuid() == 0:
        blocker = tmp_path / "not-a-directory"
        blocker.write_text("")
        directory = blocker / "sub"  # mkdir fails even for root
    else:
        directory = tmp_path / "ro"
        directory.mkdir()
        directory.chmod(0o500)
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.export"):
        plugin = file_plugin(engine, directory)
        run_session(engine)
        run_session(engine)
        assert plugin.flush(5.0)
    counters = plugin.counters()
    assert counters["atof.file_errors[0]"] >= 1 and counters["atof.file.events_dropped[0]"] == 16
    warnings = [r.getMessage() for r in caplog.records if "atof.sinks[0]" in r.getMessage()]
    assert 1 <= len(warnings) <= 2 and str(tmp_path) not in caplog.text  # open + write kinds at most
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.sinks.atof"):
        plugin.shutdown(1.0)
        plugin.shutdown(1.0)
    [summary] = [r.getMessage() for r in caplog.records  # FMT-82: logged once at shutdown when non-zero
                 if r.name == "hermes_pipeline.sinks.atof"]
    assert "atof.file.events_dropped[0]=16" in summary and str(tmp_path) not in summary


def test_fmt_37_disk_full_rolls_back_and_counts(engine: Engine) -> None:
    """FMT-37: ENOSPC from the destination drops that batch (counted); later batches still go out."""
    def enospc() -> OSError:
        return OSError(errno.ENOSPC, "No space left on device")

    failing = FailingDestination(enospc, failures=1)
    plugin = build_atof_plugin({"enabled": True, "sinks": [{"type": "file"}]}, destinations={0: failing})
    engine.add_plugin(plugin, name="atof")
    run_session(engine, tools=0)
    assert plugin.flush(5.0)
    run_session(engine, tools=0)
    assert plugin.flush(5.0)
    stats = plugin.stats()["sinks"][0]
    assert stats["errors"] == 1 and stats["retries"] == 0 and stats["dropped_after_errors"] >= 1
    assert stats["written"] + stats["dropped_after_errors"] == stats["submitted"] == 8
    assert decode(failing.inner)[-1]["name"] == "hermes.session"
    plugin.shutdown(1.0)


# ---------------------------------------------------------------------------------- stream sinks


def test_fmt_38_41_http_post_ndjson_with_header_env(engine: Engine, monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    """FMT-38: one POST per event, application/x-ndjson, one JSONL record; FMT-41: header_env resolved, never logged."""
    monkeypatch.setenv("ATOF_TEST_TOKEN", f"Bearer {SECRET}")
    with Receiver() as receiver, caplog.at_level(logging.DEBUG):
        plugin = build_atof_plugin({"enabled": True, "sinks": [{
            "type": "stream", "name": "collector", "url": receiver.url + "?tenant=7",
            "headers": {"X-Static": "yes"}, "header_env": {"Authorization": "ATOF_TEST_TOKEN"}}]},
            enable_full_payloads=True)
        engine.add_plugin(plugin, name="atof")
        run_session(engine)
        assert plugin.flush(5.0)
        plugin.shutdown(5.0)
        assert len(receiver.requests) == 8
        for headers, body in receiver.requests:
            assert headers["content-type"] == "application/x-ndjson"
            assert headers["authorization"] == f"Bearer {SECRET}" and headers["x-static"] == "yes"
            assert body.endswith(b"\n") and body.count(b"\n") == 1
        events = receiver.lines()
        for event in events:
            VALIDATOR.validate(event)
        assert [e["name"] for e in events][0] == "hermes.session"
        assert events[2]["data"] == {"arguments": {"path": "0.txt"}}  # gate open with enable_full_payloads
    assert SECRET not in caplog.text
    assert plugin.destinations() == [f"atof.sinks[0] (collector): http_post {receiver.url}"]  # no query


def test_fmt_30_stream_gate_closed_by_default_and_fmt_39_replace_dots(engine: Engine) -> None:
    """FMT-30: stream sinks summarise content unless enable_full_payloads; FMT-39 replace_dots on keys."""
    with Receiver() as receiver:
        plugin = build_atof_plugin({"enabled": True, "sinks": [{
            "type": "stream", "url": receiver.url, "field_name_policy": "replace_dots"}]})
        engine.add_plugin(plugin, name="atof")
        run_session(engine, tools=1)
        plugin.shutdown(5.0)
        events = receiver.lines()
    tool = events[2]
    assert set(tool["data"]["arguments"]) == {"preview", "chars", "sha256"}
    assert "hermes_session_id" in tool["metadata"] and "hermes.session_id" not in tool["metadata"]
    assert replace_dots({"a.b": 1, "a_b": 2, "x": [{"c.d": 3}]}) == {"a_b": 1, "a_b_2": 2, "x": [{"c_d": 3}]}


def test_fmt_38_ndjson_transport_streams_lines(engine: Engine) -> None:
    """FMT-38: transport = "ndjson" sends records as lines of one chunked upload."""
    with Receiver() as receiver:
        plugin = build_atof_plugin({"enabled": True, "sinks": [{"type": "stream", "url": receiver.url,
                                                                "transport": "ndjson"}]}, enable_full_payloads=True)
        engine.add_plugin(plugin, name="atof")
        run_session(engine)
        assert plugin.flush(5.0)
        assert receiver.received.wait(5.0)
        plugin.shutdown(5.0)
        names = [e["name"] for e in receiver.lines()]
    assert names[0] == "hermes.session" and names[-1] == "hermes.session" and len(names) == 8


def test_fmt_83_connection_refused_counted_warned_once_agent_unaffected(engine: Engine,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    """FMT-83: connection refused is retried (bounded), then dropped and counted; the agent never notices."""
    with closed_port() as port, caplog.at_level(logging.WARNING, logger="hermes_pipeline.export"):
        plugin = build_atof_plugin({"enabled": True, "sinks": [{"type": "stream", "name": "down",
                                                                "url": f"http://127.0.0.1:{port}/x",
                                                                "timeout_millis": 200}]})
        engine.add_plugin(plugin, name="atof")
        run_session(engine)
        plugin.flush(10.0)
        plugin.shutdown(1.0)
    stats = plugin.stats()["sinks"][0]  # timeout_millis bounds flush and close: late work is counted
    assert stats["written"] == 0 and stats["retries"] >= 1
    assert stats["dropped_after_errors"] + stats["dropped_at_close"] == 8
    assert plugin.counters()["atof.stream.events_dropped[down]"] == 8
    retried = [r for r in caplog.records if "retrying" in r.getMessage()]
    assert len(retried) == 1 and "ConnectionRefusedError" in retried[0].getMessage()
    assert str(port) not in caplog.text


def test_fmt_83_5xx_then_success(engine: Engine) -> None:
    """FMT-83: 503 responses are retried with backoff and then delivered."""
    with Receiver(statuses=[503, 502]) as receiver:
        plugin = build_atof_plugin({"enabled": True, "sinks": [{"type": "stream", "url": receiver.url}]},
                                   enable_full_payloads=True)
        engine.add_plugin(plugin, name="atof")
        run_session(engine, tools=0)
        assert plugin.flush(10.0)
        plugin.shutdown(5.0)
        assert len(receiver.lines()) == 4
    stats = plugin.stats()["sinks"][0]
    assert (stats["errors"], stats["retries"], stats["written"]) == (2, 2, 4)


def test_fmt_40_failing_stream_does_not_block_file_sink(engine: Engine, tmp_path: Path) -> None:
    """FMT-40 / FMT-81: each sink has its own worker; a stuck stream never delays the file sink."""
    gate = threading.Event()
    stuck = MemoryDestination(gate=gate)
    plugin = build_atof_plugin({"enabled": True, "sinks": [
        {"type": "file", "output_directory": str(tmp_path), "filename": "e.jsonl"},
        {"type": "stream", "url": "http://127.0.0.1:9/x", "timeout_millis": 100}]}, destinations={1: stuck})
    engine.add_plugin(plugin, name="atof")
    run_session(engine)
    assert plugin.flush(2.0) is False  # the stream is stuck: the barrier times out (FMT-84)
    assert len(read_lines(tmp_path / "e.jsonl")) == 8
    gate.set()
    plugin.shutdown(5.0)


def test_fmt_80_queue_full_drops_whole_pairs(engine: Engine) -> None:
    """FMT-80 / FMT-81: with a full queue new events drop; the end of a dropped start is dropped even once
    the queue has room again, so no half pair reaches the destination (publication and sink queues)."""
    gate = threading.Event()
    dest = MemoryDestination(gate=gate)
    plugin = build_atof_plugin({"enabled": True, "sinks": [{"type": "file", "max_queue_size": 2}]},
                               destinations={0: dest}, deferred=False)
    engine.add_plugin(plugin, name="atof")
    engine.dispatch("on_session_start", {"session_id": "s", "model": "m", "platform": "cli"})
    assert dest.writing.wait(5.0)  # the session start is in flight, stuck in write()
    turn = {"session_id": "s", "task_id": "k", "turn_id": "u"}
    engine.dispatch("pre_llm_call", {**turn, "user_message": "go", "is_first_turn": True})  # queued

    def tool(hook: str, call_id: str, **extra: Any) -> None:
        engine.dispatch(hook, {**turn, "tool_name": "t", "args": {}, "tool_call_id": call_id, "api_request_id": "",
                               "middleware_trace": [], **extra})

    tool("pre_tool_call", "kept")      # queued: the queue is now full
    tool("pre_tool_call", "dropped")   # dropped: queue full
    gate.set()
    assert plugin.flush(5.0)           # the queue has room again
    done = {"result": "x", "duration_ms": 0, "status": "ok", "error_type": None, "error_message": None}
    tool("post_tool_call", "dropped", **done)  # its start was dropped: dropped too
    tool("post_tool_call", "kept", **done)
    assert plugin.flush(5.0)
    engine.dispatch("on_session_end", {**turn, "completed": True, "interrupted": False})
    engine.dispatch("on_session_finalize", {"session_id": "s", "reason": "shutdown"})
    plugin.shutdown(5.0)
    events = decode(dest)
    ids = [(e.get("scope_category"), (e["category_profile"] or {}).get("tool_call_id")) for e in events
           if e["category"] == "tool"]
    assert ids == [("start", "kept"), ("end", "kept")]
    stats = plugin.stats()["sinks"][0]
    assert stats["dropped_queue_full"] == 2 and stats["written"] == len(events) == 6


def test_fmt_80_publication_queue_drops_whole_pairs(engine: Engine) -> None:
    """FMT-80: the publication queue (deferred scope plugin) drops the closing hook of a dropped opening hook."""
    plugin, seen, gate = stuck_scope_plugin(engine)
    turn = {"session_id": "s", "task_id": "k", "turn_id": "u"}

    def tool(hook: str, call_id: str, **extra: Any) -> None:
        engine.dispatch(hook, {**turn, "tool_name": "t", "args": {}, "tool_call_id": call_id, "api_request_id": "",
                               "middleware_trace": [], **extra})

    done = {"result": "x", "duration_ms": 0, "status": "ok", "error_type": None, "error_message": None}
    tool("pre_tool_call", "kept")      # queued (2 of 2)
    tool("pre_tool_call", "dropped")   # publication queue full: dropped, key remembered
    gate.set()
    assert plugin.flush(5.0)
    tool("post_tool_call", "dropped", **done)  # dropped with it
    tool("post_tool_call", "kept", **done)
    assert plugin.shutdown(5.0)
    tools = [(e.phase, (e.profile or {}).get("tool_call_id")) for e in seen if e.category == "tool"]
    assert tools == [("start", "kept"), ("end", "kept")]
    assert plugin.publication_stats()["pipeline.events_dropped"] == 2
