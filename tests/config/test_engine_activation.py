"""Hosts built on ``get_engine()`` activate the selected pipeline file (issue 11 item 2; spec 03
CFG-2, CFG-4, CFG-7, CFG-10, CFG-50; 04 FMT-35).

Process-wide behaviour, so every scenario runs the host guide's snippet (``docs/host-api.md``) in a fresh interpreter
with an isolated environment (temporary HERMES_HOME, XDG and system paths) and a temporary cwd.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests._repo import REPO

PIPELINE = """\
version = 1

[[components]]
kind = "observability"

[components.config]
version = 4

[components.config.atof]
enabled = true

[[components.config.atof.sinks]]
type = "file"

[components.config.atif]
enabled = true
"""

SNIPPET = textwrap.dedent("""\
    import sys
    from hermes_pipeline import Host, get_engine

    def provider(request):
        return {"id": "r1", "model": "gpt-x", "usage": {"prompt_tokens": 3, "completion_tokens": 1},
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "hello"}}]}

    host = Host(get_engine(), platform="cli", model="gpt-x", provider="openai",
                base_url="https://api.example/v1", api_mode="chat_completions")
    with host.session() as session:
        with session.turn("hi", conversation_history=[]) as turn:
            messages = [{"role": "user", "content": turn.user_content}]
            turn.call_llm({"model": "gpt-x", "messages": messages}, provider, max_retries=0)
            text = turn.call_tool("echo", {"text": "x"}, lambda text: text, tool_call_id="c1")
            turn.complete("hello")
    print("host loop finished", flush=True)
    """)


HOST_GUIDE = REPO / "docs" / "host-api.md"
"""The host integration guide, whose first ``python`` block is run as written."""

GUIDE_PRELUDE = textwrap.dedent("""\
    # The names the host guide's snippet leaves to the host: a provider client, the model's tool
    # calls, the tools and the texts.
    from types import SimpleNamespace

    class Client:
        def create(self, **request):
            return {"id": "r1", "model": request["model"], "usage": {"prompt_tokens": 3, "completion_tokens": 1},
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": "hello"}}]}

    client = Client()
    user_text, history, final_text = "What do my notes say?", [], "They say hello."
    tool_calls = [SimpleNamespace(name="read_file", args={"path": "notes.txt"}, id="call-1")]
    tools = {"read_file": lambda path: "hello"}
    """)


def host_guide_snippet() -> str:
    """The first ``python`` block of the host integration guide (``docs/host-api.md``), as written."""
    guide = HOST_GUIDE.read_text(encoding="utf-8").split("# Host integration guide", 1)[1]
    return guide.split("```python\n", 1)[1].split("```", 1)[0]


def run_snippet(tmp_path: Path, pipeline: str | None, code: str = SNIPPET) -> tuple[subprocess.CompletedProcess[str],
                                                                                    Path, Path]:
    """Run ``code`` in a child interpreter; returns the result, the HERMES_HOME and the cwd."""
    cwd = tmp_path / "cwd"
    home = tmp_path / "hermes-home"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HERMES_", "OTEL_")) and k not in ("XDG_CONFIG_HOME",)}
    env.update({"HERMES_HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home"),
                "HERMES_PIPELINE_SYSTEM_PLUGINS_TOML": str(tmp_path / "no-system.toml")})
    if pipeline is not None:
        (cwd / "plugins.toml").write_text(pipeline, encoding="utf-8")
        env["HERMES_NEMO_RELAY_PLUGINS_TOML"] = "plugins.toml"  # relative: resolved against the cwd (CFG-2)
    script = tmp_path / "host.py"
    script.write_text(code, encoding="utf-8")
    result = subprocess.run([sys.executable, str(script)], cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=120)
    return result, home, cwd


def test_cfg_4_host_guide_snippet_exports_atof_and_atif(tmp_path: Path) -> None:
    """CFG-4 / CFG-50: with the selector set, the host guide's ``Host(get_engine(), ...)`` snippet (the text of
    ``docs/host-api.md`` itself) activates the selected file process-wide and writes ATOF events and an ATIF
    trajectory (to the profile's telemetry directory, FMT-35), without opening a profile."""
    snippet = host_guide_snippet()
    assert "Host(get_engine()" in snippet and "open_profile" not in snippet
    result, home, cwd = run_snippet(tmp_path, PIPELINE, GUIDE_PRELUDE + snippet + 'print("host loop finished")\n')
    assert result.returncode == 0, result.stderr
    assert "host loop finished" in result.stdout
    telemetry = home / "telemetry"
    events = sorted(telemetry.glob("hermes-events-*.jsonl"))
    trajectories = sorted(telemetry.glob("hermes-atif-*.json"))
    assert len(events) == 1 and len(trajectories) == 1, sorted(p.name for p in telemetry.iterdir())
    kinds = [json.loads(line)["kind"] for line in events[0].read_text(encoding="utf-8").splitlines()]
    assert "scope" in kinds and len(kinds) >= 6
    steps = json.loads(trajectories[0].read_text(encoding="utf-8"))["steps"]
    assert [step.get("source") for step in steps][:2] == ["user", "agent"], steps
    assert sorted(p.name for p in cwd.iterdir()) == ["plugins.toml"]  # nothing written into the cwd


def test_cfg_7_bad_pipeline_file_fails_open_and_says_why(tmp_path: Path) -> None:
    """CFG-7: a selected file that does not load leaves the process without pipeline plugins; the host
    loop runs to the end, nothing is exported, and ``pipeline.load_failed`` says why on stderr."""
    result, home, _ = run_snippet(tmp_path, PIPELINE.replace("version = 4", "version = 3"))
    assert result.returncode == 0, result.stderr
    assert "host loop finished" in result.stdout
    assert "pipeline.load_failed" in result.stderr and "continuing without pipeline plugins" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (home / "telemetry").exists()


def test_cfg_3_unset_selector_activates_nothing(tmp_path: Path) -> None:
    """CFG-3: without the selector, ``get_engine()`` processes no pipeline file at all."""
    code = SNIPPET + textwrap.dedent("""\
        from hermes_pipeline.profile import activation
        print("state", activation.PROCESS.state.value, "plugins", get_engine().plugins.names())
        """)
    result, home, _ = run_snippet(tmp_path, None, code)
    assert result.returncode == 0, result.stderr
    assert "state UNINITIALIZED plugins []" in result.stdout
    assert not home.exists()


def test_cfg_50_activation_is_decided_once_across_threads(tmp_path: Path) -> None:
    """CFG-50: concurrent first calls of ``get_engine()`` return one engine with the pipeline active on
    it exactly once (one component registration, one ACTIVE line), whichever thread got there first."""
    code = textwrap.dedent("""\
        import logging, threading
        logging.basicConfig(level=logging.INFO, format="LOG %(message)s")
        from hermes_pipeline import get_engine
        from hermes_pipeline.profile import ACTIVE_LOG_LINE, activation
        barrier = threading.Barrier(8)
        seen = []
        def worker():
            barrier.wait()
            engine = get_engine()
            seen.append((id(engine), tuple(engine.plugins.names())))
        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads: t.start()
        for t in threads: t.join()
        print("engines", len({s[0] for s in seen}), "views", sorted({s[1] for s in seen}))
        print("state", activation.PROCESS.state.value)
        """)
    result, _, _ = run_snippet(tmp_path, PIPELINE, code)
    assert result.returncode == 0, result.stderr
    assert "engines 1 views [('component:observability',)]" in result.stdout
    assert "state ACTIVE" in result.stdout
    assert result.stderr.count("Relay plugins are active process-wide") == 1


def test_cfg_50_open_profile_after_get_engine_joins_the_activation(tmp_path: Path) -> None:
    """CFG-50: a profile opened after ``get_engine()`` joins the activation ``get_engine()`` decided
    instead of activating a second time; a profile opened first decides it and ``get_engine()`` joins."""
    code = textwrap.dedent("""\
        import sys
        from hermes_pipeline import get_engine
        from hermes_pipeline.profile import activation, open_profile, release_all
        if sys.argv[1:] == ["engine-first"]:
            names = get_engine().plugins.names()
            profile = open_profile()
        else:
            profile = open_profile()
            names = get_engine().plugins.names()
        print("names", names, "holders", len(activation.PROCESS.holders()), profile.activation.state.value)
        release_all()
        print("after release", activation.PROCESS.state.value, get_engine().plugins.names())
        """)
    for order, holders in (("engine-first", 2), ("profile-first", 1)):
        (tmp_path / order).mkdir()
        result, _, _ = run_snippet(tmp_path / order, PIPELINE, code.replace("sys.argv[1:]", repr([order])))
        assert result.returncode == 0, result.stderr
        assert f"names ['component:observability'] holders {holders} ACTIVE" in result.stdout, result.stdout
        assert "after release UNINITIALIZED []" in result.stdout
