"""What ``hermes-pipeline replay`` loads: the replay, the reference agent, the engine and the trajectory store,
and nothing the replay does not use.

A replay is offline: every LLM call and tool result is served from the recording, and the new run goes
to a file through the store's ATIF writer. A child interpreter runs the command on a recorded file and
reports which modules are loaded and which entry-point groups were scanned. These checks are about
module presence, not timings (``bench/bench_trajectory.py`` measures the command's wall time). Each
absent name is also checked to be importable, so a check cannot pass merely because a name is wrong;
and replaying by id, which reads the profile's ``config.yaml`` to find the store, loads the YAML reader
that a file replayed with ``--output`` does without.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline.cli.main import COMMANDS
from hermes_pipeline.demo.model_server import ScriptStep, ToolCallSpec

from tests.trajectories._support import record_reference_run

NOT_LOADED = (
    "opentelemetry",  # the OTel SDK and exporters
    "google.protobuf",
    "sqlite3",  # the observability store, alert state
    "httpx",
    "requests",
    "jsonschema",
    "hermes_pipeline.dashboard",
    "hermes_pipeline.demo.model_server",  # recorded responses are served without a model server
    "hermes_pipeline.sinks.otel",
    "hermes_pipeline.sinks.atof",
    "hermes_pipeline.sinks.observability_store",
    "hermes_pipeline.alerts",
    "hermes_pipeline.hermes",
    "hermes_pipeline.shared_metrics",
    "hermes_pipeline.readers.trace",  # the trace tree (readers.files, the safe file reading, is shared)
)
"""Modules (packages: any of their submodules) the replay command must not import."""

CHILD = textwrap.dedent("""\
    import contextlib, importlib.metadata, importlib.util, io, json, sys

    scanned = []
    _entry_points = importlib.metadata.entry_points

    def counting(**kwargs):
        scanned.append(kwargs.get("group"))
        return _entry_points(**kwargs)

    importlib.metadata.entry_points = counting

    from hermes_pipeline.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(sys.argv[1:])
    names = json.loads(sys.stdin.read())
    loaded = {name: any(m == name or m.startswith(name + ".") for m in sys.modules) for name in names}
    importable = {name: importlib.util.find_spec(name) is not None for name in names}
    print(json.dumps({"code": code, "stdout": out.getvalue(), "stderr": err.getvalue(), "loaded": loaded,
                      "importable": importable, "scanned": scanned, "modules": sorted(sys.modules)}))
""")


def _run_child(argv: list[str], names: list[str], home: Path) -> dict[str, Any]:
    env = {**os.environ, "HERMES_HOME": str(home)}
    env.pop("HERMES_NEMO_RELAY_PLUGINS_TOML", None)
    done = subprocess.run([sys.executable, "-c", CHILD, *argv], input=json.dumps(names), capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-call reference-agent run in a profile's store (the model server is stopped)."""
    root = tmp_path_factory.mktemp("replay-imports")
    path, _ = record_reference_run(root, [ScriptStep(tool_calls=[ToolCallSpec("read_file", {"path": "notes.txt"})]),
                                          ScriptStep(content="They say oats.")])
    (path.parent.parent / "config.yaml").write_text("observability:\n  trajectories:\n    enabled: true\n")
    return path


def test_replaying_a_file_loads_no_exporter_server_dashboard_or_other_command(recorded: Path, tmp_path: Path) -> None:
    others = sorted({m for name, m in COMMANDS.items() if name != "replay"} - {COMMANDS["replay"]})
    names = [*NOT_LOADED, *others, "yaml", "ruamel.yaml"]
    result = _run_child(["replay", str(recorded), "--output", str(tmp_path / "new.json")], names,
                        recorded.parent.parent)
    assert result["code"] == 0, result["stderr"]
    assert result["stdout"].strip().splitlines()[-1] == "identical"
    assert (tmp_path / "new.json").is_file()
    assert [name for name in names if result["loaded"][name]] == []
    assert [name for name in names if not result["importable"][name]] == []  # every name is a real module
    assert result["scanned"] == []  # no scan of every installed distribution's entry points
    assert "hermes_pipeline.replay.runner" in result["modules"] and "hermes_pipeline.cli.replay_cmd" in result["modules"]


def test_replaying_by_id_reads_the_profile_config_to_find_the_store(recorded: Path) -> None:
    """The counterpart: an id needs the store directory from ``config.yaml`` (the YAML reader is loaded), and
    the new run goes to the store; still nothing of :data:`NOT_LOADED`."""
    result = _run_child(["replay", recorded.name[11:-5]], ["yaml", "ruamel.yaml", *NOT_LOADED], recorded.parent.parent)
    assert result["code"] == 0, result["stderr"]
    assert result["loaded"]["yaml"]  # the profile's config.yaml is read as Hermes reads it (PyYAML)
    assert not result["loaded"]["ruamel.yaml"]  # the comment-keeping editor is not needed to read
    assert [name for name in NOT_LOADED if result["loaded"][name]] == []
    assert "wrote " + str(recorded.parent) in result["stderr"]
