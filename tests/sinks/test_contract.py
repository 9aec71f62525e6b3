"""The open sink contract: a sink from another distribution, found through the ``hermes_pipeline.sinks``
entry-point group and named in the ``observability`` component's config, is fed by the same scope plugin
as the built-in sinks (the same scope UUIDs), and ``config validate`` accepts exactly what activation
accepts for its section (its own config statement; an unknown sink name is an error with a
"did you mean").

The third-party distribution is real: a ``dist-info`` directory with ``entry_points.txt`` and a module,
on ``sys.path`` of a child interpreter only (through ``PYTHONPATH``), written under ``tmp_path``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_pipeline.sinks.base import BaseSink, Sink, SinkContext
from hermes_pipeline.sinks.registry import load_sink, sink_names
from hermes_pipeline.export.errors import ExportConfigError
from tests._pipelines import write_pipeline
from tests._repo import REPO

MODULE = '''
"""A third-party sink written from the "Write a sink" section of docs/sinks.md."""
import json
from hermes_pipeline.sinks.base import BaseSink


class UuidSink(BaseSink):
    """Writes ``phase uuid parent`` of every scope event to ``path``."""

    @classmethod
    def validate_config(cls, config, vctx):
        for key in config:
            if key not in ("enabled", "path"):
                vctx.unknown_field(key, "enabled, path")
        if not isinstance(config.get("path"), str):
            vctx.error("path", "'path' is required: the file to write", code="uuid_sink.path")

    def __init__(self, config, ctx):
        self.out = open(config["path"], "w", encoding="utf-8")
        self.section = ctx.name
        self.seen = 0

    def __call__(self, event):
        self.seen += 1
        self.out.write(json.dumps([event.phase, event.uuid, event.parent_uuid, event.name]) + "\\n")

    def flush(self, timeout):
        self.out.flush()
        return True

    def shutdown(self, deadline):
        self.out.close()
        return True

    def stats(self):
        return {"seen": self.seen}
'''

SESSION = '''
import sys
from hermes_pipeline import Host
from hermes_pipeline.profile import release_all
from hermes_pipeline.runtime import get_engine

host = Host(get_engine(), platform="cli", model="m", provider="p")
with host.session() as session:
    with session.turn("hello") as turn:
        turn.call_llm({"model": "m", "messages": []}, lambda request: {"choices": [
            {"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]})
        turn.call_tool("read_file", {"path": "x"}, lambda path: "contents", tool_call_id="c1")
        turn.complete("done")
release_all()
'''


def _distribution(root: Path, name: str = "uuid_sink", source: str = MODULE, target: str = "UuidSink") -> Path:
    """A distribution installed as a real entry point: ``<name>.py`` and its ``dist-info`` under ``root/site``."""
    site = root / "site"
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[hermes_pipeline.sinks]\n{name} = {name}:{target}\n",
                                           encoding="utf-8")
    (site / f"{name}.py").write_text(source, encoding="utf-8")
    return site


def _guide_sink() -> str:
    """The sink of the "Write a sink" section of ``docs/sinks.md``, exactly as a reader would copy it."""
    guide = (REPO / "docs" / "sinks.md").read_text(encoding="utf-8")
    section = guide[guide.index("\n## Write a sink\n"):]
    section = section[:section.find("\n## ", 1)] if "\n## " in section[1:] else section
    [code] = re.findall(r"```python\n(.*?)```", section, re.S)
    return code


def _pipeline(root: Path, sink_section: str) -> Path:
    """The shared ATOF-file pipeline (ATOF to ``root/out``) with the sink's own section added."""
    return write_pipeline(root, "atof-file", extra="\n" + sink_section, atof_directory=root / "out")


def _env(root: Path, pipeline: Path, site: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site or _distribution(root)), env.get("PYTHONPATH", "")])
    env["HERMES_NEMO_RELAY_PLUGINS_TOML"] = str(pipeline)
    env["HERMES_HOME"] = str(root / "home")
    env["HERMES_PIPELINE_SYSTEM_PLUGINS_TOML"] = str(root / "no-system.toml")
    env["XDG_CONFIG_HOME"] = str(root / "xdg")
    return env


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_a_third_party_sink_receives_the_same_scope_uuids_as_the_builtin_atof_sink(tmp_path: Path) -> None:
    seen = tmp_path / "seen.jsonl"
    pipeline = _pipeline(tmp_path, f'[components.config.uuid_sink]\nenabled = true\npath = "{seen}"\n')
    env = _env(tmp_path, pipeline)
    validated = _run(["-m", "hermes_pipeline.cli.main", "config", "validate"], env, tmp_path)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    ran = _run(["-c", SESSION], env, tmp_path)
    assert ran.returncode == 0, ran.stderr
    atof = [json.loads(line) for line in (tmp_path / "out" / "events.jsonl").read_text().splitlines()]
    mine = [json.loads(line) for line in seen.read_text().splitlines()]
    assert len(mine) == len(atof) >= 8  # session, turn, llm call, tool call: start and end each

    def as_text(value: int | None) -> str | None:
        if value is None:
            return None
        h = f"{value:032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    assert [(phase, as_text(uuid), as_text(parent), name) for phase, uuid, parent, name in mine] == \
        [(e["scope_category"], e["uuid"], e["parent_uuid"], e["name"]) for e in atof]


def _refused(tmp_path: Path, section: str) -> tuple[str, dict[str, str]]:
    """What ``config validate`` says (it must exit 1) of the pipeline with ``section``, and the env."""
    env = _env(tmp_path, _pipeline(tmp_path, section))
    validated = _run(["-m", "hermes_pipeline.cli.main", "config", "validate"], env, tmp_path)
    assert validated.returncode == 1
    return validated.stdout + validated.stderr, env


def test_config_validate_runs_the_sinks_own_config_statement(tmp_path: Path) -> None:
    said, env = _refused(tmp_path, "[components.config.uuid_sink]\nenabled = true\ncolour = \"red\"\n")
    assert "uuid_sink.path" in said and "'path' is required" in said
    ran = _run(["-c", SESSION], env, tmp_path)  # activation refuses the very same file
    assert ran.returncode == 0
    assert not (tmp_path / "out" / "events.jsonl").exists()


def test_an_unknown_sink_name_is_an_error_with_did_you_mean(tmp_path: Path) -> None:
    said, _ = _refused(tmp_path, "[components.config.uuid_sinc]\nenabled = true\n")
    assert "no installed sink is called 'uuid_sinc'" in said and "did you mean 'uuid_sink'?" in said


def test_the_builtin_sinks_are_found_through_the_same_entry_point_group() -> None:
    assert {"atof", "atif", "opentelemetry"} <= set(sink_names())
    with pytest.raises(ExportConfigError, match="did you mean 'atof'"):
        load_sink("atfo")


def test_base_sink_defaults_and_the_protocol(tmp_path: Path) -> None:
    class Counting(BaseSink):
        def __init__(self) -> None:
            self.count = 0

        def __call__(self, event: object) -> None:
            self.count += 1

    sink = Counting()
    assert isinstance(sink, Sink)
    assert sink.flush(1.0) and sink.shutdown(1.0) and sink.stats() == {} and sink.destinations() == []
    ctx = SinkContext(name="x", base_dir=tmp_path)
    assert ctx.builder_options()["on_invalid"] == "skip"


def test_cfg_42_the_layer_merge_concatenates_the_lists_each_sink_states() -> None:
    """CFG-42: which destination lists concatenate when pipeline files are layered is each sink's own
    statement (``list_paths`` / ``clearable_paths`` on its builder), read by name through the entry points."""
    from hermes_pipeline.config.merge import _list_rule, sink_lists
    from hermes_pipeline.sinks.atif import config as atif
    from hermes_pipeline.sinks.atof import config as atof

    assert sink_lists("atof") == (frozenset(atof.LIST_PATHS), frozenset())
    assert sink_lists("atif") == (frozenset(atif.LIST_PATHS), frozenset())
    assert sink_lists("opentelemetry")[1] == {("logs", "endpoints"), ("metrics", "endpoints")}
    assert sink_lists("no_such_sink") == (frozenset(), frozenset())
    kinds = {0: "observability"}
    assert _list_rule(("components", 0, "config", "atif", "storage"), kinds) == "concat"
    assert _list_rule(("components", 0, "config", "opentelemetry", "logs", "endpoints"), kinds) == "clearable"
    assert _list_rule(("components", 0, "config", "atif", "tool_definitions"), kinds) == "replace"


def test_the_sink_written_from_the_sink_guide_alone_shares_the_builtin_sinks_uuids(tmp_path: Path) -> None:
    """The example sink of docs/sinks.md, installed as an entry point named as the guide says and configured in a
    pipeline file as the guide says, receives the very scopes the built-in ATOF sink writes."""
    seen = tmp_path / "my-sink.txt"
    site = _distribution(tmp_path, "my_sink", _guide_sink(), "MySink")
    env = _env(tmp_path, _pipeline(tmp_path, f'[components.config.my_sink]\nenabled = true\npath = "{seen}"\n'), site)
    assert _run(["-m", "hermes_pipeline.cli.main", "config", "validate"], env, tmp_path).returncode == 0
    ran = _run(["-c", SESSION], env, tmp_path)
    assert ran.returncode == 0, ran.stderr
    atof = [json.loads(line) for line in (tmp_path / "out" / "events.jsonl").read_text().splitlines()]
    mine = [json.loads(line) for line in seen.read_text().splitlines()]
    assert [(phase, uuid, name) for phase, uuid, name in mine] == \
        [(e["scope_category"], e["uuid"].replace("-", ""), e["name"]) for e in atof]
