"""``hermes-pipeline demo``: a scripted session end to end, exported through a real pipeline file.

The demo starts the deterministic model server and an OTLP receiver on 127.0.0.1, activates the
pipeline file (by default the packaged ``pipeline.toml``, the same as ``pipelines/demo.toml``)
through a profile exactly as a host would, runs two turns of the reference agent, releases the
pipeline (which writes the ATIF trajectories) and reports what happened and where it went.
"""

from __future__ import annotations

import json
import tempfile
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

import tomli_w

from ..engine.core import Engine
from ..testing import Recorder
from . import plugins as demo_plugins
from .agent import ReferenceAgent
from .model_server import ScriptedModelServer, ScriptStep, ToolCallSpec
from .openai_client import ChatCompletionsClient
from .otlp_receiver import OTLPReceiver
from .profile_tools import ProfileTools
from .tools import Workspace
from .tree import render

NOTES = "Groceries: oats, apples.\nCall the plumber on Tuesday.\n"
SECRETS = "API_KEY=sk-demo-0123456789abcdef0123\n"


def default_pipeline() -> str:
    """The packaged demo pipeline file's text."""
    return resources.files(__package__).joinpath("pipeline.toml").read_text(encoding="utf-8")


def _last_tool_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "tool":
            return str(message.get("content", ""))
    return ""


SKILL = "weekly-summary"
SKILL_AND_MEMORY_CALLS = [  # the agent keeps a skill for the task and remembers a fact (spec 06 §4-§5)
    ToolCallSpec("skill_manage", {"action": "create", "name": SKILL, "reason": "summaries are requested weekly",
                                  "content": "# Weekly summary\n1. Read notes.txt\n2. Write summary.txt\n"}),
    ToolCallSpec("skill_manage", {"action": "patch", "name": SKILL, "old_text": "2. Write summary.txt",
                                  "new_text": "2. Write summary.txt\n3. Ask a reviewer to check it",
                                  "reason": "a reviewer catches mistakes"}),
    ToolCallSpec("skill_manage", {"action": "view", "name": SKILL}),
    ToolCallSpec("memory", {"action": "add", "target": "memory", "content": "The plumber comes on Tuesdays."}),
]
USER_EDIT = "Name: Ana. Prefers short answers.\n"
"""What the demo's "user" writes into ``memories/USER.md`` by hand between the two turns."""


def demo_script() -> list[Any]:
    """The model's scripted replies, in the order the agent will ask for them."""
    return [
        # turn 1: a transient provider failure, then two reads (one blocked by policy), then an answer
        ScriptStep.error(503, "upstream overloaded, try again"),
        ScriptStep(tool_calls=[ToolCallSpec("read_file", {"path": "./notes.txt"}),
                               ToolCallSpec("read_file", {"path": "secrets.env"})]),
        lambda body: ScriptStep(content="Your notes say: " + " ".join(
            m.get("content", "") for m in body["messages"] if m.get("role") == "tool"
            and "error" not in str(m.get("content", ""))[:10]).strip()),
        # turn 2: write (needs approval), delegate to a reviewer (child reads the file), answer
        ScriptStep(tool_calls=[ToolCallSpec("write_file", {"path": "summary.txt",
                                                           "content": "Buy oats and apples; plumber Tuesday."}),
                               *SKILL_AND_MEMORY_CALLS]),
        ScriptStep(tool_calls=[ToolCallSpec("delegate", {"goal": "Check that summary.txt is accurate",
                                                         "role": "reviewer"})]),
        ScriptStep(tool_calls=[ToolCallSpec("read_file", {"path": "summary.txt"})]),
        lambda body: ScriptStep(content=f"Checked: {_last_tool_text(body)!r} matches the notes."),
        lambda body: ScriptStep(content=f"Saved summary.txt. Reviewer: {_last_tool_text(body)}"),
    ]


@dataclass
class DemoResult:
    """What the demo produced, for the CLI and the tests."""

    answers: list[str]
    recorder: Recorder
    model_requests: list[dict[str, Any]]
    workspace: Path
    engine: Engine
    activation: Any = None
    """The pipeline activation report."""
    outputs: dict[str, list[Path]] = field(default_factory=dict)
    """Files written by the sinks, by kind (``atof``, ``atif``)."""
    spans: list[Any] = field(default_factory=list)
    """Spans the OTLP receiver decoded."""
    exporter_stats: dict[str, Any] = field(default_factory=dict)
    """Queue, drop and error counters of the scope plugin and each sink, taken before release."""
    failures_before: Any = None
    """The engine's failure counts when the demo started (the process-wide engine may have counted others')."""
    destinations: list[str] = field(default_factory=list)
    received_locally: bool = True
    """The OTLP spans went to the demo's own receiver (``spans``), not to the pipeline's or a given endpoint."""
    store_queries: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Two of the chapter's queries over the demo profile's observability store (Q-S1 for the skill, Q-M2)."""


def localize(pipeline: dict[str, Any], root: Path, otlp_endpoint: str | None,
             otlp_headers: dict[str, str] | None = None) -> dict[str, Any]:
    """Point relative output directories at ``root`` and, unless ``otlp_endpoint`` is ``None`` (the file's own
    endpoints are kept), every OTLP trace endpoint at ``otlp_endpoint`` with ``otlp_headers`` added."""
    for component in pipeline.get("components", []):
        config = component.get("config") or {}
        for sink in (config.get("atof") or {}).get("sinks", []):
            if "output_directory" in sink and not Path(sink["output_directory"]).is_absolute():
                sink["output_directory"] = str(root / sink["output_directory"])
        atif = config.get("atif") or {}
        if "output_directory" in atif and not Path(atif["output_directory"]).is_absolute():
            atif["output_directory"] = str(root / atif["output_directory"])
        if otlp_endpoint is None:
            continue
        for endpoint in (config.get("opentelemetry") or {}).get("endpoints", []):
            endpoint["endpoint"] = otlp_endpoint
            if otlp_headers:
                endpoint["headers"] = {**(endpoint.get("headers") or {}), **otlp_headers}
    return pipeline


def run_demo(workspace: Path | None = None, *, pipeline_text: str | None = None, keep_endpoints: bool = False,
             otlp: str | None = None, otlp_headers: dict[str, str] | None = None) -> DemoResult:
    """Run the scripted two-turn session through the pipeline and return what happened.

    By default every OTLP endpoint of the pipeline is pointed at the demo's own receiver on 127.0.0.1 (whose
    decoded spans land in :attr:`DemoResult.spans`). ``keep_endpoints`` keeps the pipeline file's own endpoints
    (a real backend: ``demo --pipeline FILE``); ``otlp`` sends every trace endpoint to that URL instead, with
    ``otlp_headers`` added (``demo --otlp URL``). Then no receiver runs and the report says where the spans went
    from the exporters' own counters."""
    from ..config.discovery import PipelineSettings
    from ..profile import open_profile, release_all
    from ..runtime import get_engine

    root = Path(workspace) if workspace is not None else Path(tempfile.mkdtemp(prefix="hermes-demo-"))
    root = root.resolve()
    files = root / "files"
    files.mkdir(parents=True, exist_ok=True)
    (files / "notes.txt").write_text(NOTES, encoding="utf-8")
    (files / "secrets.env").write_text(SECRETS, encoding="utf-8")
    receiver = OTLPReceiver() if otlp is None and not keep_endpoints else None
    try:
        target = receiver.endpoint if receiver is not None else otlp
        document = localize(tomllib.loads(pipeline_text or default_pipeline()), root, target, otlp_headers)
        pipeline_file = root / "pipeline.toml"
        pipeline_file.write_text(tomli_w.dumps(document), encoding="utf-8")
        settings = PipelineSettings(plugins_toml=str(pipeline_file), xdg_config_home=str(root / "no-user-config"),
                                    home=str(root), system_plugins_toml=str(root / "no-system-plugins.toml"))
        home = root / "hermes-home"
        home.mkdir(parents=True, exist_ok=True)
        # the demo's own profile records every run into its trajectory store, so it can be replayed
        # and keeps the observability store (skill history, memory audit, task runs), BOOK-16
        (home / "config.yaml").write_text("observability:\n  trajectories:\n    enabled: true\n"
                                          "  audit:\n    enabled: true\n", encoding="utf-8")
        (home / "memories").mkdir(exist_ok=True)
        (home / "memories" / "MEMORY.md").write_text("Groceries are bought on Saturdays.\n", encoding="utf-8")
        profile = open_profile(home, settings=settings)
        result = DemoResult([], Recorder(), [], root, profile.engine, activation=profile.activation,
                            failures_before=profile.engine.failure_stats())
        try:
            result.engine.add_plugin(result.recorder, name="demo-recorder")
            result.engine.add_plugin(demo_plugins, name="demo-plugins")
            with ScriptedModelServer(demo_script()) as server:
                host = profile.host(platform="cli", model=server.model, provider="local-scripted",
                                    base_url=server.base_url, api_mode="chat_completions")
                tools = {**Workspace(files).tools(), **ProfileTools(home, host).tools()}
                agent = ReferenceAgent(host, ChatCompletionsClient(server.base_url, timeout=10.0),
                                       tools, responder=lambda tool, command: "once",
                                       context=host.context_snapshot(home, toolsets=["file"]))
                with host.session() as session:
                    result.answers.append(agent.run_turn(session, "What do my notes say?"))
                    # the user edits a memory file by hand, outside the agent: a user-direct change
                    (home / "memories" / "USER.md").write_text(USER_EDIT, encoding="utf-8")
                    result.answers.append(agent.run_turn(session, "Save a short summary and have a reviewer check it."))
                result.model_requests = server.requests
            component = get_engine().plugins.get("component:observability")
            if component is not None and component.instance is not None:
                instance: Any = component.instance
                instance.flush(10.0)
                result.exporter_stats = instance.stats()
                exporters = getattr(instance, "exporters", None)
                result.destinations = exporters.destinations() if exporters is not None else []
        finally:
            profile.engine.plugins.remove_all()
            release_all()  # shuts the sinks down: partial output and trajectories are written
        defaults = root / "hermes-home" / "telemetry"  # where outputs without output_directory go (FMT-35)
        result.outputs = {"atof": sorted([*root.glob("telemetry/*.jsonl"), *defaults.glob("*.jsonl")]),
                          "atif": sorted([*root.glob("trajectories/*.json"), *defaults.glob("hermes-atif-*.json")]),
                          "store": sorted((home / "trajectories").glob("*.json"))}
        result.spans = list(receiver.spans) if receiver is not None else []
        result.received_locally = receiver is not None
        result.store_queries = store_queries(home)
        return result
    finally:
        if receiver is not None:
            receiver.close()


def store_queries(home: Path) -> dict[str, list[dict[str, Any]]]:
    """Q-S1 (the demo skill's history) and Q-M2 (who changes memory) over the store of ``home``."""
    from ..sinks.observability_store.db import StoreError, connect, store_path
    from ..sinks.observability_store.queries import run

    try:
        conn = connect(store_path(home), create=False, readonly=True)
    except StoreError:
        return {}
    try:
        return {"Q-S1": run(conn, "Q-S1", skill=SKILL), "Q-M2": run(conn, "Q-M2")}
    finally:
        conn.close()


def _sent_elsewhere(result: DemoResult) -> list[str]:
    """Per OTLP trace endpoint the demo did not receive itself: how many spans it took (the exporter's counts)
    and its URL (from the destinations the pipeline reports, ``... <label>: <type> → <url>``)."""
    lines = []
    otel = result.exporter_stats.get("opentelemetry")
    entries = otel.get("endpoints") if isinstance(otel, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        label = str(entry.get("label", ""))
        urls = [d.rsplit(" → ", 1)[-1] for d in result.destinations if f"{label}:" in d and " → " in d]
        lines.append(f"{entry.get('exported', 0)} spans exported to {urls[0] if urls else label} "
                     f"(failed {entry.get('failed', 0)}, dropped {entry.get('dropped', 0)})")
    return lines or ["sent to the pipeline's OTLP endpoints (see the exporter counters below)"]


def _counters(stats: dict[str, Any]) -> str:
    parts = []
    for name, values in stats.items():
        if isinstance(values, dict):
            dropped = sum(v for k, v in _flat(values) if "drop" in k)
            errors = sum(v for k, v in _flat(values) if "error" in k or "fail" in k)
            parts.append(f"{name}: dropped {dropped}, errors {errors}")
    return "; ".join(parts)


def _flat(values: dict[str, Any], prefix: str = "") -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for key, value in values.items():
        if isinstance(value, dict):
            out += _flat(value, f"{prefix}{key}.")
        elif isinstance(value, int) and not isinstance(value, bool):
            out.append((f"{prefix}{key}", value))
    return out


def print_report(result: DemoResult, out: TextIO) -> None:
    """Print the tree, where every output went, and the counters."""
    out.write("hermes_pipeline demo: a scripted session against a local OpenAI-compatible model\n\n")
    out.write(render(result.recorder.events) + "\n\n")
    tagged = sum(1 for r in result.model_requests if r.get("metadata", {}).get("hermes_middleware_demo"))
    out.write(f"events dispatched: {len(result.recorder.events)}; provider requests: "
              f"{len(result.model_requests)} ({tagged} carried the llm_request middleware tag)\n")
    state = getattr(getattr(result.activation, "state", None), "value", "unknown")
    nothing = getattr(result.activation, "nothing_exported", None)
    if nothing:  # an active pipeline that wires nothing says so instead of an empty outputs list
        state = f"{state}, but nothing is exported: {nothing}"
    out.write(f"pipeline: {result.workspace / 'pipeline.toml'} (activation {state})\n")
    for diagnostic in getattr(result.activation, "diagnostics", []):
        if getattr(diagnostic, "level", "") == "error":
            out.write(f"  error: {diagnostic.message}\n")
    out.write("outputs:\n")
    for path in result.outputs.get("atof", []):
        lines = sum(1 for _ in path.open(encoding="utf-8"))
        out.write(f"  ATOF events       {path}  ({lines} events)\n")
    for path in result.outputs.get("atif", []):
        steps = len(json.loads(path.read_text(encoding="utf-8")).get("steps", []))
        out.write(f"  ATIF trajectory   {path}  ({steps} steps)\n")
    for path in result.outputs.get("store", []):
        out.write(f"  trajectory store  {path}  (replayable)\n")
    if result.spans:
        traces = len({s.trace_id for s in result.spans})
        out.write(f"  OTLP spans        {len(result.spans)} spans in {traces} trace(s) received on 127.0.0.1\n")
    elif not result.received_locally:
        for line in _sent_elsewhere(result):
            out.write(f"  OTLP spans        {line}\n")
    if result.exporter_stats:
        out.write(f"exporter counters: {_counters(result.exporter_stats)}\n")
    stats, before = result.engine.failure_stats(), result.failures_before
    failures = sum(stats.by_plugin.values()) - (sum(before.by_plugin.values()) if before is not None else 0)
    timeouts = sum(stats.timeouts.values()) - (sum(before.timeouts.values()) if before is not None else 0)
    out.write(f"plugin failures: {failures}; timeouts: {timeouts}\n")  # during this demo only
    out.write(f"workspace: {result.workspace}\n")
    for i, answer in enumerate(result.answers, 1):
        out.write(f"answer {i}: {json.dumps(answer, ensure_ascii=False)}\n")
    if result.outputs.get("atof"):
        out.write(f"\nexplore: hermes-pipeline trace show {result.outputs['atof'][0]}\n")
    if result.outputs.get("store"):
        first = result.outputs["store"][0]
        out.write(f"replay:  hermes-pipeline replay {first.name[11:-5]} --home {first.parent.parent}\n")
    if result.store_queries:
        home = result.workspace / "hermes-home"
        out.write(f"\nobservability store: {home / 'observability' / 'observability.sqlite3'}\n")
        out.write(f"Q-S1 skill history of {SKILL!r} (hermes-pipeline audit skills history {SKILL} --home {home}):\n")
        for row in result.store_queries.get("Q-S1", []):
            out.write(f"  v{row['version']}  {row['change_type']:<9} {row['changed_at']}  {row['reason'] or ''}\n")
        out.write(f"Q-M2 who changes memory (hermes-pipeline audit memory actors --home {home}):\n")
        for row in result.store_queries.get("Q-M2", []):
            out.write(f"  {row['actor']:<17} {row['change_count']}\n")
    dashboard_home = result.workspace / "hermes-home"
    out.write(f"\nopen this profile in the dashboard: hermes-pipeline dashboard --home {dashboard_home} --open\n")
