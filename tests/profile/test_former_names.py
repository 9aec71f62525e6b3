"""The profile's former "projection" names still work and say their new name once (issue #29 item 6: one word
per concept; the glossary is in docs/architecture.md): ``Profile.shared_projection`` is ``Profile.stream``,
``SharedStream.projection`` is ``SharedStream.scope_plugin``."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_pipeline import Engine, _deprecated, runtime
from hermes_pipeline.profile import activation, open_profile, release_all


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A process of the test's own: no pipeline file, no former name warned about yet."""
    monkeypatch.delenv("HERMES_NEMO_RELAY_PLUGINS_TOML", raising=False)
    monkeypatch.setattr(_deprecated, "_WARNED", set())
    previous = runtime.set_engine(Engine())
    monkeypatch.setattr(activation, "PROCESS", activation.ProcessActivation())
    try:
        yield
    finally:
        release_all()
        runtime.set_engine(previous)


def uses(read: object) -> list[str]:
    """The deprecation messages of calling ``read`` twice (a former name warns the first time only)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = read()  # type: ignore[operator]
        second = read()  # type: ignore[operator]
    assert first is second
    return [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]


def test_profile_shared_projection_is_the_stream_and_warns_once(tmp_path: Path) -> None:
    home = tmp_path / "p"
    home.mkdir()
    profile = open_profile(home)
    with pytest.warns(DeprecationWarning, match="Profile.shared_projection is deprecated; use Profile.stream"):
        assert profile.shared_projection is profile.stream
    assert uses(lambda: profile.shared_projection) == []  # already warned above: once per process
    _deprecated._WARNED.clear()
    assert uses(lambda: profile.shared_projection) == [
        "Profile.shared_projection is deprecated; use Profile.stream"]


def test_shared_stream_projection_is_its_scope_plugin_and_warns_once(tmp_path: Path) -> None:
    home = tmp_path / "p"
    home.mkdir()
    (home / "config.yaml").write_text("observability:\n  trajectories:\n    enabled: true\n", encoding="utf-8")
    profile = open_profile(home)
    stream = profile.stream
    assert stream.scope_plugin is not None  # the trajectory store listens
    assert uses(lambda: stream.projection) == ["SharedStream.projection is deprecated; use SharedStream.scope_plugin"]
    assert stream.projection is stream.scope_plugin
