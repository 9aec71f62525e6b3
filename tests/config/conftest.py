"""Fixtures for the configuration tests: an isolated environment (temporary XDG, HOME, system
path and HERMES_HOME), a fresh process engine and activation, and helpers for temporary
distributions and dynamic-plugin manifests. Nothing touches the real home directory or /etc."""

from __future__ import annotations

import hashlib
import os
import sys
import textwrap
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from hermes_pipeline import Engine, runtime
from hermes_pipeline import profile
from hermes_pipeline.config.discovery import PipelineSettings
from hermes_pipeline.profile import activation
from tests._pipelines import pipeline_text

OBS_MINIMAL = pipeline_text("observability")
"""The smallest pipeline: the observability component with nothing enabled (``tests/data/pipelines``)."""


@dataclass
class Env:
    """Paths of the isolated environment."""

    root: Path
    xdg: Path
    home: Path
    hermes_home: Path
    user_file: Path
    system_file: Path
    monkeypatch: pytest.MonkeyPatch

    def settings(self, **overrides: object) -> PipelineSettings:
        return PipelineSettings(**overrides)  # type: ignore[arg-type]

    def select(self, path: Path | str) -> None:
        self.monkeypatch.setenv("HERMES_NEMO_RELAY_PLUGINS_TOML", str(path))

    def write(self, relative: str | Path, text: str) -> Path:
        path = Path(relative) if Path(relative).is_absolute() else self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    for name in list(os.environ):
        if name.startswith(("HERMES_NEMO_RELAY_", "OTEL_")) or name in (
                "HERMES_HOME", "HERMES_MANAGED_CONFIG", "HERMES_PIPELINE_SYSTEM_PLUGINS_TOML", "USERPROFILE"):
            monkeypatch.delenv(name)
    e = Env(tmp_path, tmp_path / "xdg", tmp_path / "home", tmp_path / "hermes",
            tmp_path / "xdg" / "nemo-relay" / "plugins.toml", tmp_path / "etc" / "nemo-relay" / "plugins.toml",
            monkeypatch)
    e.home.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(e.xdg))
    monkeypatch.setenv("HOME", str(e.home))
    monkeypatch.setenv("HERMES_PIPELINE_SYSTEM_PLUGINS_TOML", str(e.system_file))
    monkeypatch.setenv("HERMES_HOME", str(e.hermes_home))
    monkeypatch.chdir(tmp_path)
    return e


@pytest.fixture
def process(env: Env, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    """A fresh process engine and process activation; everything released afterwards."""
    engine = Engine()
    previous = runtime.set_engine(engine)
    monkeypatch.setattr(activation, "PROCESS", activation.ProcessActivation())
    try:
        yield engine
    finally:
        profile.release_all()
        runtime.set_engine(previous)


# --------------------------------------------------------------------------- temporary distributions


@dataclass
class Site:
    """A directory on sys.path holding fake installed distributions."""

    path: Path

    def module(self, source: str, prefix: str = "hp_test_mod") -> str:
        name = f"{prefix}_{uuid.uuid4().hex[:10]}"
        (self.path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        return name

    def dist(self, name: str, entry_points: dict[str, str]) -> None:
        info = self.path / f"{name.replace('-', '_')}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
        lines = ["[hermes_pipeline.components]"] + [f"{k} = {v}" for k, v in entry_points.items()]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    before = set(sys.modules)
    yield Site(path)
    for name in set(sys.modules) - before:
        if name.startswith("hp_test_"):
            del sys.modules[name]


COMPONENT_SOURCE = """\
EVENTS = []

class Component:
    kind = {kind!r}

    def __init__(self, ctx):
        self.ctx = ctx

    def activate(self):
        EVENTS.append(("activate", self.kind, dict(self.ctx.config)))
        if self.ctx.config.get("fail"):
            raise RuntimeError("activation refused by test")
        self.ctx.register_middleware("llm_request", self.mw)

    def mw(self, request, **kw):
        return None

    def flush(self, timeout):
        EVENTS.append(("flush", self.kind))

    def shutdown(self):
        EVENTS.append(("shutdown", self.kind))
"""


# --------------------------------------------------------------------------- dynamic plugins


def write_manifest(directory: Path, *, plugin_id: str = "audit", kind: str = "python", artifact: str = "plugin.py",
                   source: str | None = None, digest: str | None = None, extra: str = "",
                   entrypoint: str | None = None, compat: str | None = None) -> Path:
    """Write an artifact and a relay-plugin.toml for it; returns the manifest path."""
    directory.mkdir(parents=True, exist_ok=True)
    art = directory / artifact
    if source is not None:
        art.write_text(textwrap.dedent(source), encoding="utf-8")
    data = art.read_bytes() if art.exists() else b""
    digest = digest or "sha256:" + hashlib.sha256(data).hexdigest()
    if kind == "python":
        compat = compat or 'hermes_pipeline = ">=0.1,<1.0"'
        load = f'entrypoint = "{entrypoint or Path(artifact).stem + ":register"}"'
    elif kind == "rust_dynamic":
        compat = compat or 'relay = ">=0.8.0,<1.0"\nnative_api = "1"'
        load = 'library = "libaudit.so"\nsymbol = "nemo_relay_register_plugin"'
    else:
        compat = compat or 'relay = ">=0.8.0,<1.0"\nworker_protocol = "grpc-v1"'
        load = 'runtime = "python"\nentrypoint = "audit.worker:main"'
    manifest = directory / "relay-plugin.toml"
    manifest.write_text(textwrap.dedent(f"""\
        manifest_version = 1

        [plugin]
        id = "{plugin_id}"
        kind = "{kind}"

        [compat]
        {compat}

        [defaults]
        enabled = false

        [source]
        artifact = "{artifact}"

        [integrity]
        sha256 = "{digest}"

        [load]
        {load}
        """) + extra, encoding="utf-8")
    return manifest
