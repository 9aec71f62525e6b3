"""Profile config.yaml and profiles hosted in one process (spec 03 §11, §13; CFG-1, CFG-50..CFG-54,
CFG-64..CFG-69; 05 SM-6, SM-7, SM-11)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.config import load_profile_settings
from hermes_pipeline.profile import ActivationState, open_profile, open_profiles
from hermes_pipeline.config import profile_config
from hermes_pipeline.config.profile_config import read_shared_metrics

from .conftest import Env

PIPELINE = """\
version = 1

[[components]]
kind = "request_defaults"

[components.config.llm]
temperature = 0.1

[[components]]
kind = "observability"

[components.config]
version = 4
"""


def write_config(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def codes(settings) -> list[str]:
    return [d.code for d in settings.diagnostics]


def test_cfg_13_defaults_when_missing(env: Env) -> None:
    """CFG-69: a missing config.yaml yields the defaults, no error."""
    s = load_profile_settings(env.hermes_home)
    assert not s.exists and not s.shared_metrics.enabled and not s.shared_metrics.send
    assert s.shared_metrics.endpoint is None and s.session_segments.on_compaction is False
    assert s.session_segments.max_turns == 0 and s.hook_callback_timeout == 0 and s.diagnostics == ()


def test_cfg_13_valid_values(env: Env) -> None:
    write_config(env.hermes_home, """\
telemetry:
  shared_metrics: {enabled: true, send: true, endpoint: "https://metrics.example/v1"}
gateway:
  telemetry:
    session_segments: {on_compaction: true, max_turns: 25}
plugins:
  hook_callback_timeout: 1000
""")
    s = load_profile_settings(env.hermes_home)
    assert s.shared_metrics.transmits and s.shared_metrics.endpoint == "https://metrics.example/v1"
    assert (s.session_segments.on_compaction, s.session_segments.max_turns) == (True, 25)
    assert s.hook_callback_timeout == 600 and s.hook_callback_timeout_set  # clamped (01 §11)
    assert s.diagnostics == ()


@pytest.mark.parametrize("value", ['"5"', "true", "-1", "null", "2.5"])
def test_cfg_69_max_turns_invalid_values_default_with_warning(env: Env, value: str) -> None:
    """CFG-69: "5", booleans, negatives, null and non-integers are rejected (no coercion) → 0 with WARNING."""
    write_config(env.hermes_home, f"gateway:\n  telemetry:\n    session_segments:\n      max_turns: {value}\n")
    s = load_profile_settings(env.hermes_home)
    assert s.session_segments.max_turns == 0 and codes(s) == ["config.invalid_value"]
    assert s.diagnostics[0].field == "gateway.telemetry.session_segments.max_turns"


def test_cfg_69_on_compaction_non_boolean(env: Env) -> None:
    write_config(env.hermes_home, "gateway:\n  telemetry:\n    session_segments:\n      on_compaction: 'yes'\n")
    s = load_profile_settings(env.hermes_home)
    assert s.session_segments.on_compaction is False and codes(s) == ["config.invalid_value"]


def test_cfg_69_malformed_file_yields_defaults(env: Env) -> None:
    write_config(env.hermes_home, "gateway: [unclosed\n")
    s = load_profile_settings(env.hermes_home)
    assert s.session_segments.max_turns == 0 and codes(s) == ["config.invalid_value"]
    write_config(env.hermes_home, "gateway: 3\ntelemetry: [1]\n")
    assert load_profile_settings(env.hermes_home).shared_metrics.enabled is False


def test_sm_6_only_boolean_true_enables(env: Env) -> None:
    """05 SM-6: anything but the YAML boolean true means off."""
    write_config(env.hermes_home, "telemetry:\n  shared_metrics:\n    enabled: 'true'\n    send: 1\n")
    s = load_profile_settings(env.hermes_home)
    assert not s.shared_metrics.enabled and not s.shared_metrics.send
    assert codes(s) == ["config.invalid_value", "config.invalid_value"]


@pytest.mark.parametrize("endpoint, ok", [
    ("https://metrics.example", True), ("http://localhost:8080/x", True), ("http://127.0.0.1", True),
    ("http://[::1]:9/", True), ("http://metrics.example", False), ("ftp://x", False), ("", False), ("42", False),
])
def test_cfg_66_endpoint_rules(env: Env, endpoint: str, ok: bool) -> None:
    """CFG-66: §13: https, or http on localhost / 127.0.0.1 / ::1; otherwise ERROR shared_metrics.invalid_endpoint."""
    write_config(env.hermes_home, f"telemetry:\n  shared_metrics:\n    endpoint: {endpoint!r}\n")
    s = load_profile_settings(env.hermes_home)
    assert (s.shared_metrics.endpoint is not None) == ok
    if not ok:
        diag = s.diagnostics[0]
        assert (diag.code, diag.level) == ("shared_metrics.invalid_endpoint", "error")
        assert endpoint not in diag.message or not endpoint


def test_cfg_65_send_without_enabled_warns_once_per_process(env: Env, monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    """CFG-65 / SM-11: send without enabled does nothing and logs one WARNING per process."""
    monkeypatch.setattr(profile_config, "_send_warned", False)
    write_config(env.hermes_home, "telemetry:\n  shared_metrics:\n    send: true\n    endpoint: https://m.example\n")
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.config"):
        first = load_profile_settings(env.hermes_home)
        second = load_profile_settings(env.hermes_home)
    assert not first.shared_metrics.transmits and codes(first) == ["shared_metrics.send_without_enabled"]
    assert codes(second) == ["shared_metrics.send_without_enabled"]
    assert len([r for r in caplog.records if "send_without_enabled" in r.getMessage()]) == 1


def test_cfg_64_managed_overlay_cannot_touch_shared_metrics(env: Env) -> None:
    """CFG-64 / SM-7: a managed overlay is ignored for telemetry.shared_metrics but applies elsewhere."""
    write_config(env.hermes_home, "telemetry:\n  shared_metrics:\n    enabled: false\n")
    managed = write_config(env.root / "managed", "telemetry:\n  shared_metrics:\n    enabled: true\n    send: true\n"
                                                  "gateway:\n  telemetry:\n    session_segments:\n      max_turns: 7\n")
    s = load_profile_settings(env.hermes_home, managed=managed)
    assert not s.shared_metrics.enabled and not s.shared_metrics.send and s.session_segments.max_turns == 7
    assert "config.managed_value_ignored" in codes(s)
    write_config(env.hermes_home, "telemetry:\n  shared_metrics:\n    enabled: true\n")
    write_config(env.root / "managed", "telemetry:\n  shared_metrics:\n    enabled: false\n")
    assert load_profile_settings(env.hermes_home, managed=managed).shared_metrics.enabled is True


def test_cfg_67_send_consent_reread_uncached(env: Env) -> None:
    """CFG-67: the sender re-reads enabled/send/endpoint from the file each time."""
    write_config(env.hermes_home, "telemetry:\n  shared_metrics: {enabled: true, send: true, endpoint: 'https://m'}\n")
    assert read_shared_metrics(env.hermes_home).transmits
    write_config(env.hermes_home, "telemetry:\n  shared_metrics: {enabled: true, send: false, endpoint: 'https://m'}\n")
    assert not read_shared_metrics(env.hermes_home).transmits


def test_cfg_64a_snapshot_cached_until_reload(env: Env, process: Engine) -> None:
    """CFG-64a: a profile reads config.yaml once; reload() picks up changes."""
    write_config(env.hermes_home, "telemetry:\n  shared_metrics:\n    enabled: true\n")
    profile = open_profile()
    assert profile.home == env.hermes_home.resolve() and profile.settings.shared_metrics.enabled
    write_config(env.hermes_home, "telemetry:\n  shared_metrics:\n    enabled: false\n")
    assert profile.settings.shared_metrics.enabled
    assert profile.reload().shared_metrics.enabled is False and not profile.settings.shared_metrics.enabled
    assert open_profile() is profile


def test_hook_callback_timeout_applied_from_first_profile(env: Env, process: Engine) -> None:
    """§13 / 01 §11: plugins.hook_callback_timeout of the first hosted profile sets the engine option;
    it is restored when the last profile leaves."""
    write_config(env.root / "a", "plugins:\n  hook_callback_timeout: 2.5\n")
    write_config(env.root / "b", "plugins:\n  hook_callback_timeout: 9\n")
    a, b = open_profile(env.root / "a"), open_profile(env.root / "b")
    assert process.hook_callback_timeout == 2.5 and b.settings.hook_callback_timeout == 9
    a.close()
    b.close()
    assert process.hook_callback_timeout == 0


def test_cfg_51_cfg_54_two_profiles_share_plugins_keep_own_state(env: Env, process: Engine,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    """CFG-51: CFG-50..CFG-54: two HERMES_HOMEs in one process share one activation (one component instance,
    shared middleware, one log line) and keep their own config.yaml state; the last close releases."""
    env.select(env.write("pipeline.toml", PIPELINE))
    write_config(env.root / "alpha", "telemetry:\n  shared_metrics:\n    enabled: true\n"
                                     "gateway:\n  telemetry:\n    session_segments:\n      max_turns: 3\n")
    write_config(env.root / "beta", "gateway:\n  telemetry:\n    session_segments:\n      on_compaction: true\n")
    with caplog.at_level(logging.INFO, logger="hermes_pipeline.config"):
        alpha = open_profile(env.root / "alpha")
        beta = open_profile(env.root / "beta")
    assert alpha.activation.state is ActivationState.ACTIVE and beta.activation is alpha.activation
    assert process.plugins.names() == ["component:request_defaults", "component:observability"]
    assert sum("active process-wide" in r.getMessage() for r in caplog.records) == 1
    assert alpha.settings.shared_metrics.enabled and not beta.settings.shared_metrics.enabled
    assert alpha.settings.session_segments.max_turns == 3 and beta.settings.session_segments.on_compaction
    assert {p.home for p in open_profiles()} == {alpha.home, beta.home}
    seen: list[dict] = []
    for profile in (alpha, beta):
        host = profile.host(model="m")
        assert isinstance(host, Host) and host.engine is profile.engine and host.engine.parent is process
        assert host.segments.max_turns == profile.settings.session_segments.max_turns
        with host.session() as session, session.turn("hi") as turn:
            turn.call_llm({"model": "m"}, lambda request: seen.append(request) or {"choices": []})
    assert [r["temperature"] for r in seen] == [0.1, 0.1]  # shared middleware runs for both profiles
    own: list[str] = []
    alpha.engine.register_hook("on_session_start", lambda **kw: own.append("alpha"))
    for profile in (alpha, beta):
        profile.host().session().turn("x").end()
    assert own == ["alpha"]  # a profile-local consumer sees only its own profile's events
    alpha.close()
    assert process.has_middleware("llm_request")
    beta.close()
    assert not process.has_middleware("llm_request") and process.plugins.names() == []
    assert open_profiles() == []


def test_cfg_1_pipeline_file_cannot_set_profile_keys(env: Env, process: Engine) -> None:
    """CFG-1: the planes are independent: profile keys in the pipeline file are unknown fields there."""
    env.select(env.write("p.toml", 'version = 1\n[telemetry.shared_metrics]\nenabled = true\n'))
    profile = open_profile()
    assert profile.activation.state is ActivationState.ACTIVE
    assert not profile.settings.shared_metrics.enabled
    assert "plugin.unknown_field" in [d.code for d in profile.activation.diagnostics]


def test_cfg_68_cfg_9_profile_keys_work_without_pipeline(env: Env, process: Engine) -> None:
    """CFG-68 / CFG-9 / CFG-67a: shared metrics and segments come from config.yaml whether or not a
    pipeline file is selected; the observability section (features not available in this version) is
    reported, not silently kept."""
    write_config(env.hermes_home, "telemetry:\n  shared_metrics: {enabled: true}\n"
                                  "observability:\n  holograms: {enabled: true}\n")
    profile = open_profile()
    assert profile.activation.state is ActivationState.DISABLED
    assert profile.settings.shared_metrics.enabled
    assert [d.field for d in profile.settings.diagnostics
            if d.code == "config.unsupported_key"] == ["observability.holograms"]


def test_cfg_67a_shared_metrics_started_per_profile_from_config_yaml(env: Env, process: Engine) -> None:
    """CFG-67a / CFG-85 / SM-14: shared metrics start only for the profile whose config.yaml enables
    them, on that profile's engine; the other profile gets nothing and no files are created for it."""
    import sqlite3

    write_config(env.root / "on", "telemetry:\n  shared_metrics:\n    enabled: true\n")
    write_config(env.root / "off", "telemetry:\n  shared_metrics:\n    enabled: false\n")
    on, off = open_profile(env.root / "on"), open_profile(env.root / "off")
    # (every profile also writes the package's JSON Lines log, BOOK-47)
    assert set(on.consumers) == {"shared_metrics", "structured_logs"} and set(off.consumers) == {"structured_logs"}
    assert not process.has_hook("post_tool_call")  # not a process-wide plugin
    for profile in (on, off):
        with profile.host(model="m").session() as session, session.turn("hi") as turn:
            turn.call_tool("read_file", {"path": "x"}, lambda path: "text", tool_call_id="c1")
            turn.complete("done")
    on.consumers["shared_metrics"].flush()
    db = env.root / "on" / "telemetry" / "shared_metrics" / "metrics.sqlite3"
    with sqlite3.connect(db) as conn:
        counted = conn.execute("select count(*) from counter_aggregates").fetchone()[0]
    assert counted > 0 and not (env.root / "off" / "telemetry").exists()
    on.close()
    assert on.consumers == {}
