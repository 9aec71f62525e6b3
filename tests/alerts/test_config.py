"""observability.alerts.* keys (spec 06 §0, BOOK-43 defaults) through config set/get and the reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_pipeline.cli.main import main
from hermes_pipeline.config.alert_settings import DEFAULTS, AlertSettings, alerts_from
from hermes_pipeline.config.diagnostics import Diagnostics
from hermes_pipeline.config.profile_config import KNOWN_KEYS


def test_book43_normative_defaults() -> None:
    """BOOK-42..44 defaults: 3x cost, 10 LLM failures, 5 skill failures, 50%/4 runs, 100 writes/10 min,
    30 min / 4 h re-notify, 5 min medium batching, 08:00 digest, 10 per hour; alerts off."""
    cfg = AlertSettings()
    assert (cfg.cost_spike_factor, cfg.cost_window_minutes, cfg.cost_baseline_days, cfg.cost_min_active_days) == \
        (3.0, 60, 14, 3)
    assert (cfg.llm_failures, cfg.skill_failures, cfg.task_success_rate, cfg.task_min_runs) == (10, 5, 0.5, 4)
    assert (cfg.write_storm_count, cfg.write_storm_minutes, cfg.restart_count, cfg.restart_window_minutes) == \
        (100, 10, 3, 10)
    assert (cfg.critical_renotify_minutes, cfg.medium_renotify_minutes) == (30, 240)
    assert (cfg.medium_collect_minutes, cfg.digest_time, cfg.max_per_hour) == (5, "08:00", 10)
    assert not cfg.enabled and cfg.systemd_unit is None
    assert alerts_from({}) == cfg
    for key, value in DEFAULTS.items():  # the table and the dataclass say the same
        field = key.removeprefix("observability.alerts.").replace(".", "_")
        assert getattr(cfg, field) == (tuple(value) if isinstance(value, list) else value), key
        assert key in KNOWN_KEYS


def test_alert_keys_work_in_config_yaml_and_config_set_get(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """config set/get accept the keys, refuse bad values, and the evaluator reads what was set."""
    home = str(tmp_path)
    assert main(["config", "set", "observability.alerts.max_per_hour", "4", "--home", home]) == 0
    assert main(["config", "set", "observability.alerts.notifiers", "[webhook, feishu]", "--home", home]) == 0
    assert main(["config", "set", "observability.alerts.systemd_unit", "hermes-gateway.service", "--home", home]) == 0
    assert main(["config", "set", "observability.alerts.digest_time", "25:00", "--home", home]) != 0
    capsys.readouterr()
    assert main(["config", "get", "observability.alerts.notifiers", "--home", home]) == 0
    assert "webhook" in capsys.readouterr().out
    from hermes_pipeline.config.profile_config import read_yaml_mapping

    raw, _ = read_yaml_mapping(tmp_path / "config.yaml")
    cfg = alerts_from(raw)
    assert (cfg.max_per_hour, cfg.notifiers, cfg.systemd_unit) == (4, ("webhook", "feishu"), "hermes-gateway.service")


def test_invalid_value_falls_back_with_a_warning() -> None:
    diagnostics = Diagnostics(log=False)
    cfg = alerts_from({"observability": {"alerts": {"llm_failures": 0, "task_success_rate": 0.25}}}, diagnostics)
    assert cfg.llm_failures == 10 and cfg.task_success_rate == 0.25
    assert [d.field for d in diagnostics.items] == ["observability.alerts.llm_failures"]
