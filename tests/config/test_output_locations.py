"""Default output locations of an activated pipeline, and how ``config explain`` shows them (issue 11
item 3; spec 04 FMT-35 hermes_pipeline decision, FMT-50; spec 03 CFG-50, CFG-83)."""

from __future__ import annotations

import json

import pytest

from hermes_pipeline import Engine
from hermes_pipeline.cli.main import main
from hermes_pipeline.profile import ActivationState, open_profile, release_all

from .conftest import Env

NO_DIRECTORIES = """\
version = 1

[[components]]
kind = "observability"

[components.config]
version = 4

[components.config.atof]
enabled = true

[[components.config.atof.sinks]]
type = "file"

[[components.config.atof.sinks]]
type = "file"
output_directory = "relative"
filename = "mine.jsonl"

[components.config.atif]
enabled = true
"""


def test_fmt_35_open_profile_writes_nothing_before_the_first_event(env: Env, process: Engine) -> None:
    """FMT-35 / CFG-50: opening a profile with a file sink that names no directory creates no file at
    all, in the cwd or in the profile: the issue's 0-byte ``hermes-events-*.jsonl`` in the cwd is gone."""
    env.select(env.write("sel.toml", NO_DIRECTORIES))
    before = sorted(p.name for p in env.root.iterdir())
    profile = open_profile(env.root / "profile")
    assert profile.activation.state is ActivationState.ACTIVE
    component = process.plugins.get("component:observability")
    assert component is not None and component.instance is not None
    instance: object = component.instance
    assert instance.flush(10.0)  # type: ignore[attr-defined]
    assert sorted(p.name for p in env.root.iterdir()) == before
    assert not (env.root / "profile" / "telemetry").exists()
    release_all()
    assert sorted(p.name for p in env.root.iterdir()) == before  # a session-less run leaves nothing


def test_fmt_35_outputs_default_to_the_activating_profile(env: Env, process: Engine) -> None:
    """FMT-35: ATOF and ATIF outputs without ``output_directory`` go to the telemetry directory of the
    profile that activated the pipeline (here not ``$HERMES_HOME``); an explicit relative directory
    resolves against the working directory (CFG-83)."""
    env.select(env.write("sel.toml", NO_DIRECTORIES))
    profile = open_profile(env.root / "profile")
    assert profile.activation.output_directory == str((env.root / "profile" / "telemetry").resolve())
    with profile.host(model="m").session() as session, session.turn("hi") as turn:
        turn.complete("done")
    release_all()
    telemetry = env.root / "profile" / "telemetry"
    names = sorted(p.name for p in telemetry.iterdir())
    assert len(names) == 2 and names[0].startswith("hermes-atif-") and names[1].startswith("hermes-events-")
    assert (env.root / "relative" / "mine.jsonl").stat().st_size > 0
    assert not env.hermes_home.exists() and not list(env.root.glob("hermes-events-*"))


def test_fmt_35_config_explain_shows_resolved_defaults(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """FMT-35 / FMT-50 / CFG-83: ``config explain`` lists where each enabled file output goes, resolved to
    absolute paths, with ``(default)`` for what no file sets and file:line for what one does."""
    selected = env.write("sel.toml", NO_DIRECTORIES)
    assert main(["config", "explain", str(selected)]) == 0
    out = capsys.readouterr().out
    telemetry = json.dumps(str((env.hermes_home / "telemetry").resolve()))
    prefix = "  components[0].config."
    assert f"{prefix}atof.sinks[0].output_directory = {telemetry}  # (default)" in out
    assert f'{prefix}atof.sinks[0].filename = "hermes-events-<UTC YYYYMMDDTHHMMSSZ at activation>.jsonl"  # (default)' \
        in out
    relative = json.dumps(str(env.root / "relative"))
    assert f"{prefix}atof.sinks[1].output_directory = {relative}  # {selected}:17" in out
    assert f'{prefix}atof.sinks[1].filename = "mine.jsonl"  # {selected}:18' in out
    assert f"{prefix}atif.output_directory = {telemetry}  # (default)" in out
    assert f'{prefix}atif.filename_template = "hermes-atif-{{session_id}}.json"  # (default)' in out
