"""ATIF output: configuration (§3.12), filename templates (FMT-50/51), atomic files (FMT-52), partial trajectories
(FMT-49), failures and back-pressure (§5), remote storage (FMT-53/54) and retention (FMT-87a)."""

from __future__ import annotations

import contextvars
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
from hermes_pipeline.sinks.atif import build_atif_plugin, build_atif_sink
from hermes_pipeline.sinks.atif.filenames import FilenameTemplate, UnresolvedFilename
from hermes_pipeline.sinks.atif.files import TrajectoryDirectory, prune_trajectories

from tests.sinks.atif._support import Gate, Pipeline, Stream, check_document, documents, memory_atif_plugin
from hermes_pipeline.testing import closed_port
from tests.sinks.atof._support import Receiver
from hermes_pipeline.testing import chat_response


def run_session(engine: Engine, session_id: str | None = None, tools: int = 1) -> list[str]:
    host = Host(engine, model="m", platform="cli")
    out = []
    with host.session(session_id) as session, session.turn("hello") as turn:
        for i in range(tools):
            out.append(turn.call_tool("read_file", {"path": f"{i}.txt"}, lambda path: "text", tool_call_id=f"c{i}"))
        turn.complete("done")
    return out


# ---------------------------------------------------------------------------------- configuration


@pytest.mark.parametrize(("config", "path", "words"), [
    ({"filename_template": "trajectory.json"}, "atif.filename_template", "{session_id}"),
    ({"filename_template": "/abs/{session_id}.json"}, "atif.filename_template", "relative"),
    ({"filename_template": "../{session_id}.json"}, "atif.filename_template", "relative"),
    ({"filename_template": "a//{session_id}.json"}, "atif.filename_template", "relative"),
    ({"filename_template": "my file {session_id}.json"}, "atif.filename_template", "spaces"),
    ({"filename_template": "a\\{session_id}.json"}, "atif.filename_template", "backslash"),
    ({"filename_template": "{session_id}-{user}.json"}, "atif.filename_template", "unknown placeholder"),
    ({"filename_template": "{session_id}-{metadata.x:-a b}.json"}, "atif.filename_template", "fallback"),
    ({"filename_template": "{session_id.json"}, "atif.filename_template", "unbalanced"),
    ({"filename_template": " "}, "atif.filename_template", "non-blank"),
    ({"group_by": "session"}, "atif.group_by", "'agent' or 'turn'"),
    ({"max_queue_size": 0}, "atif.max_queue_size", ">= 1"),
    ({"retention_days": True}, "atif.retention_days", ">= 1"),
    ({"enabled": "yes"}, "atif.enabled", "true or false"),
    ({"include_llm_payloads": 1}, "atif.include_llm_payloads", "true or false"),
    ({"tool_definitions": [{"f": float("nan")}]}, "atif.tool_definitions", "JSON"),
    ({"extra": [1]}, "atif.extra", "JSON-compatible table"),
    ({"llm_history": "half"}, "atif.llm_history", "'full' or 'delta'"),
    ({"shared_definitions": "yes"}, "atif.shared_definitions", "true or false"),
    ({"colour": "blue"}, "atif.colour", "unknown key"),
    ({"storage": [{"type": "http", "endpoint": "https://h/x"}]}, "atif.storage", "atif.storage_requires_full_payloads"),
])
def test_fmt_50_3_12_config_errors_name_the_key(config: dict[str, Any], path: str, words: str) -> None:
    """FMT-50 / FMT-51 / §3.12 / FMT-30: an unusable atif table fails activation with the key path and the reason."""
    with pytest.raises(ExportConfigError) as info:
        build_atif_sink({"enabled": True, **config})
    assert info.value.path == path and words in str(info.value)
    assert isinstance(info.value, HermesPipelineError)


@pytest.mark.parametrize(("entry", "path"), [
    ({"type": "s3", "bucket": "b"}, "atif.storage[0].type"),
    ({"type": "ftp"}, "atif.storage[0].type"),
    ({"type": "http"}, "atif.storage[0].endpoint"),
    ({"type": "http", "endpoint": "file:///x"}, "atif.storage[0].endpoint"),
    ({"type": "http", "endpoint": "http://h", "timeout_millis": 0}, "atif.storage[0].timeout_millis"),
    ({"type": "http", "endpoint": "http://h", "header_env": {"Authorization": "ATIF_UNSET_VAR_X"}},
     "atif.storage[0].header_env"),
])
def test_fmt_53_storage_entries_are_validated(entry: dict[str, Any], path: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-53: storage entries are checked at activation; s3 is refused by this build with a clear message;
    on_invalid = "skip" skips only the broken entry."""
    monkeypatch.delenv("ATIF_UNSET_VAR_X", raising=False)
    with pytest.raises(ExportConfigError) as info:
        build_atif_sink({"enabled": True, "storage": [entry]}, enable_full_payloads=True)
    assert info.value.path == path
    if entry.get("type") == "s3":
        assert "not supported" in str(info.value)
    if entry.get("type") == "http":
        sink = build_atif_sink({"enabled": True, "storage": [entry, {"type": "http", "endpoint": "http://127.0.0.1:9/x"}]},
                               enable_full_payloads=True, on_invalid="skip")
        assert [p for p, _ in sink.skipped] == [path] and sink.destinations() == [
            "atif.storage[1]: http http://127.0.0.1:9/x"]
        sink.shutdown(1.0)


def test_disabled_section_exports_nothing(engine: Engine) -> None:
    """enabled = false (default): the plugin is disabled and has no destinations."""
    plugin = build_atif_plugin({}, destinations={"local": MemoryDestination()})
    assert plugin.enabled is False and plugin.destinations() == []
    assert plugin.flush(0.1) and plugin.shutdown(0.1)


def test_fmt_50_template_rendering() -> None:
    """FMT-50 / FMT-51: flat metadata key first, then nested; fallback; {date}; rejected values."""
    template = FilenameTemplate.parse("{metadata.hermes.platform}/{metadata.team.name:-none}/{date}/{session_id}.json")
    uid = "01a05c77-08a0-7c3a-9d10-5e41a7c90001"
    meta = {"hermes.platform": "cli", "team": {"name": "ops"}}
    assert template.render(uid, meta, 1_788_257_700_000_000) == f"cli/ops/2026-09-01/{uid}.json"
    assert template.render(uid, {"hermes.platform": "cli"}, 0) == f"cli/none/1970-01-01/{uid}.json"
    for bad in ({}, {"hermes.platform": 3}, {"hermes.platform": "a b"}, {"hermes.platform": ".."},
                {"hermes.platform": "/etc"}):
        with pytest.raises(UnresolvedFilename):
            template.render(uid, bad, 0)
    assert template.pattern().fullmatch(f"cli/ops/2026-09-01/{uid}.json")
    assert not template.pattern().fullmatch(f"cli/ops/2026-09-01/{uid}.json.tmp")


# ---------------------------------------------------------------------------------- local files


def test_fmt_52_atomic_files_modes_and_replacement(engine: Engine, tmp_path: Path) -> None:
    """FMT-52: files are written atomically (no temp file left), mode 0600, directories 0700, 2-space indented,
    an existing file of the same name is replaced; FMT-50: nested template directories are created."""
    out = tmp_path / "atif"
    plugin = build_atif_plugin({"enabled": True, "output_directory": str(out),
                                "filename_template": "{metadata.hermes.platform}/{date}/{session_id}.json"})
    engine.add_plugin(plugin, name="atif")
    first_dest = plugin.sink.local
    assert isinstance(first_dest, TrajectoryDirectory)
    run_session(engine)
    assert plugin.flush(10.0)
    [path] = first_dest.written
    assert path.relative_to(out).parts[0] == "cli" and path.name.endswith(".json")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for directory in (out, out / "cli", path.parent):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    text = path.read_text(encoding="utf-8")
    assert text.startswith('{\n  "schema_version": "ATIF-v1.7",\n  "session_id": ')
    doc = json.loads(text)
    check_document(doc)
    assert path.name == f"{doc['trajectory_id']}.json"
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no temporary file left
    path.write_text("old content")
    first_dest.write([type("F", (), {"name": str(path.relative_to(out)), "content": text.encode()})()])
    assert path.read_text(encoding="utf-8") == text  # replaced
    plugin.shutdown(10.0)


def test_fmt_50_relative_directory_resolves_against_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CFG-83: a relative output_directory is resolved against the working directory (or base_dir) at activation."""
    monkeypatch.chdir(tmp_path)
    sink = build_atif_sink({"enabled": True, "output_directory": "traj"})
    assert sink.destinations() == [f"atif: directory {tmp_path / 'traj' / 'hermes-atif-{session_id}.json'}"]
    sink.shutdown(1.0)
    sink = build_atif_sink({"enabled": True, "output_directory": "traj"}, base_dir=tmp_path / "base")
    assert sink.destinations()[0].startswith(f"atif: directory {tmp_path / 'base' / 'traj'}/")
    sink.shutdown(1.0)


def test_fmt_35_default_directory_is_the_profile_telemetry_directory(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-35 (hermes_pipeline decision): without output_directory trajectories go to $HERMES_HOME/telemetry,
    never to the working directory; ``default_dir`` (what the activation hands the component) wins."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home"))
    sink = build_atif_sink({"enabled": True})
    expected = tmp_path / "home" / "telemetry" / "hermes-atif-{session_id}.json"
    assert sink.destinations() == [f"atif: directory {expected}"]
    sink.shutdown(1.0)
    sink = build_atif_sink({"enabled": True}, base_dir=tmp_path / "base", default_dir=tmp_path / "p" / "telemetry")
    assert sink.destinations()[0].startswith(f"atif: directory {tmp_path / 'p' / 'telemetry'}/")
    sink.shutdown(1.0)
    assert list(tmp_path.iterdir()) == []  # nothing created before a trajectory is written


def test_fmt_51_unresolved_filename_skips_only_that_trajectory(engine: Engine,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    """FMT-51: a missing metadata value without fallback skips that trajectory, counts atif.filename_unresolved
    and warns once; other trajectories are written."""
    dest = MemoryDestination()
    plugin = build_atif_plugin({"enabled": True, "filename_template": "{metadata.hermes.session_id}/{session_id}.json"},
                               destinations={"local": dest})
    engine.add_plugin(plugin, name="atif")
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.sinks.atif"):
        run_session(engine, "good-id")
        run_session(engine, "bad id one")
        run_session(engine, "bad id two")
        assert plugin.flush(10.0)
    assert [item.name.split("/")[0] for item in dest.items] == ["good-id"]
    assert plugin.counters()["atif.filename_unresolved"] == 2
    assert len([r for r in caplog.records if "filename_unresolved" in r.getMessage()]) == 1
    assert "bad id" not in caplog.text
    plugin.shutdown(10.0)


def test_fmt_49_partial_trajectories_at_shutdown(engine: Engine) -> None:
    """FMT-49 / FMT-85: roots still open at shutdown are written as partial trajectories after the queue drains;
    the open tool call shows with status cancelled, the open LLM request as a failed attempt."""
    pipeline = Pipeline(engine)
    host = Host(engine, model="m")
    session = host.session("unfinished")
    context = contextvars.copy_context()  # the turn never ends: keep its call context out of other tests
    turn = context.run(session.turn, "still working")
    turn.call_llm({"model": "m", "messages": []}, lambda r: chat_response(None, [
        {"id": "c1", "type": "function", "function": {"name": "slow", "arguments": "{}"}}]))
    engine.dispatch("pre_tool_call", {"tool_name": "slow", "args": {}, "task_id": turn.task_id,
                                      "session_id": "unfinished", "tool_call_id": "c1", "turn_id": turn.turn_id,
                                      "api_request_id": "", "middleware_trace": []})
    engine.dispatch("pre_api_request", {  # a provider attempt in flight
        "session_id": "unfinished", "task_id": turn.task_id, "turn_id": turn.turn_id, "api_request_id": "r-open",
        "platform": "cli", "model": "m", "provider": "p", "base_url": "", "api_mode": "chat_completions",
        "api_call_count": 2, "started_at": 0, "middleware_trace": [], "request": {"method": "POST", "body": {}}})
    finished = host.session("finished")
    with finished.turn("quick") as quick:
        quick.complete("ok")
    finished.finalize()
    pipeline.flush()
    assert [item.partial for item in pipeline.atif_dest.items] == [False]  # only the finished root so far
    pipeline.shutdown()
    complete, partial = pipeline.documents()
    assert "notes" not in complete
    assert partial["notes"] == "partial: written at teardown before the root scope closed"
    assert [item.partial for item in pipeline.atif_dest.items] == [False, True]
    user, step = partial["steps"]
    [result] = step["observation"]["results"]
    assert result["source_call_id"] == "c1" and result["extra"]["hermes"]["status"] == "cancelled"
    assert step["extra"]["hermes"]["failed_attempts"] == [{"error_type": "cancelled", "api_request_id": "r-open"}]  # the turn's last step
    assert user["source"] == "user"
    assert pipeline.atif.stats()["open_roots"] == 0
    context.run(turn.end)


def test_fmt_49_sink_shutdown_writes_roots_the_scope_plugin_never_closed() -> None:
    """FMT-49: a root still open when the sink itself shuts down (the scope plugin never ended it) is written
    partial, with whatever steps it has; an empty partial trajectory is allowed."""
    dest = MemoryDestination()
    sink = build_atif_sink({"enabled": True}, destinations={"local": dest})
    s = Stream(sink)
    t0 = 1_788_257_700_000_000
    session = s.start("hermes.session", "agent", None, t0)
    s.start("agent.run", "function", session.uuid, t0 + 5, data={"user_message": "hi"})
    other = Stream(sink, "empty")
    other.start("hermes.session", "agent", None, t0 + 7)
    assert sink.flush(10.0) and not dest.items
    assert sink.shutdown(10.0)
    first, second = documents(dest)
    assert [s["message"] for s in first["steps"]] == ["hi"] and second["steps"] == []
    assert all(d["notes"].startswith("partial") for d in (first, second))
    assert sink.stats()["trajectories"]["partial_written"] == 2


def test_fmt_79_trajectory_io_never_on_the_callers_thread(engine: Engine, tmp_path: Path) -> None:
    """FMT-79: building documents and writing files happen on the ATIF writer thread only."""
    threads: set[int] = set()

    class Recording(TrajectoryDirectory):
        def open(self) -> None:
            threads.add(threading.get_ident())
            super().open()

        def write(self, batch: list[Any]) -> None:
            threads.add(threading.get_ident())
            super().write(batch)

    directory = Recording(tmp_path, FilenameTemplate.parse("{session_id}.json"), retention_days=30)
    plugin = build_atif_plugin({"enabled": True}, destinations={"local": directory})
    engine.add_plugin(plugin, name="atif")
    callers = {threading.get_ident()}
    for n in range(3):
        worker = threading.Thread(target=lambda: (callers.add(threading.get_ident()), run_session(engine)))
        worker.start()
        worker.join(30)
    assert plugin.shutdown(10.0)
    assert len(directory.written) == 3 and threads and not threads & callers


# ---------------------------------------------------------------------------------- failures and back-pressure


def test_fmt_37_83_unwritable_directory_is_counted_warned_once_and_agent_unaffected(
        engine: Engine, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """FMT-83: a directory that cannot be written is counted (atif.file_errors), warned once without the path,
    and never reaches the agent (tool results and turns are unchanged)."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    plugin = build_atif_plugin({"enabled": True, "output_directory": str(blocker / "sub")})
    engine.add_plugin(plugin, name="atif")
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.sinks.atif"):
        assert run_session(engine, tools=2) == ["text", "text"]
        assert run_session(engine) == ["text"]
        assert plugin.flush(10.0)
        plugin.shutdown(10.0)
    assert plugin.counters()["atif.file_errors"] == 2
    warnings = [r.getMessage() for r in caplog.records if "writing a trajectory failed" in r.getMessage()]
    assert len(warnings) == 1 and str(tmp_path) not in caplog.text
    assert any("atif.file_errors=2" in r.getMessage() for r in caplog.records)  # FMT-82: logged at shutdown


def test_fmt_37_83_a_full_disk_keeps_the_trajectories_and_writes_them_when_it_can(
        engine: Engine, caplog: pytest.LogCaptureFixture) -> None:
    """FMT-37 / FMT-83: ENOSPC from the output keeps the trajectory (warned once) and writes it again before the next
    one and after each batch: once the disk takes files again every trajectory is written, in order, none lost."""
    failing = FailingDestination(lambda: OSError(errno.ENOSPC, "No space left on device"), failures=2)
    plugin = build_atif_plugin({"enabled": True}, destinations={"local": failing})
    engine.add_plugin(plugin, name="atif")
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.sinks.atif"):
        for n in range(3):
            assert run_session(engine, f"s{n}") == ["text"]
        assert plugin.flush(10.0)
    assert plugin.counters()["atif.file_errors"] == 0
    docs = [json.loads(item.content) for item in failing.inner.items]
    assert [d["extra"]["hermes"]["session_id"] for d in docs] == ["s0", "s1", "s2"]
    assert len([r for r in caplog.records if "ENOSPC" in r.getMessage()]) == 1
    trajectories = plugin.stats()["trajectories"]
    assert (trajectories["trajectories_deferred"], trajectories["trajectories_recovered"]) == (2, 2)
    assert trajectories["waiting"] == 0 and trajectories["trajectories_lost"] == 0
    plugin.shutdown(10.0)


def test_fmt_37_83_a_disk_still_full_at_close_loses_what_waits_counted_and_warned(
        engine: Engine, caplog: pytest.LogCaptureFixture) -> None:
    """What still cannot be written at close is lost: counted in ``atif.file_errors`` and warned, never silently."""
    failing = FailingDestination(lambda: OSError(errno.ENOSPC, "No space left on device"), failures=1_000)
    plugin = build_atif_plugin({"enabled": True}, destinations={"local": failing})
    engine.add_plugin(plugin, name="atif")
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.sinks.atif"):
        for n in range(2):
            assert run_session(engine, f"s{n}") == ["text"]
        assert plugin.flush(10.0)
        assert plugin.stats()["trajectories"]["waiting"] == 2
        plugin.shutdown(10.0)
    assert failing.inner.items == []
    assert plugin.counters()["atif.file_errors"] == 2
    assert plugin.stats()["trajectories"]["trajectories_lost"] == 2
    assert any("could not be written before close" in r.getMessage() for r in caplog.records)


def test_fmt_80_81_full_queue_drops_whole_pairs() -> None:
    """FMT-80 / FMT-81: when the ATIF queue is full new events are dropped and counted (atif.events_dropped);
    the end of a dropped start is dropped too, so the assembler never sees half a pair."""
    gate = Gate()
    sink = build_atif_sink({"enabled": True, "max_queue_size": 2}, destinations={"local": gate})
    s = Stream(sink)
    t0 = 1_788_257_700_000_000
    first = s.start("hermes.session", "agent", None, t0)
    s.end(first, t0 + 1)
    assert gate.writing.wait(10)  # the worker is stuck writing the first trajectory
    other = Stream(sink, "second")
    session = other.start("hermes.session", "agent", None, t0 + 2)                          # queued (1 of 2)
    turn = other.start("agent.run", "function", session.uuid, t0 + 3, data={"user_message": "x"})  # queued (2 of 2)
    tool = other.start("t", "tool", turn.uuid, t0 + 4)                                      # dropped: queue full
    gate.release.set()
    assert sink.flush(10.0)
    other.end(tool, t0 + 5, meta={"hermes.tool.status": "ok"})  # its start was dropped: dropped as well
    other.end(turn, t0 + 6)
    other.end(session, t0 + 7)
    assert sink.flush(10.0) and sink.shutdown(10.0)
    assert sink.counters()["atif.events_dropped"] == 2
    assert sink.stats()["trajectories"]["unrouted_events"] == 0
    assert len(gate.items) == 2 and json.loads(gate.items[1].content)["steps"][0]["message"] == "x"


# ---------------------------------------------------------------------------------- remote storage


def test_fmt_53_54_http_storage_posts_each_trajectory_and_recovers_locally(engine: Engine, tmp_path: Path) -> None:
    """FMT-53: one POST per trajectory with the file as body and the filename / session id headers; a failing
    destination is counted (atif.delivery_failures[i]) while the others still receive; FMT-54: when every
    destination fails a local recovery copy is written to output_directory."""
    with Receiver() as receiver, closed_port() as port:
        plugin = build_atif_plugin({"enabled": True, "output_directory": str(tmp_path), "storage": [
            {"type": "http", "endpoint": receiver.url, "headers": {"X-Team": "ops"}},
            {"type": "http", "endpoint": f"http://127.0.0.1:{port}/down", "timeout_millis": 500}]},
            enable_full_payloads=True)
        engine.add_plugin(plugin, name="atif")
        run_session(engine, "stored")
        assert plugin.flush(10.0)
        [(headers, body)] = receiver.requests
        doc = json.loads(body)
        check_document(doc)
        assert headers["content-type"] == "application/json" and headers["x-team"] == "ops"
        assert headers["x-hermes-atif-session-id"] == doc["trajectory_id"]
        assert headers["x-hermes-atif-filename"] == f"hermes-atif-{doc['trajectory_id']}.json"
        assert not list(tmp_path.iterdir())  # delivered somewhere: no local copy
        assert plugin.counters()["atif.delivery_failures[1]"] == 1
        receiver.statuses.extend([400])  # now every destination fails
        run_session(engine, "recovered")
        assert plugin.flush(10.0)
        plugin.shutdown(10.0)
    [copy] = list(tmp_path.iterdir())
    assert json.loads(copy.read_text())["extra"]["hermes"]["session_id"] == "recovered"
    assert plugin.counters()["atif.delivery_failures[0]"] == 1 and plugin.counters()["atif.trajectories_dropped"] == 0
    assert plugin.stats()["uploads"]["recovery_copies"] == 1
    assert plugin.destinations()[0] == f"atif.storage[0]: http {receiver.url}"


# ---------------------------------------------------------------------------------- retention


def test_fmt_87a_retention_deletes_only_old_files_of_this_template(tmp_path: Path) -> None:
    """FMT-87a: at open (and every 24 h) files older than retention_days matching the template are deleted;
    unrelated and recent files stay."""
    template = FilenameTemplate.parse("{date}/hermes-atif-{session_id}.json")
    uid = "01a05c77-08a0-7c3a-9d10-5e41a7c90001"
    old = tmp_path / "2001-01-01" / f"hermes-atif-{uid}.json"
    recent = tmp_path / "2001-01-02" / f"hermes-atif-{uid}.json"
    unrelated = tmp_path / "2001-01-01" / "notes.json"
    for path in (old, recent, unrelated):
        path.parent.mkdir(exist_ok=True)
        path.write_text("{}")
    os.utime(old, (0, 0))
    os.utime(unrelated, (0, 0))
    directory = TrajectoryDirectory(tmp_path, template, retention_days=2)
    directory.open()
    assert not old.exists() and recent.exists() and unrelated.exists()
    assert prune_trajectories(tmp_path, template, 2) == 0


def test_fmt_81_stats_counters_and_destinations(engine: Engine) -> None:
    """FMT-81 / FMT-82: counters carry the documented names; destinations never show secrets."""
    plugin, dest = memory_atif_plugin(engine)
    run_session(engine)
    assert plugin.flush(10.0)
    counters = plugin.counters()
    assert counters == {"pipeline.events_dropped": 0, "atif.events_dropped": 0, "atif.filename_unresolved": 0,
                        "atif.file_errors": 0}
    stats = plugin.stats()
    assert stats["events"]["written"] == stats["events"]["submitted"] == 6
    assert stats["trajectories"]["trajectories_written"] == 1 and stats["open_roots"] == 0
    assert plugin.destinations() == ["atif: memory"]
    assert len(documents(dest)) == 1
    plugin.shutdown(10.0)
