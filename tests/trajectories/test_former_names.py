"""The stores' former "projection" names still work and say their new name once (issue #29 item 6: one word per
concept; the glossary is in docs/architecture.md): ``attach_store(shared_projection=...)`` is
``attach_store(stream=...)`` and ``StoreHandle.projection`` is ``StoreHandle.stream``, for the trajectory store
(BOOK-28) and the observability store (BOOK-16) alike; a misspelt or doubled keyword is a ``TypeError`` naming it."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline import Engine, _deprecated
from hermes_pipeline.config.observability_settings import ObservabilitySettings
from hermes_pipeline.export.scope_hooks import ScopePlugin
from hermes_pipeline.sinks import observability_store, trajectory_store


def _trajectory(home: Path, **keywords: Any) -> Any:
    return trajectory_store.attach_store(Engine(), home, home / "trajectories", retention_days=0, **keywords)


def _audit(home: Path, **keywords: Any) -> Any:
    return observability_store.attach_store(Engine(), home, ObservabilitySettings(audit_enabled=True), **keywords)


STORES = [pytest.param(_trajectory, "trajectory_store", id="trajectory_store"),
          pytest.param(_audit, "observability_store", id="observability_store")]


def deprecations(call: Callable[[], Any]) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]


@pytest.mark.parametrize(("attach", "package"), STORES)
def test_shared_projection_keyword_is_the_stream_and_warns_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                attach: Callable[..., Any], package: str) -> None:
    monkeypatch.setattr(_deprecated, "_WARNED", set())
    stream = ScopePlugin(deferred=True)
    handles = []
    try:
        for round_ in range(2):
            handle, said = deprecations(lambda: attach(tmp_path / f"h{round_}", shared_projection=stream))
            handles.append(handle)
            assert handle.stream is stream and handle.plugin_name is None  # listens to it, adds no plugin
            assert said == ([f"{package}.attach_store(shared_projection=...) is deprecated; use "
                             f"{package}.attach_store(stream=...)"] if round_ == 0 else [])
        same, said = deprecations(lambda: (handles[0].projection, handles[1].projection))
        assert same == (stream, stream)
        assert said == [f"{package}.StoreHandle.projection is deprecated; use {package}.StoreHandle.stream"]
    finally:
        for handle in handles:
            handle.close()
        stream.shutdown(5.0)


@pytest.mark.parametrize(("attach", "package"), STORES)
def test_a_doubled_or_unknown_keyword_is_a_type_error_naming_it(tmp_path: Path, attach: Callable[..., Any],
                                                               package: str) -> None:
    stream = ScopePlugin(deferred=True)
    with pytest.raises(TypeError, match="got both 'shared_projection' .* and 'stream'"):
        attach(tmp_path, stream=stream, shared_projection=stream)
    with pytest.raises(TypeError, match="unexpected keyword argument 'shared_projecton'"):
        attach(tmp_path, shared_projecton=stream)
    stream.shutdown(5.0)
