"""A profile's consumers: the built-ins and those other distributions publish in the entry-point group
``hermes_pipeline.profile_consumers`` start when a profile opens and close when it closes; a consumer that
fails never stops the profile, and its failure is kept and said (spec 03 CFG-85; issue #29 item 1)."""

from __future__ import annotations

import logging
import os
import re
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline import Engine, runtime
from hermes_pipeline.profile import (BUILTIN_CONSUMERS, CONSUMER_ENTRY_POINT_GROUP, ProfileConsumer, activation,
                                     open_profile, release_all)

CONSUMER_SOURCE = """\
EVENTS = []


class Handle:
    def __init__(self, home):
        self.home = home

    def close(self):
        EVENTS.append(("close", self.home))


class Consumer:
    name = "ignored: the entry point names it"

    def enabled(self, settings):
        return {enabled}

    def attach(self, profile):
        EVENTS.append(("attach", str(profile.home), profile.stream is not None))
        return Handle(str(profile.home))
"""


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No pipeline file, a fresh process engine and activation, a site directory on ``sys.path`` for fake
    distributions; everything released afterwards."""
    for name in list(os.environ):
        if name.startswith(("HERMES_NEMO_RELAY_", "OTEL_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HERMES_PIPELINE_SYSTEM_PLUGINS_TOML", str(tmp_path / "etc" / "plugins.toml"))
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    previous = runtime.set_engine(Engine())
    monkeypatch.setattr(activation, "PROCESS", activation.ProcessActivation())
    before = set(sys.modules)
    try:
        yield site
    finally:
        release_all()
        runtime.set_engine(previous)
        for name in set(sys.modules) - before:
            if name.startswith("hp_consumer_"):
                del sys.modules[name]


def publish(site: Path, entry_points: dict[str, str], *, source: str | None = None,
            enabled: bool = True) -> str:
    """A fake installed distribution publishing ``entry_points`` (``{MODULE}`` stands for a module of
    ``source``, by default :data:`CONSUMER_SOURCE`); returns the module's name."""
    module = f"hp_consumer_{uuid.uuid4().hex[:10]}"
    text = source if source is not None else CONSUMER_SOURCE.format(enabled=enabled)
    (site / f"{module}.py").write_text(textwrap.dedent(text), encoding="utf-8")
    info = site / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n", encoding="utf-8")
    lines = [f"[{CONSUMER_ENTRY_POINT_GROUP}]"] + [f"{k} = {v.format(MODULE=module)}" for k, v in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return module


def events(module: str) -> list[Any]:
    return list(sys.modules[module].EVENTS)


def test_cfg_85_a_published_consumer_starts_with_the_profile_and_closes_with_it(isolated: Path,
                                                                                tmp_path: Path) -> None:
    """CFG-85: a consumer published as an entry point sits beside the built-ins: attached with the profile
    (it gets the profile's one shared stream), closed when the profile closes, under the entry point's name."""
    module = publish(isolated, {"audit_mirror": "{MODULE}:Consumer"})
    home = tmp_path / "p"
    profile = open_profile(home)
    assert "audit_mirror" in profile.consumers
    assert events(module) == [("attach", str(profile.home), True)]
    assert profile.consumer_failures == {}
    profile.close()
    assert events(module)[-1] == ("close", str(profile.home))


def test_cfg_85_a_consumer_that_says_it_is_off_is_never_attached(isolated: Path, tmp_path: Path) -> None:
    module = publish(isolated, {"audit_mirror": "{MODULE}:Consumer"}, enabled=False)
    profile = open_profile(tmp_path / "p")
    assert "audit_mirror" not in profile.consumers
    assert events(module) == []


def test_cfg_85_a_broken_entry_point_is_said_and_kept_and_the_profile_still_opens(
        isolated: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """An entry point that does not import, one that is no consumer, and one that raises in ``attach``: each
    is named in ``profile.consumer_failures`` and in a warning; the profile opens with the others."""
    publish(isolated, {"missing_module": "hp_consumer_nowhere_at_all:Consumer"})
    publish(isolated, {"not_a_consumer": "{MODULE}:VALUE"}, source="VALUE = 3\n")
    publish(isolated, {"raising": "{MODULE}:Consumer"}, source="""\
        class Consumer:
            def attach(self, profile):
                raise OSError("disk full while attaching, api_key=sk-live-0123456789abcdefghij")
        """)
    good = publish(isolated, {"good": "{MODULE}:Consumer"})
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline"):
        profile = open_profile(tmp_path / "p")
    failures = profile.consumer_failures
    assert set(failures) == {"missing_module", "not_a_consumer", "raising"}
    assert "failed to load" in failures["missing_module"] and "ModuleNotFoundError" in failures["missing_module"]
    assert "has no attach(profile) method" in failures["not_a_consumer"]
    assert re.fullmatch(r"OSError: disk full while attaching, api_key=<redacted(:[0-9a-f]{4,})?>", failures["raising"])
    assert "sk-live" not in caplog.text
    assert "good" in profile.consumers and events(good)[0][0] == "attach"
    assert "structured_logs" in profile.consumers  # the built-ins run as before
    for name in failures:
        assert f"{name} could not start for profile {profile.home}" in caplog.text


def test_cfg_85_a_published_consumer_cannot_take_a_built_in_name(isolated: Path, tmp_path: Path) -> None:
    module = publish(isolated, {"structured_logs": "{MODULE}:Consumer"})
    profile = open_profile(tmp_path / "p")
    assert "uses the name of a consumer already registered" in \
        profile.consumer_failures[f"structured_logs ({module}:Consumer)"]
    assert module not in sys.modules  # never even imported
    assert type(profile.consumers["structured_logs"]).__module__ == "hermes_pipeline.logs.jsonl"


def test_the_built_in_consumers_are_consumers_in_their_start_order() -> None:
    assert [consumer.name for consumer in BUILTIN_CONSUMERS] == [
        "structured_logs", "shared_metrics", "trajectory_store", "observability_store", "quick_otel"]
    assert all(isinstance(consumer, ProfileConsumer) for consumer in BUILTIN_CONSUMERS)
