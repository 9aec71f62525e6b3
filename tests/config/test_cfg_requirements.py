"""Pipeline-config rules (spec 03) that no other test file names: isolation between profiles, the
pure-Python path without the native runtime, the shared-metrics endpoint, segment bookkeeping.

Each test names the requirement it proves; the rule is restated in its docstring.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.config import load_profile_settings
from hermes_pipeline.profile import ActivationState, open_profile
from hermes_pipeline.config.profile_config import read_shared_metrics
from hermes_pipeline.host import SegmentPolicy
from hermes_pipeline.testing import capture

from .conftest import Env, write_manifest
from tests._pipelines import pipeline_text


def pipeline(out: Path) -> str:
    """The shared ATOF + ATIF files pipeline, writing under ``out/atof`` and ``out/atif``."""
    return pipeline_text("atof-atif-files", atof_directory=out / "atof", atif_directory=out / "atif")


def write_config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(text, encoding="utf-8")


def test_cfg_52_concurrent_sessions_of_two_profiles_give_separate_trajectories(env: Env, process: Engine) -> None:
    """CFG-52: within the shared process pipeline each profile host owns its own session scopes; ATIF
    groups per top-level agent scope, so interleaved sessions of two profiles give two separate
    trajectories (never one mixed), and a delegated child session stays nested in its parent's."""
    out = env.root / "out"
    env.select(env.write("pipeline.toml", pipeline(out)))
    alpha, beta = open_profile(env.root / "alpha"), open_profile(env.root / "beta")
    assert alpha.activation.state is ActivationState.ACTIVE
    ha, hb = alpha.host(model="m"), beta.host(model="m")
    with ha.session("alpha-session") as sa, hb.session("beta-session") as sb:
        for i in range(2):
            with sa.turn(f"alpha question {i}") as ta, sb.turn(f"beta question {i}") as tb:
                if i == 0:
                    with ta.subagent(role="helper", goal="alpha child goal", child_session_id="alpha-child") as run:
                        with run.session.turn("alpha child goal") as child:
                            child.complete("child answer")
                        run.finish("completed")
                tb.complete(f"beta answer {i}")
                ta.complete(f"alpha answer {i}")
    alpha.close()
    beta.close()
    docs = [json.loads(p.read_text()) for p in (out / "atif").glob("*.json")]
    by_session = {d["extra"]["hermes"]["session_id"]: d for d in docs}
    assert len(docs) == 2 and set(by_session) == {"alpha-session", "beta-session"}
    a, b = by_session["alpha-session"], by_session["beta-session"]
    text_a, text_b = json.dumps(a["steps"]), json.dumps(b["steps"])
    assert "alpha question 1" in text_a and "beta" not in text_a
    assert "beta question 1" in text_b and "alpha" not in text_b
    children = a.get("subagent_trajectories", [])
    assert [c["extra"]["hermes"]["session_id"] for c in children] == ["alpha-child"]
    assert "subagent_trajectories" not in b


def test_cfg_58_pure_python_pipeline_is_complete_without_the_native_runtime(
        env: Env, process: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """CFG-58: the native runtime is optional and the pure-Python engine is complete without it: with
    the NeMo Relay binding unimportable, a selected pipeline activates and its exporters write what a
    session did."""
    monkeypatch.setitem(sys.modules, "nemo_relay", None)  # any import of it now raises ImportError
    out = env.root / "out"
    env.select(env.write("pipeline.toml", pipeline(out)))
    profile = open_profile(env.root / "alpha")
    assert profile.activation.state is ActivationState.ACTIVE
    with profile.host(model="m").session("s1") as session, session.turn("hello") as turn:
        turn.call_llm({"model": "m", "messages": []}, lambda request: {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]})
        assert turn.call_tool("echo", {"text": "x"}, lambda text: text) == "x"
        turn.complete("bye")
    profile.close()
    lines = [json.loads(line) for line in (out / "atof" / "events.jsonl").read_text().splitlines()]
    assert {"echo", "hermes.session"} <= {e["name"] for e in lines}
    (trajectory,) = [json.loads(p.read_text()) for p in (out / "atif").glob("*.json")]
    assert trajectory["extra"]["hermes"]["session_id"] == "s1"


ENDPOINT_LOOKALIKES = ("HERMES_SHARED_METRICS_ENDPOINT", "SHARED_METRICS_ENDPOINT", "HERMES_METRICS_ENDPOINT",
                       "HERMES_TELEMETRY_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")


def test_cfg_66_endpoint_only_from_the_profile_key(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    """CFG-66: the shared-metrics endpoint comes only from ``telemetry.shared_metrics.endpoint``:
    there is no default (without the key nothing can be sent) and no environment variable supplies
    or overrides it."""
    for name in ENDPOINT_LOOKALIKES:
        monkeypatch.setenv(name, "https://from-the-environment.example/v1")
    write_config(env.hermes_home, "telemetry:\n  shared_metrics:\n    enabled: true\n    send: true\n")
    assert load_profile_settings(env.hermes_home).shared_metrics.endpoint is None
    live = read_shared_metrics(env.hermes_home)
    assert live.endpoint is None and not live.transmits
    write_config(env.hermes_home, "telemetry:\n  shared_metrics:\n    enabled: true\n    send: true\n"
                                  "    endpoint: https://metrics.example/v1\n")
    assert load_profile_settings(env.hermes_home).shared_metrics.endpoint == "https://metrics.example/v1"
    assert read_shared_metrics(env.hermes_home).endpoint == "https://metrics.example/v1"


def _segments(engine: Engine, turns: int) -> list[tuple[int, str]]:
    host = Host(engine, model="m", platform="gateway", segments=SegmentPolicy(max_turns=2))
    with capture(engine) as rec, host.session("s1") as session:
        for i in range(turns):
            with session.turn(f"t{i}") as turn:
                turn.complete("ok")
    return [(e["segment"], e["segment_reason"]) for e in rec.of("on_session_segment")]


def test_cfg_74_bookkeeping_advances_before_the_scope_calls() -> None:
    """CFG-74: segment counters and flags advance before the scope close/open calls, so a failing
    call never makes every later turn retry the rotation: with every ``on_session_segment``
    consumer raising, rotations still happen every ``max_turns`` turns with increasing numbers."""
    healthy = _segments(Engine(), 7)
    broken = Engine()
    broken.register_hook("on_session_segment", lambda **kw: 1 / 0, plugin="broken-scopes")
    assert _segments(broken, 7) == healthy == [(1, "max_turns"), (2, "max_turns"), (3, "max_turns")]
    assert broken.failure_stats().by_plugin["broken-scopes"] == 3


PLUGIN = """\
import os
import pathlib
pathlib.Path({marker!r}).write_text(str(os.getpid()))

def register(ctx):
    ctx.register_hook("on_session_start", lambda **kw: None)
"""


def test_cfg_29_only_a_dynamic_record_loads_plugin_code(env: Env, process: Engine,
                                                         request: pytest.FixtureRequest) -> None:
    """CFG-29: adding a dynamic record is the explicit consent to load plugin code: a verified
    manifest lying next to the pipeline file is never imported without a ``[[plugins.dynamic]]``
    record; with the record it is imported into the engine's own process (no sandbox)."""
    import os

    marker = env.root / "imported"
    module = "hp_test_cfg29_" + request.node.name[-12:].replace("[", "_").replace("]", "_")
    write_manifest(env.root / "plugins" / "audit", artifact=f"{module}.py", source=PLUGIN.format(marker=str(marker)))
    env.select(env.write("pipeline.toml", "version = 1\n"))
    profile = open_profile(env.root / "no-record")
    assert not marker.exists()
    profile.close()
    env.select(env.write("pipeline.toml", 'version = 1\n[[plugins.dynamic]]\n'
                                          'manifest = "plugins/audit/relay-plugin.toml"\n'))
    profile = open_profile(env.root / "with-record")
    try:
        assert profile.activation.state is ActivationState.ACTIVE
        assert marker.read_text() == str(os.getpid()) and process.has_hook("on_session_start")
    finally:
        profile.close()
        sys.modules.pop(module, None)
