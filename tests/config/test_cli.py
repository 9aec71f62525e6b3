"""``hermes-pipeline config`` (validate, explain, init, set, get): exit codes, one-line errors, provenance
output and comment-preserving edits (spec 03 §16; CFG-4, CFG-87)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.cli.main import main
from hermes_pipeline.config import load_pipeline

from .conftest import OBS_MINIMAL, Env

HAND_WRITTEN = """\
# Hermes profile — edited by hand.
model: "anthropic/claude-sonnet"   # default model

# Telemetry: nothing leaves this machine unless both flags are on.
telemetry:
  shared_metrics:
    enabled: false  # opt in here
    send: false
toolsets:
  - web
  - 'terminal'    # keep quoted
gateway:
  telemetry:
    session_segments:
      max_turns: 0    # 0 = unlimited
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["config", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_validate_exit_codes(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """validate: 0 valid, 1 invalid (one line), 2 usage (no FILE and no selector)."""
    good = env.write("good.toml", OBS_MINIMAL)
    code, out, _ = run(capsys, "validate", str(good))
    assert code == 0 and out.startswith(f"valid: {good}")
    code, _, err = run(capsys, "validate", str(env.write("bad.toml", "version = 5\n")))
    assert code == 1 and "bad.toml:1: version:" in one_line(err)
    code, _, err = run(capsys, "validate")
    assert code == 2 and "HERMES_NEMO_RELAY_PLUGINS_TOML" in one_line(err)
    env.select(good)
    assert run(capsys, "validate")[0] == 0


def test_validate_prints_warnings_and_layers(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    env.write(env.user_file, "version = 1\n")
    good = env.write("good.toml", OBS_MINIMAL + "colour = 1\n")
    code, out, err = run(capsys, "validate", str(good))
    assert code == 0 and "layers: 2" in out
    assert "plugin.configuration_inherited" in err and "observability.unknown_field" in err
    assert run(capsys, "validate", "--no-discovery", str(good))[1].count("layers: 1") == 1


def test_explain_shows_sources_and_selector(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """explain: the merged configuration, each key with its file (and line), and what selected what."""
    env.write(env.user_file, OBS_MINIMAL + '[components.config.atof]\nenabled = true\n'
                                           '[[components.config.atof.sinks]]\ntype = "stream"\nurl = "https://u"\n'
                                           '[components.config.atof.sinks.headers]\nAuthorization = "Bearer xyz"\n')
    selected = env.write("sel.toml", OBS_MINIMAL + '[[components.config.atof.sinks]]\ntype = "file"\n'
                                                   'filename = "e.jsonl"\n')
    env.select(selected)
    code, out, _ = run(capsys, "explain")
    assert code == 0
    assert f"selected by HERMES_NEMO_RELAY_PLUGINS_TOML={selected}" in out
    assert f"user     layered   {env.user_file}  (from XDG_CONFIG_HOME)" in out
    assert "system   missing" in out
    assert f'components[0].config.atof.sinks[0].filename = "e.jsonl"  # {selected}:10' in out
    assert f'components[0].config.atof.sinks[1].url = "https://u"  # {env.user_file}:' in out
    assert f"components[0].config.atof.enabled = true  # {env.user_file}:9" in out
    assert "Bearer xyz" not in out and '"<redacted>"' in out
    assert "observability        enabled   builtin" in out


def test_explain_without_selector(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    env.monkeypatch.setenv("HERMES_NEMO_RELAY_ATOF_DIR", "/x")
    code, out, _ = run(capsys, "explain")
    assert code == 0 and "not set: pipeline processing is disabled" in out and "HERMES_NEMO_RELAY_ATOF_DIR" in out


def test_explain_invalid_file(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "explain", str(env.root / "absent.toml"))
    assert code == 1 and "file not found" in err.splitlines()[-1]


def test_init_writes_validating_starter_and_refuses_overwrite(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    target = env.root / "conf" / "plugins.toml"
    code, out, _ = run(capsys, "init", str(target))
    assert code == 0 and target.is_file() and "HERMES_NEMO_RELAY_PLUGINS_TOML" in out
    loaded = load_pipeline(env.settings(), selected=target, discover=False)
    assert loaded.diagnostics.items == [] and loaded.components[0].kind == "observability"
    assert target.read_text().startswith("# hermes_pipeline")
    target.write_text("keep me")
    code, _, err = run(capsys, "init", str(target))
    assert code == 1 and "--force" in one_line(err) and target.read_text() == "keep me"
    assert run(capsys, "init", str(target), "--force")[0] == 0 and target.read_text() != "keep me"
    assert run(capsys, "init")[0] == 0 and (env.root / "plugins.toml").is_file()


def test_set_round_trips_hand_commented_yaml(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """set: comments, key order and quoting survive byte for byte; only the changed value differs."""
    home = env.root / "profile"
    home.mkdir()
    (home / "config.yaml").write_text(HAND_WRITTEN)
    code, out, _ = run(capsys, "set", "telemetry.shared_metrics.enabled", "true", "--home", str(home))
    assert code == 0 and "telemetry.shared_metrics.enabled = true" in out
    assert (home / "config.yaml").read_text() == HAND_WRITTEN.replace("enabled: false  #", "enabled: true   #")
    assert run(capsys, "set", "gateway.telemetry.session_segments.max_turns", "12", "--home", str(home))[0] == 0
    expected = HAND_WRITTEN.replace("enabled: false  #", "enabled: true   #").replace("max_turns: 0 ", "max_turns: 12")
    assert (home / "config.yaml").read_text() == expected
    code, out, _ = run(capsys, "get", "gateway.telemetry.session_segments.max_turns", "--home", str(home))
    assert code == 0 and out == "12\n"


def test_set_uses_hermes_home_and_creates_file(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "set", "plugins.hook_callback_timeout", "5")[0] == 0
    assert (env.hermes_home / "config.yaml").read_text() == "plugins:\n  hook_callback_timeout: 5\n"
    assert run(capsys, "get", "plugins.hook_callback_timeout")[1] == "5\n"
    assert run(capsys, "set", "custom.key", "'5'", "--force")[0] == 0  # a forward-compatible key, forced
    assert run(capsys, "get", "custom.key", "--force")[1] == "5\n"


@pytest.mark.parametrize("argv, needle", [
    (["set", "telemetry.shared_metrics.enabled", "yes"], "expected a boolean"),
    (["set", "gateway.telemetry.session_segments.max_turns", "-3"], "expected an integer"),
    (["set", "gateway.telemetry.session_segments.max_turns", "'5'"], "expected an integer"),
    (["set", "telemetry.shared_metrics.endpoint", "http://metrics.example"], "https"),
    (["set", "plugins.hook_callback_timeout", "soon"], "number"),
    (["set", "a..b", "1"], "dotted key"),
    (["set", "x", "{a: 1}"], "scalar"),
    (["set", "x", "[unclosed"], "YAML scalar"),
    (["get", "not.set.anywhere"], "not a config.yaml key"),
    (["get", "not.set.anywhere", "--force"], "not set"),
])
def test_bad_input_one_line_errors(env: Env, capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    before = (env.hermes_home / "config.yaml").exists()
    code, _, err = run(capsys, *argv)
    assert code == 1 and needle in one_line(err)
    assert (env.hermes_home / "config.yaml").exists() == before


def test_set_below_a_scalar_is_refused(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    env.hermes_home.mkdir()
    (env.hermes_home / "config.yaml").write_text("telemetry: off\n")
    code, _, err = run(capsys, "set", "telemetry.shared_metrics.enabled", "true")
    assert code == 1 and "holds a value" in one_line(err)
    assert (env.hermes_home / "config.yaml").read_text() == "telemetry: off\n"


def test_get_known_key_default(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "get", "telemetry.shared_metrics.enabled")[1] == "false\n"


def test_usage_errors_exit_2(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, )[0] == 2
    with pytest.raises(SystemExit) as info:
        main(["config", "set", "only-key"])
    assert info.value.code == 2


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.text(min_size=0, max_size=20), value=st.text(max_size=20))
def test_property_set_never_tracebacks(env: Env, capsys: pytest.CaptureFixture[str], key: str, value: str) -> None:
    """Random keys and values: exit 0 or 1 with one line, never a traceback."""
    if key.startswith("-") or value.startswith("-"):
        return
    code, _, err = run(capsys, "set", key, value, "--home", str(env.root / "prop"))
    assert code in (0, 1)
    if code == 1:
        one_line(err)
    else:
        assert run(capsys, "get", key, "--home", str(env.root / "prop"))[0] == 0


def test_repo_example_files_validate_via_cli(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    root = Path(__file__).resolve().parents[2]
    for name in ("EVENTS_AUTH_HEADER", "COLLECTOR_AUTH", "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY"):
        # the header variables the examples document
        env.monkeypatch.setenv(name, "Bearer test")
    for path in [root / "plugins.toml.example", *sorted((root / "pipelines").iterdir())]:
        code, out, err = run(capsys, "validate", "--no-discovery", str(path))
        assert code == 0 and err == "", (path, err)
