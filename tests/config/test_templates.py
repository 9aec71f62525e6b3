"""The shipped examples (issue #11 item 7): ``config init --template NAME`` writes any example of
``pipelines/`` from the package itself (so it works from an installed wheel), every example passes
``config validate``, and the Langfuse and collector recipes export for real (CFG-4, CFG-32a, FMT-75..FMT-77).
Everything is written under tmp_path; receivers bind 127.0.0.1 and stop with their test."""

from __future__ import annotations

import base64
import fnmatch
import sys
import tomllib
from pathlib import Path

import pytest

from hermes_pipeline import Engine
from hermes_pipeline.cli.main import main
from hermes_pipeline.config.templates import UnknownTemplateError, find_template, templates
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver
from hermes_pipeline.sinks.otel import build_otel_plugin

from tests.sinks.otel.test_delivery import simple_session
from .conftest import Env

REPO = Path(__file__).resolve().parents[2]
PIPELINES = REPO / "pipelines"
EXAMPLES = sorted(p.name for p in PIPELINES.iterdir() if p.suffix in (".toml", ".yaml"))
DOCUMENTED_ENV = {"LANGFUSE_PUBLIC_KEY": "pk-lf-test", "LANGFUSE_SECRET_KEY": "sk-lf-test",
                  "COLLECTOR_AUTH": "Bearer test", "EVENTS_AUTH_HEADER": "Bearer test"}
"""The variables the examples tell the user to set (their values never reach a file)."""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["config", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_every_pipelines_example_is_a_shipped_template() -> None:
    """Each file of pipelines/ is a template of the same name, and there is no other template."""
    assert sorted(t.filename for t in templates()) == EXAMPLES
    assert {"langfuse.toml", "otlp-collector.toml"} <= set(EXAMPLES)


def test_packaged_templates_are_byte_identical_to_the_pipelines_examples() -> None:
    """One statement of each example: the package copies equal pipelines/ (run scripts/regenerate.py)."""
    for template in templates():
        assert template.text() == (PIPELINES / template.filename).read_text(encoding="utf-8"), template.filename


def test_package_data_ships_the_templates() -> None:
    """pyproject's package-data patterns cover every template file, so a non-editable wheel has them."""
    with (REPO / "pyproject.toml").open("rb") as handle:
        patterns = tomllib.load(handle)["tool"]["setuptools"]["package-data"]["hermes_pipeline"]
    packaged = REPO / "hermes_pipeline" / "config" / "templates"
    files = [p for p in packaged.iterdir() if p.suffix in (".toml", ".yaml")]
    assert files
    for path in files:
        relative = path.relative_to(REPO / "hermes_pipeline").as_posix()
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in patterns), relative


@pytest.mark.parametrize("name", [t.name for t in templates()])
def test_config_init_template_writes_the_example_and_it_validates(
        env: Env, capsys: pytest.CaptureFixture[str], name: str) -> None:
    """CFG-4: `config init --template NAME PATH` writes exactly the shipped example, and `config validate` of
    what it wrote exits 0 once the variables the example documents are set."""
    for variable, value in DOCUMENTED_ENV.items():
        env.monkeypatch.setenv(variable, value)
    template = find_template(name)
    target = env.root / "out" / template.filename
    code, out, err = run(capsys, "init", "--template", name, str(target))
    assert code == 0 and err == "" and str(target) in out
    assert target.read_text(encoding="utf-8") == (PIPELINES / template.filename).read_text(encoding="utf-8")
    code, out, err = run(capsys, "validate", "--no-discovery", str(target))
    assert code == 0, err
    assert out.startswith("valid: ")


def test_a_yaml_template_defaults_to_plugins_yaml(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """Without PATH, a YAML template is written as ./plugins.yaml (TOML ones as ./plugins.toml)."""
    env.monkeypatch.chdir(env.root)
    assert run(capsys, "init", "--template", "local-files.yaml")[0] == 0
    assert (env.root / "plugins.yaml").read_text() == (PIPELINES / "local-files.yaml").read_text()
    assert run(capsys, "init", "--template", "langfuse")[0] == 0
    assert (env.root / "plugins.toml").read_text() == (PIPELINES / "langfuse.toml").read_text()


def test_list_templates_names_every_example(capsys: pytest.CaptureFixture[str]) -> None:
    """`config init --list-templates` prints one line per template: its name and what it is for."""
    code, out, err = run(capsys, "init", "--list-templates")
    assert code == 0 and err == ""
    names = [line.split()[0] for line in out.splitlines()[:-1]]
    assert names == [t.name for t in templates()]
    assert "Langfuse" in out and "Collector" in out
    assert "--list-templates" in main_help("config", "init")


def main_help(*argv: str) -> str:
    from hermes_pipeline.cli.main import build_parser

    parser = build_parser()
    for name in argv:
        parser = next(a for a in parser._actions if hasattr(a, "choices") and a.choices and name in a.choices
                      ).choices[name]
    return parser.format_help()


def test_an_unknown_template_is_a_one_line_error_with_a_suggestion(
        env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """A typo'd NAME exits 1 with one line naming --template, a "did you mean" and the shipped names."""
    code, out, err = run(capsys, "init", "--template", "langfus", str(env.root / "x.toml"))
    assert code == 1 and out == "" and not (env.root / "x.toml").exists()
    assert len(err.splitlines()) == 1 and "did you mean 'langfuse'?" in err and "otlp-collector" in err
    with pytest.raises(UnknownTemplateError) as info:
        find_template("nothing-like-it")
    assert info.value.key == "--template" and info.value.suggestion is None


def _opentelemetry_section(name: str, endpoint: str) -> dict[str, object]:
    document = tomllib.loads(find_template(name).text())
    section = dict(document["components"][0]["config"]["opentelemetry"])
    section["endpoints"] = [{**section["endpoints"][0], "endpoint": endpoint, "scheduled_delay_millis": 50}]
    return section


def test_fmt_75_77_the_langfuse_recipe_exports_with_basic_auth_and_session_ids(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-75..FMT-77: the Langfuse template's endpoint, pointed at a local receiver under Langfuse's path,
    sends Basic auth built from LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY, the ingestion-version header and
    session.id on every span."""
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-1")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-2")
    with OTLPReceiver() as receiver:
        plugin = build_otel_plugin(_opentelemetry_section(
            "langfuse", receiver.endpoint + "/api/public/otel/v1/traces"))
        engine.add_plugin(plugin, name="otel")
        simple_session(engine, session_id="lf-session")
        assert plugin.flush(10.0) and plugin.shutdown(10.0)
    assert receiver.spans and receiver.headers
    expected = "Basic " + base64.b64encode(b"pk-lf-1:sk-lf-2").decode()
    assert all(h["authorization"] == expected and h["x-langfuse-ingestion-version"] == "4" for h in receiver.headers)
    assert all(s.attributes.get("session.id") == "lf-session" for s in receiver.spans)


def test_the_collector_recipe_exports_without_any_variable_set(engine: Engine) -> None:
    """The collector template works as copied (no credential needed): its endpoint, pointed at a local
    receiver, gets gen_ai spans under service.name hermes-agent."""
    with OTLPReceiver() as receiver:
        plugin = build_otel_plugin(_opentelemetry_section("otlp-collector", receiver.endpoint))
        engine.add_plugin(plugin, name="otel")
        simple_session(engine)
        assert plugin.flush(10.0) and plugin.shutdown(10.0)
    assert receiver.spans and all(s.resource["service.name"] == "hermes-agent" for s in receiver.spans)


def test_the_natural_langfuse_guess_says_how_langfuse_is_configured(
        env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """`type = "langfuse"` is refused by `config validate`, and the message says what to write instead."""
    path = env.write("guess.toml", """\
        version = 1
        [[components]]
        kind = "observability"
        [components.config]
        version = 4
        [components.config.opentelemetry]
        enabled = true
        [[components.config.opentelemetry.endpoints]]
        type = "langfuse"
        endpoint = "https://cloud.langfuse.com"
        """)
    code, _, err = run(capsys, "validate", "--no-discovery", str(path))
    assert code == 1
    assert "'gen_ai'" in err and "/api/public/otel/v1/traces" in err and "--template langfuse" in err


def test_templates_are_read_from_the_package_not_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The templates come from package resources (importlib.resources), so no path of the checkout is needed."""
    module = sys.modules["hermes_pipeline.config.templates"]
    assert Path(module.__file__).parent.name == "templates"  # type: ignore[arg-type]
    monkeypatch.chdir("/")
    assert find_template("minimal").text().startswith("#")


def test_init_names_the_credential_variables_a_template_reads_while_they_are_unset(
        env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    """FMT-76: credentials come from the environment only; `config init --template langfuse` says which variables
    to set while they are unset, and says nothing once they are."""
    assert find_template("langfuse").environment_variables() == ["LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY"]
    code, out, _ = run(capsys, "init", "--template", "langfuse", str(env.root / "a.toml"))
    assert code == 0 and "set in the environment first (never in the file): LANGFUSE_PUBLIC_KEY, " \
                          "LANGFUSE_SECRET_KEY" in out
    env.monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-x")
    env.monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-y")
    code, out, _ = run(capsys, "init", "--template", "langfuse", str(env.root / "b.toml"))
    assert code == 0 and "set in the environment first" not in out
    assert find_template("minimal").environment_variables() == []
