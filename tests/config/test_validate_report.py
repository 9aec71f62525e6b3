"""What ``config validate`` / ``config explain`` report: every problem one line each with file:line, key path,
what was expected and a "did you mean"; ``--json`` for both; a pipeline that exports nothing says so; the
native-runtime warning only when something needs it (CFG-7, CFG-12, CFG-18, CFG-50, CFG-60, CFG-61, CFG-86,
CFG-87)."""

from __future__ import annotations

import io
import json
import logging

import pytest

from hermes_pipeline import Engine
from hermes_pipeline.cli.main import main
from hermes_pipeline.profile import ActivationState, ProcessActivation
from hermes_pipeline.profile import open_profile
from hermes_pipeline.demo.run import DemoResult, print_report

from .conftest import OBS_MINIMAL, Env, write_manifest

THREE_PROBLEMS = """\
version = 1
[policy]
unknown_field = "error"
[[components]]
kind = "observability"
[components.config]
version = 4
content_sumary = "digest"
[components.config.atof]
enabled = "yes"
[[components.config.atof.sinks]]
type = "file"
mode = "apend"
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["config", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cfg_86_validate_prints_every_problem_one_line_each(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """CFG-86: all three problems are printed, one line each, with file:line, the key path, what was expected
    and a suggestion (it printed the first with "(and 2 more errors)")."""
    path = env.write("p.toml", THREE_PROBLEMS)
    code, _, err = run(capsys, "validate", "--no-discovery", str(path))
    lines = err.splitlines()
    assert code == 1 and "more error" not in err
    assert f"{path}:8: components[0].config.content_sumary: unknown key; expected one of " in err
    assert "(did you mean 'content_summary'?)" in err
    assert f"{path}:10: components[0].config.atof.enabled: expected a boolean (true or false)" in err
    assert (f"{path}:13 [observability].atof.sinks[0]: destination entry skipped: atof.sinks[0].mode: expected "
            "one of 'append', 'overwrite' (did you mean 'append'?)") in err
    assert sum(1 for line in lines if "error: invalid:" in line) == 2 and len(lines) == 3


def test_cfg_78_unknown_kind_suggests_the_near_miss(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """CFG-78: an unknown kind names the closest known kind, in the warning and in --json."""
    path = env.write("typo.toml", 'version = 1\n[[components]]\nkind = "observabilty"\n')
    code, out, err = run(capsys, "validate", "--no-discovery", str(path))
    assert code == 1 and "unknown component kind 'observabilty' (did you mean 'observability'?)" in err
    code, out, _ = run(capsys, "validate", "--no-discovery", "--json", str(path))
    (diag,) = [d for d in json.loads(out)["diagnostics"] if d["code"] == "plugin.unknown_component"]
    assert code == 1 and diag["suggestion"] == "observability" and diag["line"] == 3
    assert diag["key"] == "components[0].kind" and diag["severity"] == "warning"


def test_cfg_50_nothing_exported_is_said_by_validate_activation_and_demo(env: Env, process: Engine,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """CFG-50 / CFG-87: a typo'd kind activates (unknown_component = warn) with nothing wired; validate, the
    activation report (and its log) and the demo report all say "activation ACTIVE, but nothing is exported",
    and validate exits 1 because nothing is wired *because* a component of unknown kind was skipped (never a
    silent no-op with exit status 0)."""
    path = env.write("typo.toml", 'version = 1\n[[components]]\nkind = "observabilty"\n')
    code, out, err = run(capsys, "validate", "--no-discovery", str(path))
    assert code == 1 and "activation ACTIVE, but nothing is exported: component kind 'observabilty' is unknown" in out
    assert out.startswith("exports nothing: ") and "nothing would be exported because a component of unknown kind was skipped" in err
    env.select(path)
    report = open_profile().activation
    assert report.state is ActivationState.ACTIVE and "observabilty" in (report.nothing_exported or "")
    assert any(d.code == "pipeline.nothing_exported" and d.level == "warning" for d in report.diagnostics)
    assert report.to_dict()["nothing_exported"] == report.nothing_exported
    buffer = io.StringIO()
    from hermes_pipeline.testing import Recorder

    print_report(DemoResult([], Recorder(), [], env.root, process, activation=report), buffer)
    assert "(activation ACTIVE, but nothing is exported: component kind 'observabilty'" in buffer.getvalue()


def test_cfg_50_sections_all_off_or_no_components_also_say_nothing_is_exported(
        env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """CFG-50: an observability component with every section off, or a file with no components, says so;
    a file that wires something does not."""
    for text, reason in ((OBS_MINIMAL, "component 'observability' has nothing enabled"),
                         ("version = 1\n", "declares no [[components]]")):
        code, out, _ = run(capsys, "validate", "--no-discovery", str(env.write("p.toml", text)))
        assert code == 0 and "activation ACTIVE, but nothing is exported" in out and reason in out
    wired = OBS_MINIMAL + '[components.config.atif]\nenabled = true\n'
    code, out, _ = run(capsys, "validate", "--no-discovery", str(env.write("w.toml", wired)))
    assert code == 0 and "nothing is exported" not in out


def test_cfg_87_validate_json_lists_every_diagnostic_with_the_same_exit_code(
        env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """CFG-87: ``validate --json`` gives file, line, key path, message, severity and suggestion of every
    finding, and exits 1 / 0 exactly as the text form does."""
    path = env.write("p.toml", THREE_PROBLEMS)
    code, out, err = run(capsys, "validate", "--no-discovery", "--json", str(path))
    doc = json.loads(out)
    assert code == 1 and err == "" and doc["valid"] is False and doc["file"] == str(path)
    by_key = {d["key"]: d for d in doc["diagnostics"]}
    assert set(doc["diagnostics"][0]) == {"severity", "code", "file", "line", "key", "component", "message",
                                          "suggestion"}
    assert by_key["components[0].config.content_sumary"]["suggestion"] == "content_summary"
    assert by_key["components[0].config.content_sumary"]["line"] == 8
    assert by_key["components[0].config.atof.sinks[0]"]["suggestion"] == "append"
    assert by_key["components[0].config.atof.sinks[0]"]["severity"] == "warning"
    assert by_key["components[0].config.atof.enabled"]["severity"] == "error"
    code, out, _ = run(capsys, "validate", "--no-discovery", "--json", str(env.write("ok.toml", OBS_MINIMAL)))
    assert code == 0 and json.loads(out)["valid"] is True
    code, out, _ = run(capsys, "validate", "--json", str(env.write("v.toml", "version = 5\n")))
    (diag,) = json.loads(out)["diagnostics"]
    assert code == 1 and diag["key"] == "version" and diag["line"] == 1 and diag["severity"] == "error"


def test_cfg_87_explain_json_gives_every_key_with_its_source(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """CFG-87 / CFG-41: ``explain --json`` lists the merged result, each key with the file and line it came
    from (user layer and selected file), header values redacted; invalid files exit 1 with diagnostics."""
    env.write(env.user_file, OBS_MINIMAL + '[components.config.atif]\nenabled = true\n')
    selected = env.write("sel.toml", OBS_MINIMAL + '[components.config.atof]\nenabled = true\n'
                                                   '[[components.config.atof.sinks]]\ntype = "stream"\n'
                                                   'url = "https://e.example/x"\nheaders = {A = "secret"}\n')
    code, out, _ = run(capsys, "explain", "--json", str(selected))
    doc = json.loads(out)
    keys = {k["key"]: k for k in doc["keys"]}
    assert code == 0 and doc["valid"] is True and doc["selected"] == str(selected)
    assert keys["components[0].config.atif.enabled"]["file"] == str(env.user_file)
    assert keys["components[0].config.atif.enabled"]["line"] == 9
    assert keys["components[0].config.atof.enabled"] == {"key": "components[0].config.atof.enabled", "value": True,
                                                         "file": str(selected), "line": 9}
    assert keys["components[0].config.atof.sinks[0].headers.A"]["value"] == "<redacted>" and "secret" not in out
    assert [layer["role"] for layer in doc["layers"]] == ["user", "system", "selected"]
    code, out, _ = run(capsys, "explain", "--json", str(env.write("bad.toml", THREE_PROBLEMS)))
    assert code == 1 and json.loads(out)["valid"] is False and json.loads(out)["diagnostics"]
    code, out, _ = run(capsys, "explain", "--json")
    assert code == 0 and json.loads(out)["selected"] is None


def test_cfg_61_degraded_mode_is_debug_when_nothing_needs_the_native_runtime(
        env: Env, caplog: pytest.LogCaptureFixture) -> None:
    """CFG-61: a pure-Python pipeline logs no ``pipeline.degraded`` WARNING (it used to, on every run); the
    report still carries the reason and the message is logged at DEBUG."""
    env.select(env.write("sel.toml", OBS_MINIMAL))
    proc = ProcessActivation()
    with caplog.at_level(logging.DEBUG, logger="hermes_pipeline.config"):
        report = proc.acquire("a", Engine())
    proc.shutdown()
    degraded = [r for r in caplog.records if "pipeline.degraded" in r.getMessage()]
    assert report.state is ActivationState.ACTIVE and report.degraded_reason
    assert degraded and all(r.levelno == logging.DEBUG for r in degraded)


def test_cfg_60_degraded_mode_warns_when_a_manifest_needs_the_native_runtime(
        env: Env, caplog: pytest.LogCaptureFixture) -> None:
    """CFG-60 / CFG-61: a ``rust_dynamic`` manifest needs the native runtime: the load fails naming the plugin,
    and ``pipeline.degraded`` is a WARNING (once per process)."""
    manifest = write_manifest(env.root / "native", kind="rust_dynamic", artifact="libaudit.so", source="x")
    env.select(env.write("sel.toml", OBS_MINIMAL + f'[[plugins.dynamic]]\nmanifest = "{manifest}"\n'))
    proc = ProcessActivation()
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.config"):
        report = proc.acquire("a", Engine())
        proc.release("a")
        proc.acquire("b", Engine())
    proc.shutdown()
    assert report.state is ActivationState.FAILED and "native runtime" in (report.cause or "")
    warnings = [r for r in caplog.records if "pipeline.degraded" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING


def test_cfg_21_every_broken_component_entry_is_reported(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """CFG-21 / CFG-15 / CFG-81: a missing kind, an invalid kind name and a duplicated kind in one file are
    all reported, one line each (the load stopped at the first of them)."""
    path = env.write("p.toml", 'version = 1\n[[components]]\nenabled = true\n[[components]]\nkind = "Bad-Name"\n'
                               '[[components]]\nkind = "observability"\n[components.config]\nversion = 4\n'
                               '[[components]]\nkind = "observability"\n')
    code, _, err = run(capsys, "validate", "--no-discovery", str(path))
    lines = [line for line in err.splitlines() if "error: invalid:" in line]
    assert code == 1 and len(lines) == 3, err
    assert f"{path}:2: components[0]: component entry has no 'kind'" in lines[0]
    assert f"{path}:5: components[1].kind: invalid kind name" in lines[1]
    assert "declared more than once in one file: observability" in lines[2]


def test_cfg_18_strict_refuses_what_activation_would_ignore(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """CFG-18: ``--strict`` exits 1 when the policy would let activation ignore part of the file (an unknown
    kind, an unknown key) or nothing would be exported; a clean file still exits 0."""
    typo = env.write("typo.toml", 'version = 1\n[[components]]\nkind = "observabilty"\n')
    code, _, err = run(capsys, "validate", "--no-discovery", "--strict", str(typo))
    assert code == 1 and "--strict: 1 ignored or skipped item" in err and "nothing is exported" in err
    assert run(capsys, "validate", "--no-discovery", "--strict", "--json", str(typo))[0] == 1
    clean = env.write("ok.toml", OBS_MINIMAL + '[components.config.atif]\nenabled = true\n')
    assert run(capsys, "validate", "--no-discovery", "--strict", str(clean))[0] == 0
