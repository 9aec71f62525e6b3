"""Profile config keys: what ``config set`` accepts works, everything else is refused (issue 11 item 6;
spec 03 §13, CFG-64..CFG-69, CFG-67a; 01 OBS-71 clamping of the hook timeout)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_pipeline.cli.main import main
from hermes_pipeline.config import load_profile_settings
from hermes_pipeline.config.profile_config import KNOWN_KEYS, ProfileSettings
from hermes_pipeline.config.profile_edit import UnknownProfileKeyError, get_value, set_value

from .conftest import Env


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["config", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cfg_13_set_refuses_a_typo_with_did_you_mean(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """§13 / CFG-64: ``config set telemetry.shared_metric.enabled true`` (a typo) is refused, exit 1, with
    the closest known key; config.yaml is not written."""
    code, out, err = run(capsys, "set", "telemetry.shared_metric.enabled", "true")
    assert code == 1 and out == ""
    assert "telemetry.shared_metric.enabled" in err and "did you mean telemetry.shared_metrics.enabled?" in err
    assert "--force" in err and "Traceback" not in err
    assert not (env.hermes_home / "config.yaml").exists()


def test_cfg_13_set_refuses_an_unknown_key_unless_forced(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """§13: ``config set foo.bar 1`` is refused (the known keys are listed); ``--force`` writes it as a
    forward-compatible key and says this version does not read it."""
    code, _, err = run(capsys, "set", "foo.bar", "1")
    assert code == 1 and "not a config.yaml key this version reads" in err
    assert all(key in err for key in KNOWN_KEYS)
    assert not (env.hermes_home / "config.yaml").exists()
    code, out, err = run(capsys, "set", "foo.bar", "1", "--force")
    assert code == 0 and "set foo.bar = 1" in out and "this version does not read it" in err
    assert (env.hermes_home / "config.yaml").read_text() == "foo:\n  bar: 1\n"
    code, _, err = run(capsys, "get", "foo.bar")
    assert code == 1 and "not a config.yaml key this version reads" in err
    assert run(capsys, "get", "foo.bar", "--force")[1] == "1\n"


def test_cfg_13_set_reports_clamping_of_the_hook_timeout(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """§13 / OBS-71: ``plugins.hook_callback_timeout 1000`` is written but the user is told it will be
    clamped to 600; the loaded profile indeed uses 600."""
    code, out, err = run(capsys, "set", "plugins.hook_callback_timeout", "1000")
    assert code == 0 and "set plugins.hook_callback_timeout = 1000" in out
    assert "will be clamped to 600" in err
    assert load_profile_settings(env.hermes_home).hook_callback_timeout == 600
    code, _, err = run(capsys, "set", "plugins.hook_callback_timeout", "30")
    assert code == 0 and "clamped" not in err


@pytest.mark.parametrize("key, value, needle", [
    ("telemetry.shared_metrics.enabled", "yes", "expected a boolean"),
    ("telemetry.shared_metrics.send", "1", "expected a boolean"),
    ("gateway.telemetry.session_segments.max_turns", "2.5", "expected an integer >= 0"),
    ("plugins.hook_callback_timeout", "soon", "expected a number of seconds >= 0"),
    ("telemetry.shared_metrics.endpoint", "http://metrics.example", "expected an https:// URL"),
])
def test_cfg_69_set_validates_value_types(env: Env, capsys: pytest.CaptureFixture[str], key: str, value: str,
                                          needle: str) -> None:
    """CFG-69 / CFG-66: a value of the wrong type is refused even with ``--force`` (which only admits
    unknown keys), and nothing is written."""
    for extra in ((), ("--force",)):
        code, _, err = run(capsys, "set", key, value, *extra)
        assert code == 1 and needle in err and key in err
    assert not (env.hermes_home / "config.yaml").exists()


@pytest.mark.parametrize("key", ["observability.holograms.enabled", "observability.telepathy"])
def test_cfg_67a_unavailable_observability_keys_are_refused_not_ignored(env: Env, capsys: pytest.CaptureFixture[str],
                                                                        key: str) -> None:
    """CFG-67a: observability features this version does not have (every section but the ones it reads),
    so their keys are refused by ``set`` and ``get`` with a message saying so, instead of being accepted
    and ignored."""
    code, _, err = run(capsys, "set", key, "true")
    assert code == 1 and "not available in this version" in err
    assert not (env.hermes_home / "config.yaml").exists()
    (env.hermes_home).mkdir(parents=True, exist_ok=True)
    (env.hermes_home / "config.yaml").write_text("observability:\n  trajectories: {enabled: true}\n  telepathy: x\n"
                                                 "  holograms: {enabled: true}\n")
    code, out, err = run(capsys, "get", key)
    assert code == 1 and out == "" and "not available in this version" in err


def test_cfg_67a_observability_section_in_config_yaml_is_reported_not_parsed(env: Env) -> None:
    """CFG-67a / CFG-69: an ``observability:`` section (and unknown keys in the sections the engine owns)
    yields a ``config.unsupported_key`` warning naming the key; the settings carry no ignored fields."""
    env.hermes_home.mkdir(parents=True)
    (env.hermes_home / "config.yaml").write_text(
        "observability:\n  holograms: production\n  trajectories: {enabled: true}\n"
        "telemetry:\n  shared_metrics: {enabled: true, sned: true}\n"
        "model: {default: gpt-x}\n")  # the agent's own keys are not this schema's business
    settings = load_profile_settings(env.hermes_home, log=False)
    found = {(d.code, d.field): d.message for d in settings.diagnostics}
    assert "not available in this version" in found[("config.unsupported_key", "observability.holograms")]
    assert "did you mean telemetry.shared_metrics.send?" in found[("config.unsupported_key",
                                                                   "telemetry.shared_metrics.sned")]
    assert len(found) == 2 and settings.shared_metrics.enabled is True
    assert settings.trajectories.enabled is True  # the trajectory store is available (BOOK-28)
    assert "environment" not in {f.name for f in dataclasses.fields(ProfileSettings)}  # observability.* keys live in settings.observability


def test_cfg_13_every_schema_key_round_trips_and_is_read(tmp_path: Path) -> None:
    """§13: every key ``config set`` accepts is one the loader reads: set each to a non-default value,
    load the profile, and find the value in the settings."""
    values = {"telemetry.shared_metrics.enabled": True, "telemetry.shared_metrics.send": True,
              "telemetry.shared_metrics.endpoint": "https://metrics.example/v1",
              "gateway.telemetry.session_segments.on_compaction": True,
              "gateway.telemetry.session_segments.max_turns": 7, "plugins.hook_callback_timeout": 12,
              "observability.trajectories.enabled": True, "observability.trajectories.dir": "runs",
              "observability.trajectories.retention_days": 30, "observability.dashboard.host": "::1",
              "observability.dashboard.port": 3002, "observability.dashboard.jaeger_url": "http://localhost:16686",
              "observability.environment": "production", "observability.audit.enabled": True,
              "observability.audit.memory_dirs": ["memories", "notes"], "observability.audit.skills_dir": "my-skills",
              "observability.audit.excerpt_chars": 80, "observability.memory_tools": {"save": "memory.update"},
              "observability.pricing": {"openai/m": {"input": 1, "output": 2}}, "observability.otel_enabled": True,
              "observability.otel_endpoint": "http://collector:4318", "observability.otel_service_name": "svc",
              "observability.trace_sampling_rate": 0.5, "observability.retention.runs_days": 30,
              "observability.retention.history_days": 100, "observability.logs.path": "logs/x.jsonl",
              "observability.max_value_chars": 5000, "observability.max_queue_bytes": 2**21}
    alert_values = {"enabled": True, "notifiers": ["webhook"], "cost_spike_factor": 4.5, "cost_window_minutes": 30,
                    "cost_baseline_days": 7, "cost_min_active_days": 2, "systemd_unit": "hermes.service",
                    "restart_count": 5, "restart_window_minutes": 20, "llm_failures": 6, "skill_failures": 3,
                    "task_success_rate": 0.8, "task_window_minutes": 15, "task_min_runs": 10,
                    "write_storm_count": 50, "write_storm_minutes": 5, "critical_renotify_minutes": 10,
                    "medium_renotify_minutes": 60, "medium_collect_minutes": 2, "digest_time": "07:30",
                    "max_per_hour": 3, "send_timeout_seconds": 7.5, "run_timeout_seconds": 30,
                    "email_host": "smtp.example", "email_port": 2525, "email_from": "a@b.c", "email_to": ["ops@b.c"]}
    values.update({f"observability.alerts.{k}": v for k, v in alert_values.items()})
    assert set(values) == set(KNOWN_KEYS)
    for key, value in values.items():
        set_value(tmp_path, key, value)
        assert get_value(tmp_path, key) == (True, value)
    s = load_profile_settings(tmp_path, log=False)
    assert s.diagnostics == ()
    assert (s.shared_metrics.enabled, s.shared_metrics.send, s.shared_metrics.endpoint) == (
        True, True, "https://metrics.example/v1")
    assert (s.session_segments.on_compaction, s.session_segments.max_turns) == (True, 7)
    assert s.hook_callback_timeout == 12
    assert (s.trajectories.enabled, s.trajectories.dir, s.trajectories.retention_days) == (True, "runs", 30)
    assert (s.dashboard.host, s.dashboard.port, s.dashboard.jaeger_url) == ("::1", 3002, "http://localhost:16686")
    o = s.observability
    assert (o.environment, o.audit_enabled, o.memory_dirs, o.skills_dir, o.excerpt_chars) == (
        "production", True, ("memories", "notes"), "my-skills", 80)
    assert (o.memory_tools, o.pricing) == ({"save": "memory.update"}, {"openai/m": {"input": 1, "output": 2}})
    assert (o.otel_enabled, o.otel_endpoint, o.otel_service_name, o.trace_sampling_rate) == (
        True, "http://collector:4318", "svc", 0.5)
    assert (o.runs_days, o.history_days, o.log_path) == (30, 100, "logs/x.jsonl")
    assert (o.max_value_chars, o.max_queue_bytes) == (5000, 2**21)
    for name, value in alert_values.items():  # observability.alerts.* (the alert evaluator)
        assert getattr(s.alerts, name.replace(".", "_")) == (tuple(value) if isinstance(value, list) else value)


def test_cfg_13_unknown_key_error_is_typed_and_names_the_key(tmp_path: Path) -> None:
    """Errors a user can cause are typed: :class:`UnknownProfileKeyError` names the key and the suggestion."""
    with pytest.raises(UnknownProfileKeyError) as caught:
        set_value(tmp_path, "plugins.hook_callback_timout", 5)
    assert caught.value.key == "plugins.hook_callback_timout"
    assert caught.value.suggestion == "plugins.hook_callback_timeout"
    assert not (tmp_path / "config.yaml").exists()


def test_cfg_13_cli_exit_code_for_unknown_key_in_a_subprocess(env: Env, tmp_path: Path) -> None:
    """§13: the installed command exits non-zero for an unknown key (what scripts check)."""
    result = subprocess.run([sys.executable, "-m", "hermes_pipeline.cli.main", "config", "set", "foo.bar", "1",
                             "--home", str(tmp_path / "p")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "foo.bar" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "p" / "config.yaml").exists()
