"""The profile's ``observability.max_queue_bytes`` bounds, in estimated bytes, every queue between the agent and
the profile's consumers: its own publication queue and the event queues of the observability store, the
trajectory store and the quick OTel endpoint; unset, the publication queue keeps its 64 MiB default and the
consumers' queues their event count (issue #29 item 9: memory stays bounded on kilobyte payloads; FMT-80)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline import Engine, runtime
from hermes_pipeline.export.sizes import event_bytes
from hermes_pipeline.export.writer import DEFAULT_MAX_QUEUE_BYTES, MIN_MAX_QUEUE_BYTES
from hermes_pipeline.config.observability_settings import QUEUE_BYTES_MIN
from hermes_pipeline.profile import activation, open_profile, release_all
from hermes_pipeline.profile.profiles import load_profile_settings
from hermes_pipeline.testing import closed_port


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for name in list(os.environ):
        if name.startswith(("HERMES_NEMO_RELAY_", "OTEL_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HERMES_PIPELINE_SYSTEM_PLUGINS_TOML", str(tmp_path / "etc" / "plugins.toml"))
    previous = runtime.set_engine(Engine())
    monkeypatch.setattr(activation, "PROCESS", activation.ProcessActivation())
    try:
        yield tmp_path
    finally:
        release_all()
        runtime.set_engine(previous)


def _home(root: Path, extra: str) -> Path:
    home = root / "home"
    home.mkdir()
    with closed_port() as port:  # nothing is sent: no session runs
        (home / "config.yaml").write_text(
            "observability:\n  audit: {enabled: true}\n  trajectories: {enabled: true}\n  otel_enabled: true\n"
            f"  otel_endpoint: http://127.0.0.1:{port}\n{extra}", encoding="utf-8")
    return home


def _queues(profile: Any) -> dict[str, Any]:
    return {"publication": profile.stream.scope_plugin._publication,
            "observability_store": profile.consumers["observability_store"].sink._writer,
            "trajectory_store": profile.consumers["trajectory_store"].sink._atif._writer,
            "quick_otel": profile.consumers["quick_otel"].sink._events}


def test_the_key_bounds_every_queue_of_the_profiles_consumers(isolated: Path) -> None:
    """Set to 2 MiB: each queue is bounded at 2 MiB and sizes its items by the event's estimate (FMT-80)."""
    home = _home(isolated, "  max_queue_bytes: 2097152\n")
    with open_profile(home) as profile:
        queues = _queues(profile)
        assert {name: q.byte_capacity for name, q in queues.items()} == dict.fromkeys(queues, 2 * 2**20)
        for name in ("observability_store", "trajectory_store", "quick_otel"):
            assert queues[name]._size is event_bytes, name  # items are sized, not counted as empty


def test_unset_the_publication_queue_keeps_its_default_and_the_consumers_their_count(isolated: Path) -> None:
    with open_profile(_home(isolated, "")) as profile:
        queues = _queues(profile)
        assert queues.pop("publication").byte_capacity == DEFAULT_MAX_QUEUE_BYTES
        assert {name: q.byte_capacity for name, q in queues.items()} == dict.fromkeys(queues)


@pytest.mark.parametrize("value", ["1000", "true", "1048575", "-1", "'64MiB'"])
def test_a_bad_value_is_a_warning_naming_the_key_and_the_default_applies(isolated: Path, value: str) -> None:
    """CFG-13: a value below 1 MiB or not an integer is reported with the key's name and ignored."""
    home = _home(isolated, f"  max_queue_bytes: {value}\n")
    settings = load_profile_settings(home, log=False)
    problems = [d for d in settings.diagnostics if d.field == "observability.max_queue_bytes"]
    assert problems and "integer >= 1048576" in problems[0].message
    assert settings.observability.max_queue_bytes is None


def test_the_floor_is_the_component_keys_floor() -> None:
    assert QUEUE_BYTES_MIN == MIN_MAX_QUEUE_BYTES
