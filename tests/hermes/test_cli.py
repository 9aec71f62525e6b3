"""``hermes-pipeline hermes install`` and ``hermes doctor`` on profiles under tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_pipeline.cli.main import main
from hermes_pipeline.hermes.facts import read_profile
from tests._pipelines import write_pipeline

COMMENTED = """\
# my Hermes profile
model:
    default: hermes-demo-1   # the local model
plugins:
    enabled:
        - disk-cleanup
    disabled:
        - hermes_pipeline
"""


def test_install_adds_the_bridge_keeping_comments_and_layout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "config.yaml").write_text(COMMENTED, encoding="utf-8")
    assert main(["hermes", "install", "--home", str(tmp_path)]) == 0
    text = (tmp_path / "config.yaml").read_text(encoding="utf-8")
    assert text.startswith("# my Hermes profile\n") and "default: hermes-demo-1   # the local model" in text
    assert "        - disk-cleanup\n        - hermes_pipeline\n" in text
    facts = read_profile(tmp_path)
    assert facts.bridge_enabled and facts.enabled == ("disk-cleanup", "hermes_pipeline") and facts.disabled == ()
    assert "removed hermes_pipeline from plugins.disabled" in capsys.readouterr().out
    assert main(["hermes", "install", "--home", str(tmp_path)]) == 0  # idempotent
    assert (tmp_path / "config.yaml").read_text(encoding="utf-8") == text
    assert "already enabled" in capsys.readouterr().out


def test_install_creates_a_missing_config(tmp_path: Path) -> None:
    home = tmp_path / "new-profile"
    assert main(["hermes", "install", "--home", str(home)]) == 0
    assert read_profile(home).enabled == ("hermes_pipeline",)


def test_install_refuses_invalid_yaml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "config.yaml").write_text("plugins: [unclosed\n", encoding="utf-8")
    assert main(["hermes", "install", "--home", str(tmp_path)]) == 1
    assert "not valid YAML" in capsys.readouterr().err
    assert (tmp_path / "config.yaml").read_text(encoding="utf-8") == "plugins: [unclosed\n"


def _doctor(home: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    code = main(["hermes", "doctor", "--home", str(home), "--json"])
    return code, json.loads(capsys.readouterr().out)


def _checks(report: dict[str, object]) -> dict[str, dict[str, str]]:
    checks = report["checks"]
    assert isinstance(checks, list)
    return {c["name"]: c for c in checks}


def test_doctor_reports_a_profile_without_the_bridge(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HERMES_NEMO_RELAY_PLUGINS_TOML", raising=False)
    (tmp_path / "config.yaml").write_text("model: {default: m}\n", encoding="utf-8")
    code, report = _doctor(tmp_path, capsys)
    checks = _checks(report)
    assert code == 1 and report["ok"] is False
    assert checks["bridge enabled"]["verdict"] == "fail" and "hermes install" in checks["bridge enabled"]["fix"]
    assert checks["pipeline file"]["verdict"] == "fail" and report["reason"] == "bridge_not_enabled"


def _enabled_profile(home: Path, extra: str = "") -> None:
    (home / "config.yaml").write_text("plugins:\n  enabled: [hermes_pipeline]\n" + extra, encoding="utf-8")


def test_doctor_fails_when_nothing_would_be_exported(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #27 (8): the variable unset and no profile consumer on: exit 1, saying why; --json names the reason."""
    monkeypatch.delenv("HERMES_NEMO_RELAY_PLUGINS_TOML", raising=False)
    _enabled_profile(tmp_path)
    code, report = _doctor(tmp_path, capsys)
    assert code == 1 and report["ok"] is False and report["exports"] is False
    assert report["reason"] == "no_pipeline_no_consumer"
    check = _checks(report)["pipeline file"]
    assert check["verdict"] == "fail" and "export nothing" in check["detail"] and "observability" in check["fix"]
    assert main(["hermes", "doctor", "--home", str(tmp_path)]) == 1
    assert "would export nothing (no_pipeline_no_consumer)" in capsys.readouterr().out


@pytest.mark.parametrize("keys", ["observability:\n  trajectories:\n    enabled: true\n",
                                  "observability:\n  audit:\n    enabled: true\n",
                                  "observability:\n  otel_enabled: true\n",
                                  "telemetry:\n  shared_metrics:\n    enabled: true\n"])
def test_doctor_is_ready_with_only_a_profile_consumer(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch, keys: str) -> None:
    """Without a pipeline file the profile's observability.* keys make the bridge record: ready, and said so."""
    monkeypatch.delenv("HERMES_NEMO_RELAY_PLUGINS_TOML", raising=False)
    _enabled_profile(tmp_path, keys)
    code, report = _doctor(tmp_path, capsys)
    assert code == 0 and report["ok"] is True and report["reason"] is None and report["exports"] is True
    assert _checks(report)["profile consumers"]["verdict"] == "ok"
    from hermes_pipeline.hermes.facts import read_profile

    assert read_profile(tmp_path).profile_consumers()  # the bridge's own start rule agrees


def test_doctor_fails_on_a_misspelt_component_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A pipeline file whose only component kind is misspelt exports nothing: exit 1, reason named."""
    pipeline = tmp_path / "plugins.toml"
    pipeline.write_text('version = 1\n[[components]]\nkind = "observabilty"\n[components.config]\nversion = 4\n',
                        encoding="utf-8")
    monkeypatch.setenv("HERMES_NEMO_RELAY_PLUGINS_TOML", str(pipeline))
    _enabled_profile(tmp_path)
    code, report = _doctor(tmp_path, capsys)
    assert code == 1 and report["reason"] in ("pipeline_exports_nothing", "pipeline_invalid"), report
    failed = [c for c in report["checks"] if c["verdict"] == "fail"]  # type: ignore[union-attr]
    assert failed and any("observabilty" in c["detail"] for c in failed)


def test_doctor_ready_profile_lists_destinations(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    pipeline = write_pipeline(tmp_path, "observability",
                              extra=f'[components.config.atif]\nenabled = true\noutput_directory = "{tmp_path / "out"}"\n')
    monkeypatch.setenv("HERMES_NEMO_RELAY_PLUGINS_TOML", str(pipeline))
    assert main(["hermes", "install", "--home", str(tmp_path)]) == 0
    capsys.readouterr()
    code, report = _doctor(tmp_path, capsys)
    checks = _checks(report)
    assert code == 0 and report["ok"] is True, report
    assert checks["pipeline file"]["verdict"] == "ok" and any("atif" in d for d in report["destinations"])


def test_doctor_flags_nemo_relay_on_the_same_pipeline_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    pipeline = tmp_path / "plugins.toml"
    pipeline.write_text('version = 1\n', encoding="utf-8")
    monkeypatch.setenv("HERMES_NEMO_RELAY_PLUGINS_TOML", str(pipeline))
    (tmp_path / "config.yaml").write_text("plugins:\n  enabled: [hermes_pipeline, observability/nemo_relay]\n",
                                          encoding="utf-8")
    code, report = _doctor(tmp_path, capsys)
    other = _checks(report)["other observability plugins"]
    assert code == 1 and other["verdict"] == "fail"
    assert "observability/nemo_relay" in other["detail"]
    assert "hermes plugins disable observability/nemo_relay" in other["fix"]
