"""One scope stream per profile (issue #14): the trajectory store, the observability store and the quick OTel
endpoint of a profile listen to one scope plugin (the pipeline's ``observability`` component's when the pipeline
file runs one), so a tool call is enqueued once on the caller's thread and made into scope events once, and every
consumer sees the same scope UUIDs; one consumer failing never affects another; consumers switched off are not imported."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import hermes_pipeline
from hermes_pipeline import Engine, runtime
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver
from hermes_pipeline.export.scope_hooks import ScopePlugin
from hermes_pipeline.profile import Profile, activation, open_profile, release_all
from hermes_pipeline.sinks.observability_store import ObservabilityStoreSink, store_path

from ._support import text_response, tool_response
from tests._pipelines import write_pipeline


@pytest.fixture(autouse=True)
def _fresh_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A process engine and activation of the test's own; no pipeline file unless the test selects one."""
    for name in ("HERMES_NEMO_RELAY_PLUGINS_TOML", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    previous = runtime.set_engine(Engine())
    monkeypatch.setattr(activation, "PROCESS", activation.ProcessActivation())
    try:
        yield
    finally:
        release_all()
        runtime.set_engine(previous)


def _profile(home: Path, body: str) -> Profile:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("observability:\n" + body, encoding="utf-8")
    return open_profile(home)


STORES = """\
  trajectories:
    enabled: true
  audit:
    enabled: true
"""


def _pipeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Select a pipeline file whose ``observability`` component writes ATOF to ``tmp_path/atof``."""
    out = tmp_path / "atof"
    path = write_pipeline(tmp_path, "atof-file", atof_directory=out)
    monkeypatch.setenv("HERMES_NEMO_RELAY_PLUGINS_TOML", str(path))
    return out / "events.jsonl"


def _scope_plugins(profile: Profile, hook: str = "pre_tool_call") -> list[Any]:
    """The scope plugins a ``hook`` dispatch through the profile's engine enqueues to."""
    found: list[Any] = []
    for entry in profile.engine.hook_listeners.get(hook, ()):
        owner = getattr(entry.callback, "__self__", None)
        if isinstance(owner, ScopePlugin) and not any(owner is known for known in found):
            found.append(owner)
    return found


def _run(profile: Profile, question: str = "What do my notes say?") -> None:
    host = profile.host(platform="cli", model="m1", provider="local", api_mode="chat_completions")
    with host.session() as session:
        with session.turn(question) as turn:
            messages = [{"role": "user", "content": question}]
            turn.call_llm({"model": "m1", "messages": messages},
                          lambda req: tool_response("c1", "read_file", {"path": "n"}))
            turn.call_tool("read_file", {"path": "n"}, lambda path: f"contents of {path}", tool_call_id="c1")
            turn.call_llm({"model": "m1", "messages": messages}, lambda req: text_response("They say hello."))
            turn.complete("They say hello.")


def _trajectory_ids(home: Path) -> list[str]:
    return sorted(json.loads(p.read_text())["trajectory_id"] for p in (home / "trajectories").glob("*.json"))


def _task_run_ids(home: Path) -> list[str]:
    conn = sqlite3.connect(store_path(home))
    try:
        return sorted(r[0] for r in conn.execute("SELECT trajectory_id FROM task_runs"))
    finally:
        conn.close()


def _flush(profile: Profile) -> None:
    for handle in profile.consumers.values():
        flush = getattr(handle, "flush", None)
        if flush is not None:
            assert flush(10)


def test_one_scope_plugin_feeds_every_consumer_of_a_profile_with_the_same_uuids(tmp_path: Path) -> None:
    with OTLPReceiver() as receiver:
        home = tmp_path / "p"
        profile = _profile(home, STORES + f"  otel_enabled: true\n  otel_endpoint: {receiver.endpoint}\n")
        assert {"trajectory_store", "observability_store", "quick_otel"} <= set(profile.consumers)
        shared = profile.stream
        assert not shared.borrowed and shared.listeners() == 3
        assert _scope_plugins(profile) == [shared.scope_plugin]  # a tool call is enqueued once, made into events once
        _run(profile)
        _flush(profile)
        profile.close()
        runs = _trajectory_ids(home)
        assert len(runs) == 1 and _task_run_ids(home) == runs  # BOOK-3: one run, one UUID in both stores
        agents = receiver.spans_named("invoke_agent")
        # the span's trajectory id is the run's UUID (span ids are random, FMT-56b / issue #30)
        assert [s.attributes["hermes.trajectory_id"] for s in agents] == runs


def test_the_pipelines_scope_plugin_is_the_profiles_when_the_pipeline_has_one(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    atof = _pipeline(tmp_path, monkeypatch)
    home = tmp_path / "p"
    profile = _profile(home, STORES)
    shared = profile.stream
    assert shared.borrowed and shared.listeners() == 2
    assert len(_scope_plugins(profile)) == 1  # the component's: the stores add no scope plugin of their own
    _run(profile)
    _flush(profile)
    profile.close()
    runs = _trajectory_ids(home)
    assert len(runs) == 1 and _task_run_ids(home) == runs
    events = [json.loads(line) for line in atof.read_text().splitlines()]
    starts = [e["uuid"] for e in events if e.get("name") == "agent.run" and e.get("scope_category") == "start"]
    assert starts == runs  # the ATOF file, the trajectory file and the task_runs row name one run UUID


def test_profiles_on_the_pipelines_scope_plugin_see_only_their_own_sessions(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    _pipeline(tmp_path, monkeypatch)
    one, two = _profile(tmp_path / "one", STORES), _profile(tmp_path / "two", STORES)
    assert one.stream.borrowed and two.stream.borrowed
    assert one.stream.scope_plugin is two.stream.scope_plugin
    _run(one, "first")
    _run(two, "second")
    _run(two, "third")
    for profile in (one, two):
        _flush(profile)
    one.close()
    two.close()
    assert len(_trajectory_ids(tmp_path / "one")) == 1 and len(_trajectory_ids(tmp_path / "two")) == 2
    assert _task_run_ids(tmp_path / "one") == _trajectory_ids(tmp_path / "one")
    assert _task_run_ids(tmp_path / "two") == _trajectory_ids(tmp_path / "two")


def test_memory_tool_overrides_need_the_profiles_own_scope_plugin(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The pipeline's scope plugin classifies no extra memory tools: a profile that declares some keeps one scope plugin
    of its own for all of its consumers (two scope plugins in the process, not one per consumer)."""
    _pipeline(tmp_path, monkeypatch)
    home = tmp_path / "p"
    profile = _profile(home, STORES + "  memory_tools:\n    notes_save: memory.update\n")
    shared = profile.stream
    assert not shared.borrowed and shared.listeners() == 2
    assert len(_scope_plugins(profile)) == 2 and shared.scope_plugin in _scope_plugins(profile)
    with profile.host().session() as session, session.turn("hi") as turn:
        turn.call_tool("notes_save", {"path": "memories/notes.md", "content": "remember"}, lambda **kw: "ok")
        turn.complete("ok")
    profile.close()
    conn = sqlite3.connect(store_path(home))
    assert conn.execute("SELECT file_path, change_type FROM memory_changes").fetchall() == [("memories/notes.md", "add")]
    conn.close()
    assert len(_trajectory_ids(home)) == 1


def test_a_profile_without_a_pipeline_scope_plugin_makes_one_and_drops_it_when_nobody_listens(tmp_path: Path) -> None:
    profile = _profile(tmp_path / "p", "  trajectories:\n    enabled: true\n")
    assert len(_scope_plugins(profile)) == 1
    profile.consumers.pop("trajectory_store").close()
    assert _scope_plugins(profile) == [] and "pre_tool_call" not in profile.engine.hook_listeners
    off = _profile(tmp_path / "off", "  environment: development\n")
    assert _scope_plugins(off) == [] and off.stream.scope_plugin is None


def test_a_failing_consumer_never_affects_the_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: object, event: object) -> None:
        raise RuntimeError("this sink is broken")

    monkeypatch.setattr(ObservabilityStoreSink, "__call__", broken)  # every way events enter the sink
    monkeypatch.setattr(ObservabilityStoreSink, "take_many", broken)  # (a publication batch at once)
    home = tmp_path / "p"
    profile = _profile(home, STORES)
    _run(profile)
    _flush(profile)
    profile.close()
    assert len(_trajectory_ids(home)) == 1  # the trajectory store got every event
    assert _task_run_ids(home) == []


def test_a_consumer_that_cannot_start_or_close_leaves_the_others_working(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_pipeline.sinks import trajectory_store
    from hermes_pipeline.sinks.observability_store import consumer

    def cannot_start(profile: object) -> None:
        raise OSError("no space left")

    monkeypatch.setattr(trajectory_store, "attach_for_profile", cannot_start)
    home = tmp_path / "p"
    profile = _profile(home, STORES)
    assert "trajectory_store" not in profile.consumers and profile.stream.listeners() == 1
    _run(profile)
    _flush(profile)

    def cannot_close(self: object) -> None:
        raise RuntimeError("close failed")

    monkeypatch.setattr(consumer.StoreHandle, "close", cannot_close)
    profile.close()  # logged, never raised
    assert len(_task_run_ids(home)) == 1


def test_a_restarted_consumer_joins_the_same_scope_plugin(tmp_path: Path) -> None:
    home = tmp_path / "p"
    profile = _profile(home, STORES)
    scope_plugin = profile.stream.scope_plugin
    _run(profile, "before")
    profile.consumers["trajectory_store"].flush(10)
    profile._restart_consumer("trajectory_store")
    assert profile.stream.scope_plugin is scope_plugin and profile.stream.listeners() == 2
    _run(profile, "after")
    _flush(profile)
    profile.close()
    runs = _trajectory_ids(home)
    assert len(runs) == 2 and _task_run_ids(home) == runs


def test_an_open_run_is_a_partial_trajectory_and_a_task_run_when_the_profile_closes(tmp_path: Path) -> None:
    home = tmp_path / "p"
    profile = _profile(home, STORES)
    session = profile.host(model="m1").session()
    turn = session.turn("still running")
    turn.call_tool("read_file", {"path": "n"}, lambda path: "x", tool_call_id="c1")
    profile.close()
    runs = _trajectory_ids(home)
    doc = json.loads(next((home / "trajectories").glob("*.json")).read_text())
    assert "partial" in doc.get("notes", "").lower()
    assert len(runs) == 1 and _task_run_ids(home) == runs


CHILD = textwrap.dedent("""\
    import json, sys
    from hermes_pipeline.profile import open_profile
    profile = open_profile(sys.argv[1])
    watched = ["hermes_pipeline.sinks.trajectory_store", "hermes_pipeline.sinks.observability_store",
               "hermes_pipeline.sinks.otel.quick_endpoint", "hermes_pipeline.sinks.otel", "hermes_pipeline.sinks.atif"]
    print(json.dumps({"consumers": sorted(profile.consumers), "loaded": [m for m in watched if m in sys.modules]}))
    profile.close()
    """)


@pytest.mark.parametrize(("body", "loaded"), [
    ("  environment: development\n", []),
    ("  trajectories:\n    enabled: true\n", ["hermes_pipeline.sinks.trajectory_store", "hermes_pipeline.sinks.atif"]),
    ("  audit:\n    enabled: true\n", ["hermes_pipeline.sinks.observability_store"]),
])
def test_consumers_switched_off_are_not_imported(tmp_path: Path, body: str, loaded: list[str]) -> None:
    """What opening a profile imports (the Hermes bridge pays it at start-up): a consumer switched off is not even
    imported, and no sink imports another (the ``.gitignore`` helper both stores use is in ``export/``)."""
    home = tmp_path / "p"
    home.mkdir()
    (home / "config.yaml").write_text("observability:\n" + body, encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HERMES_HOME": str(home),
           "PYTHONPATH": str(Path(hermes_pipeline.__file__).resolve().parents[1])}  # the code under test
    out = subprocess.run([sys.executable, "-c", CHILD, str(home)], capture_output=True, text=True, timeout=120,
                         env=env, cwd=tmp_path, check=True)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["loaded"] == loaded, report
