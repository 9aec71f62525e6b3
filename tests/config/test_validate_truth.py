"""One truth for validity: what ``config validate`` accepts is exactly what activation runs (CFG-7, CFG-18,
CFG-32a, CFG-47, CFG-48; hermes_pipeline decision: an enabled exporter section left with no destination is an
error, in validation and activation alike).

The property test mutates a working pipeline file the ways operators get them wrong (typos in kinds, keys and
enum values, wrong types, out-of-range values, destination entries that are skipped) under every policy, and
checks ``validate exits 0  ⇔  activation is ACTIVE and every enabled section has a destination``.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline import Engine
from hermes_pipeline.cli.main import main
from hermes_pipeline.profile import ActivationState, ProcessActivation
from hermes_pipeline.config.starter import STARTER

from .conftest import Env

BASE: dict[str, Any] = {
    "version": 1,
    "policy": {},
    "components": [
        {"kind": "observability", "config": {
            "version": 4,
            "content_summary": "preview",
            "atof": {"enabled": True, "sinks": [
                {"type": "file", "output_directory": "out", "filename": "events.jsonl", "mode": "append"},
            ]},
            "atif": {"enabled": True, "output_directory": "out", "filename_template": "t-{session_id}.json"},
            "opentelemetry": {"enabled": True, "endpoints": [
                {"type": "gen_ai", "endpoint": "http://127.0.0.1:9/v1/traces", "transport": "http_binary",
                 "timeout_millis": 1000},
            ]},
        }},
        {"kind": "request_defaults", "config": {"llm": {"temperature": 0.2, "max_tokens": 64}}},
    ],
}

SINK = ("components", 0, "config", "atof", "sinks", 0)
ENDPOINT = ("components", 0, "config", "opentelemetry", "endpoints", 0)
OBS = ("components", 0, "config")
LLM = ("components", 1, "config", "llm")

# (path of the parent table, key, new value); a value of RENAME renames the key to the given new name
RENAME = object()
MUTATIONS: list[tuple[tuple[Any, ...], str, Any]] = [
    # kinds
    (("components", 0), "kind", "observabilty"),
    (("components", 1), "kind", "request_default"),
    # keys (typos)
    (SINK, "mode", (RENAME, "mdoe")),
    (OBS, "content_summary", (RENAME, "content_sumary")),
    (ENDPOINT, "timeout_millis", (RENAME, "timeout_milis")),
    (LLM, "temperature", (RENAME, "temprature")),
    # enum values (typos)
    (SINK, "mode", "apend"),
    (OBS, "content_summary", "digets"),
    (ENDPOINT, "transport", "http_bin"),
    (ENDPOINT, "type", "gen-ai"),
    (OBS + ("atif",), "group_by", "agnet"),
    # wrong types
    (OBS + ("atof",), "enabled", "yes"),
    (SINK, "max_queue_size", "10"),
    (ENDPOINT, "timeout_millis", True),
    (LLM, "max_tokens", "many"),
    (LLM, "temperature", "lots"),
    (("components", 1), "config", 5),
    # out of range
    (SINK, "max_queue_size", 0),
    (SINK, "retention_days", 0),
    (OBS + ("opentelemetry",), "sampling_rate", 1.5),
    (LLM, "temperature", 5),
    (LLM, "max_tokens", -5),
    # destination entries that are skipped (CFG-32a)
    (ENDPOINT, "endpoint", "ftp://collector"),
    (ENDPOINT, "header_env", {"Authorization": "HP_TEST_UNSET_VARIABLE"}),
    (SINK, "type", "stream"),  # a stream sink without url
    (SINK, "filename", "a/b.jsonl"),
    (OBS + ("atof",), "sinks", [{"type": "file", "mode": "apend", "filename": "a.jsonl"},
                                {"type": "file", "output_directory": "out", "filename": "b.jsonl"}]),
    (OBS + ("atif",), "storage", [{"type": "s3", "bucket": "b"}]),
    (OBS + ("atif",), "storage", [{"type": "http", "endpoint": "https://store.example/x"}]),
    (OBS + ("opentelemetry", "logs"), "enabled", True),
    (OBS + ("atof",), "sinks", []),
    (OBS + ("opentelemetry",), "endpoints", []),
    # other keys and policies
    (OBS, "enable_full_payloads", True),
    (OBS, "policy", {"unsupported_value": "ignore", "unknown_field": "error"}),
    (OBS + ("atof",), "llm_history", "ful"),
    ((), "exporters", {"atof": True}),
    (("components", 0), "enabled", "yes"),
    (SINK, "content", "summary"),
    # sections switched off
    (OBS + ("atof",), "enabled", False),
    (OBS + ("opentelemetry",), "enabled", False),
    (("components", 0), "enabled", False),
]


def _apply(doc: dict[str, Any], mutation: tuple[tuple[Any, ...], str, Any]) -> None:
    parent: Any = doc
    for segment in mutation[0]:
        if isinstance(parent, dict) and isinstance(segment, str):
            parent = parent.setdefault(segment, {})
        elif isinstance(parent, list) and isinstance(segment, int) and segment < len(parent):
            parent = parent[segment]
        else:
            return  # an earlier mutation changed the shape (e.g. config = 5)
    if not isinstance(parent, dict):
        return
    key, value = mutation[1], mutation[2]
    if isinstance(value, tuple) and value and value[0] is RENAME:
        if key in parent:
            parent[value[1]] = parent.pop(key)
    else:
        parent[key] = value


def _section_destinations(engine: Engine) -> dict[str, list[str]]:
    """Enabled section → the destinations its sink reports, read from the activated component itself."""
    record = engine.plugins.get("component:observability")
    if record is None:
        return {}
    instance = record.instance
    config = instance.ctx.config
    sinks = instance.exporters.sinks if instance.exporters is not None else {}
    out = {}
    for name in ("atof", "atif", "opentelemetry"):
        section = config.get(name)
        if isinstance(section, dict) and section.get("enabled") is True:
            sink = sinks.get(name)
            out[name] = list(sink.destinations()) if sink is not None else []
    return out


def _validate(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str]:
    code = main(["config", "validate", "--no-discovery", str(path)])
    out, err = capsys.readouterr()
    return code, out + err


def _activate(env: Env, path: Path) -> tuple[ActivationState, dict[str, list[str]], str | None, bool]:
    engine = Engine()
    proc = ProcessActivation()
    try:
        report = proc.acquire("truth", engine, env.settings(plugins_toml=str(path), xdg_config_home=str(env.xdg),
                                                            system_plugins_toml=str(env.system_file)))
        # Nothing wired *because* activation skipped a component of unknown kind: a lost pipeline, not a choice.
        skipped = any(d.level == "warning" and d.code.endswith("unknown_component") for d in report.diagnostics)
        return report.state, _section_destinations(engine), report.cause, bool(report.nothing_exported) and skipped
    finally:
        proc.shutdown()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutations=st.lists(st.sampled_from(MUTATIONS), max_size=3),
       policy=st.fixed_dictionaries({}, optional={
           "unknown_component": st.sampled_from(["ignore", "warn", "error"]),
           "unknown_field": st.sampled_from(["ignore", "warn", "error"]),
           "unsupported_value": st.sampled_from(["ignore", "warn", "error"]),
       }))
def test_cfg_47_validate_ok_iff_activation_succeeds_with_a_destination_per_enabled_section(
        env: Env, capsys: pytest.CaptureFixture[str], mutations: list[Any], policy: dict[str, str]) -> None:
    """CFG-47 / CFG-48 / CFG-32a: for any mutated file, ``config validate`` exits 0 exactly when activation
    is ACTIVE, every enabled exporter section of the activated component has at least one destination, and
    activation did not end up wiring nothing because it skipped a component of unknown kind."""
    doc = copy.deepcopy(BASE)
    doc["policy"] = dict(policy)
    for mutation in mutations:
        _apply(doc, mutation)
    path = env.root / "mutated.toml"
    path.write_text(tomli_w.dumps(doc), encoding="utf-8")
    code, output = _validate(capsys, path)
    state, destinations, cause, lost = _activate(env, path)
    runs_fully = state is ActivationState.ACTIVE and all(destinations.values()) and not lost
    assert (code == 0) == runs_fully, (mutations, policy, code, output, state, destinations, cause)
    if code != 0:
        assert "Traceback" not in output and "invalid:" in output


def test_cfg_32a_apend_typo_fails_validation_like_activation(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """CFG-32a / CFG-7: ``mode = "apend"`` skips the only ATOF sink; validate now exits 1 naming the section with
    no destination and suggesting ``append``, and activation fails for the same reason (it said valid before)."""
    doc = copy.deepcopy(BASE)
    _apply(doc, (SINK, "mode", "apend"))
    path = env.root / "apend.toml"
    path.write_text(tomli_w.dumps(doc), encoding="utf-8")
    code, output = _validate(capsys, path)
    assert code == 1
    assert "atof.sinks[0].mode: expected one of 'append', 'overwrite' (did you mean 'append'?)" in output
    assert "components[0].config.atof.sinks: the enabled atof section has no usable destination" in output
    state, _, cause, _ = _activate(env, path)
    assert state is ActivationState.FAILED and cause is not None and "no usable destination" in cause


def test_cfg_32a_config_init_starter_with_a_typo_fails_validation(env: Env,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """CFG-18 / CFG-32a: the ``config init`` starter (unsupported_value = "error") with a typo'd sink value is
    refused by validate, not reported valid and then refused at activation."""
    doc = copy.deepcopy(STARTER)
    doc["components"][0]["config"]["atof"]["sinks"][0]["mode"] = "apend"
    path = env.root / "starter.toml"
    path.write_text(tomli_w.dumps(doc), encoding="utf-8")
    code, output = _validate(capsys, path)
    assert code == 1 and "no usable destination" in output
    assert _activate(env, path)[0] is ActivationState.FAILED


def test_cfg_32a_sink_the_build_cannot_run_is_caught_by_validate(env: Env,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """CFG-32a: the key table accepts ``transport = "websocket"`` but this build's ATOF sink does not; validation
    runs the sink's own parser, so the skip (and the empty section) is reported before activation."""
    doc = copy.deepcopy(BASE)
    doc["components"][0]["config"]["atof"]["sinks"] = [
        {"type": "stream", "url": "wss://events.example/x", "transport": "websocket"}]
    path = env.root / "ws.toml"
    path.write_text(tomli_w.dumps(doc), encoding="utf-8")
    code, output = _validate(capsys, path)
    assert code == 1 and "transport 'websocket' is not supported by this build" in output
    assert "the enabled atof section has no usable destination" in output


def test_cfg_32a_unset_header_variable_is_reported_by_validate(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """CFG-32 / CFG-32a: a header_env variable that is unset skips its endpoint at activation; validate reports
    the same skip (and, for the only endpoint, the section without destination), and passes once it is set."""
    doc = copy.deepcopy(BASE)
    _apply(doc, (ENDPOINT, "header_env", {"Authorization": "HP_TEST_COLLECTOR_AUTH"}))
    path = env.root / "auth.toml"
    path.write_text(tomli_w.dumps(doc), encoding="utf-8")
    code, output = _validate(capsys, path)
    assert code == 1 and "HP_TEST_COLLECTOR_AUTH" in output and "opentelemetry section has no usable" in output
    env.monkeypatch.setenv("HP_TEST_COLLECTOR_AUTH", "Bearer t")
    assert _validate(capsys, path)[0] == 0
