"""Inputs are files: pipeline files and the profile config.yaml must be regular files of at most 1 MiB, every
value is validated by type and range, and every user-caused error is a typed error naming the file
(CFG-2, CFG-7, CFG-14, CFG-18, CFG-33, CFG-69; hermes_pipeline decision on file kinds and sizes)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline import Engine
from hermes_pipeline.cli.main import main
from hermes_pipeline.config import ConfigError, load_pipeline, load_profile_settings
from hermes_pipeline.profile import ActivationState
from hermes_pipeline.config.diagnostics import Diagnostics
from hermes_pipeline.config.files import MAX_CONFIG_BYTES, read_config_text
from hermes_pipeline.profile import open_profile

from .conftest import Env

fifo_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")


def _bounded(fn: object, *args: object, **kwargs: object) -> BaseException | object:
    """Run ``fn`` on a daemon thread and wait for it at most 10 s (a hang fails the test instead of the suite)."""
    box: list[object] = []

    def run() -> None:
        try:
            box.append(fn(*args, **kwargs))  # type: ignore[operator]
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "reading the configuration input hung"
    return box[0]


@fifo_only
def test_cfg_7_selector_naming_a_fifo_is_refused_not_waited_on(env: Env, process: Engine) -> None:
    """CFG-2 / CFG-7: a selector pointing at a FIFO fails the load at once with a typed error naming the file
    (start-up used to wait forever for a writer)."""
    fifo = env.root / "plugins.toml"
    os.mkfifo(fifo)
    try:
        result = _bounded(load_pipeline, env.settings(), selected=fifo, discover=False)
        assert isinstance(result, ConfigError) and result.path == str(fifo) and "named pipe" in result.message
        env.select(fifo)
        report = _bounded(open_profile)
        assert getattr(getattr(report, "activation", None), "state", None) is ActivationState.FAILED
    finally:
        with open(os.open(fifo, os.O_RDWR | os.O_NONBLOCK), "wb"):  # release a reader a failed test left behind
            pass


def test_cfg_7_devices_and_directories_are_refused(env: Env) -> None:
    """CFG-7: a character device (/dev/null, /dev/zero: memory used to grow until MemoryError) or a directory is
    not a pipeline file; the error names it and says a regular file is expected."""
    for target, text in ((Path("/dev/null"), "character device"), (Path("/dev/zero"), "character device"),
                         (env.root, "directory")):
        if not target.exists():
            continue
        result = _bounded(load_pipeline, env.settings(), selected=target, discover=False)
        assert isinstance(result, ConfigError), result
        assert result.path == str(target) and text in result.message and "regular file" in result.message


def test_cfg_7_oversized_pipeline_file_is_refused(env: Env) -> None:
    """CFG-7: a file over 1 MiB is refused before it is parsed (naming the file and the limit)."""
    big = env.root / "big.toml"
    big.write_bytes(b"# padding\n" * (MAX_CONFIG_BYTES // 10 + 1))
    with pytest.raises(ConfigError, match="too large") as info:
        load_pipeline(env.settings(), selected=big, discover=False)
    assert info.value.path == str(big) and str(MAX_CONFIG_BYTES) in info.value.message


@given(data=st.binary(max_size=300))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_cfg_33_any_bytes_give_text_or_a_typed_error_naming_the_file(env: Env, data: bytes) -> None:
    """CFG-33 / CFG-7: whatever bytes a pipeline file holds, loading it returns a result or raises
    ConfigError naming the file (never UnicodeDecodeError or a parser's own exception)."""
    for name in ("p.toml", "p.yaml"):
        path = env.root / name
        path.write_bytes(data)
        try:
            load_pipeline(env.settings(), selected=path, discover=False, diagnostics=Diagnostics(log=False))
        except ConfigError as exc:
            assert exc.path is not None and exc.path.startswith(str(path))


@fifo_only
def test_cfg_39_discovered_user_file_that_is_a_fifo_fails_the_load(env: Env) -> None:
    """CFG-39 / CFG-7: a user plugins.toml that exists but is a FIFO is a load failure naming that file."""
    env.user_file.parent.mkdir(parents=True)
    os.mkfifo(env.user_file)
    selected = env.write("sel.toml", "version = 1\n")
    try:
        result = _bounded(load_pipeline, env.settings(), selected=selected)
        assert isinstance(result, ConfigError) and result.path == str(env.user_file), result
    finally:
        with open(os.open(env.user_file, os.O_RDWR | os.O_NONBLOCK), "wb"):
            pass


@fifo_only
def test_cfg_7_demo_pipeline_fifo_is_refused(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """CFG-7: ``demo --pipeline`` reads its file like every pipeline file: a FIFO is a one-line error, no hang."""
    fifo = env.root / "typo.toml"
    os.mkfifo(fifo)
    try:
        assert _bounded(main, ["demo", "--pipeline", str(fifo)]) == 1
        assert "named pipe" in capsys.readouterr().err
    finally:
        with open(os.open(fifo, os.O_RDWR | os.O_NONBLOCK), "wb"):
            pass


@fifo_only
def test_cfg_69_profile_config_yaml_fifo_yields_defaults_with_a_warning(env: Env) -> None:
    """CFG-69: a config.yaml that is a FIFO gives the defaults and a warning naming the file, never a hang."""
    env.hermes_home.mkdir()
    fifo = env.hermes_home / "config.yaml"
    os.mkfifo(fifo)
    try:
        result = _bounded(load_profile_settings, env.hermes_home, log=False)
        assert not isinstance(result, BaseException), result
        assert result.shared_metrics.enabled is False  # type: ignore[union-attr]
        warning = [d for d in result.diagnostics if d.code == "config.invalid_value"]  # type: ignore[union-attr]
        assert warning and warning[0].source == str(fifo) and "named pipe" in warning[0].message
    finally:
        with open(os.open(fifo, os.O_RDWR | os.O_NONBLOCK), "wb"):
            pass


def test_cfg_69_non_utf8_config_yaml_is_a_typed_error_naming_the_file(env: Env,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """CFG-69: a config.yaml that is not UTF-8 is reported naming the file: a warning (defaults apply) when a
    profile opens, and a one-line error from ``config get`` / ``config set`` (it raised UnicodeDecodeError)."""
    env.hermes_home.mkdir()
    path = env.hermes_home / "config.yaml"
    path.write_bytes(b"telemetry:\n  shared_metrics:\n    enabled: \xff\xfe\n")
    snapshot = load_profile_settings(env.hermes_home, log=False)
    assert any(d.source == str(path) and "UTF-8" in d.message for d in snapshot.diagnostics)
    for argv in (["get", "telemetry.shared_metrics.enabled"], ["set", "telemetry.shared_metrics.enabled", "true"]):
        code = main(["config", *argv, "--home", str(env.hermes_home)])
        _, err = capsys.readouterr()
        assert code == 1 and str(path) in err and "UTF-8" in err and "UnicodeDecodeError" not in err
    assert path.read_bytes().endswith(b"\xff\xfe\n")  # untouched


def test_read_config_text_refuses_a_file_that_is_not_regular(tmp_path: Path) -> None:
    """The shared reader: regular files only, decoded as UTF-8, the size limit enforced while reading."""
    good = tmp_path / "ok.toml"
    good.write_text("version = 1\n", encoding="utf-8")
    assert read_config_text(good) == "version = 1\n"
    with pytest.raises(ConfigError, match="too large"):
        read_config_text(good, limit=4)
    with pytest.raises(ConfigError, match="file not found") as info:
        read_config_text(tmp_path / "missing.toml")
    assert info.value.code == "pipeline.file_missing"


YAML_CONFIG_NOT_A_TABLE = """\
version: 1
policy:
  unsupported_value: {level}
components:
  - kind: observability
    config: 5
"""


@pytest.mark.parametrize("level", ["error", "warn"])
def test_cfg_14_yaml_component_config_that_is_not_a_table_is_a_typed_error(env: Env, level: str) -> None:
    """CFG-14 / CFG-18: ``config: 5`` in YAML is an unsupported value naming file, line and key (it raised
    AttributeError); under ``warn`` it is dropped and the component's own checks still run."""
    path = env.write("p.yaml", YAML_CONFIG_NOT_A_TABLE.format(level=level))
    diagnostics = Diagnostics(log=False)
    with pytest.raises(ConfigError) as info:
        load_pipeline(env.settings(), selected=path, discover=False, diagnostics=diagnostics)
    found = {(d.key, d.source, d.line) for d in diagnostics.items}
    if level == "error":
        assert ("components[0].config", str(path), 6) in found
    # the observability component was still validated (with an empty config): its version is missing
    assert any(d.key == "components[0].config.version" for d in diagnostics.errors)
    assert isinstance(info.value, ConfigError) and info.value.path == str(path)


REQUEST_DEFAULTS = """\
version = 1
[policy]
unsupported_value = "{level}"
[[components]]
kind = "request_defaults"
[components.config.llm]
temperature = "lots"
max_tokens = -5
top_p = 0.5
"""


def test_cfg_18_request_defaults_values_are_checked_by_type_and_range(env: Env) -> None:
    """CFG-18: ``request_defaults`` values are validated like any other component's: under ``error`` both bad
    values are reported (with file and line) and the load fails; they used to validate and be injected."""
    path = env.write("rd.toml", REQUEST_DEFAULTS.format(level="error"))
    diagnostics = Diagnostics(log=False)
    with pytest.raises(ConfigError):
        load_pipeline(env.settings(), selected=path, discover=False, diagnostics=diagnostics)
    errors = {(d.key, d.line, d.message) for d in diagnostics.errors}
    assert ("components[0].config.llm.temperature", 7, "expected a number between 0 and 2") in errors
    assert ("components[0].config.llm.max_tokens", 8, "expected an integer >= 1") in errors


def test_cfg_18_request_defaults_bad_values_never_reach_a_request(env: Env, process: Engine) -> None:
    """CFG-18: under ``warn`` the bad values are dropped with a warning and only valid defaults are injected."""
    env.select(env.write("rd.toml", REQUEST_DEFAULTS.format(level="warn")))
    profile = open_profile()
    assert profile.activation.state is ActivationState.ACTIVE
    component = process.plugins.get("component:request_defaults").instance
    result = component.llm_request({"model": "m", "messages": []})
    assert result["request"] == {"model": "m", "messages": [], "top_p": 0.5}


def test_cfg_12_request_defaults_key_typo_gets_a_suggestion(env: Env) -> None:
    """CFG-12 / CFG-16: an unknown ``llm`` key is an unknown field with the closest known key suggested."""
    path = env.write("rd.toml", 'version = 1\n[policy]\nunknown_field = "error"\n[[components]]\n'
                                'kind = "request_defaults"\n[components.config.llm]\ntemprature = 0.1\n')
    with pytest.raises(ConfigError, match=r"did you mean 'temperature'\?") as info:
        load_pipeline(env.settings(), selected=path, discover=False)
    assert info.value.suggestion == "temperature" and info.value.line == 7
