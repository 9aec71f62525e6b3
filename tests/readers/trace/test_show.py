"""``hermes-pipeline trace show``: ATOF and ATIF files from a real session rendered as a tree with the slowest,
heaviest and failed / blocked / cancelled markers; clear one-line errors for anything else (spec 04 §2, §3)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline import Host
from hermes_pipeline.cli.trace_cmd import main
from hermes_pipeline.readers.trace import load_trace, render_trace
from hermes_pipeline.testing import capture_export

from hermes_pipeline.testing import chat_response


def tool_calls(*names: str) -> dict[str, Any]:
    return chat_response(None, [{"id": f"id-{name}", "type": "function", "function": {"name": name, "arguments": "{}"}}
                                for name in names])


class FakeClock:
    """Every clock the engine stamps events and durations with, made explicit: each reading advances it by one
    microsecond (so order is kept) and :meth:`spend` advances it by a chosen amount. Durations in the files are
    then exactly what the session says, whatever the load on the machine (no wall-clock time in the test)."""

    START_NS = 1_788_257_700_000_000_000

    def __init__(self) -> None:
        self._ns = self.START_NS
        self._lock = threading.Lock()

    def ns(self) -> int:
        with self._lock:
            self._ns += 1_000
            return self._ns

    def seconds(self) -> float:
        return self.ns() / 1e9

    def spend(self, ms: int) -> None:
        with self._lock:
            self._ns += ms * 1_000_000

    def install(self, patch: pytest.MonkeyPatch) -> None:
        import time

        from hermes_pipeline.export import publication, scopes
        from hermes_pipeline.host import tools, turn

        for module in (time, publication, scopes):
            patch.setattr(module, "time_ns", self.ns)
        for module in (time, tools, turn):
            patch.setattr(module, "perf_counter_ns", self.ns)
        patch.setattr(time, "time", self.seconds)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """An ATOF file and an ATIF file written by the real file sinks for one session on a shared scope plugin
    (through the public helper for sink authors, ``hermes_pipeline.testing.capture_export``), on a
    :class:`FakeClock`: the slow tool takes 80 ms of it, everything else a few microseconds."""
    directory = tmp_path_factory.mktemp("traces")
    heavy = chat_response("summary")
    heavy["usage"] = {"prompt_tokens": 5000, "completion_tokens": 12}
    clock = FakeClock()

    def slow_tool() -> str:
        clock.spend(80)  # the tool's own work takes a while
        return "slow result"

    def cancelled() -> str:
        raise KeyboardInterrupt

    def session(host: Host) -> None:
        with host.session("demo") as session, session.turn("do the things") as turn:
            turn.call_llm({"model": "m", "messages": []},
                          lambda r: tool_calls("slow_tool", "quick", "broken", "rm", "wait"))
            turn.call_tool("slow_tool", {}, slow_tool, tool_call_id="id-slow_tool")
            turn.call_tool("quick", {}, lambda: "ok", tool_call_id="id-quick")
            turn.call_tool("broken", {}, lambda: 1 / 0, tool_call_id="id-broken")
            turn.call_tool("rm", {}, lambda: "gone", tool_call_id="id-rm", deny="not on the allowlist")
            with pytest.raises(KeyboardInterrupt):
                turn.call_tool("wait", {}, cancelled, tool_call_id="id-wait")
            turn.call_llm({"model": "m", "messages": []}, lambda r: heavy)
            turn.complete("summary")

    with pytest.MonkeyPatch.context() as patch:
        clock.install(patch)
        capture_export({"version": 4, "atof": {"enabled": True, "sinks": [{"type": "file", "filename": "events.jsonl"}]},
                        "atif": {"enabled": True, "output_directory": "atif"}}, directory, session=session,
                       timeout=10.0)
    [trajectory] = list((directory / "atif").iterdir())
    yield directory / "events.jsonl", trajectory


def line(output: str, text: str) -> str:
    """The one tree line (above the summary) containing ``text``."""
    tree = output.split("\nproblems: ")[0]
    [found] = [row for row in tree.splitlines() if text in row]
    return found


@pytest.mark.parametrize("kind", ["atof", "atif"])
def test_trace_show_marks_slowest_heaviest_and_problems(files: tuple[Path, Path], kind: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """trace show on real ATOF / ATIF files: a tree with durations, tokens and statuses; the slowest tool, the
    heaviest LLM call and the failed, blocked and cancelled tools are marked; --slowest lists the N slowest."""
    path = files[0] if kind == "atof" else files[1]
    assert main(["show", str(path), "--no-color", "--slowest", "3"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "\033[" not in out
    assert out.splitlines()[0].startswith(f"{kind.upper()} {path}")
    assert "◀ slowest" in line(out, "slow_tool [id-slow_tool]")
    assert out.count("◀ slowest") == 1 and out.count("◀ heaviest") == 1
    assert "◀ heaviest (5012 tokens)" in line(out, "tokens in 5000 / out 12")
    assert "✗ FAILED" in line(out, "broken [id-broken]")
    assert "✗ BLOCKED" in line(out, "rm [id-rm]")
    assert "✗ CANCELLED" in line(out, "wait [id-wait]")
    assert " ok " in line(out, "quick [id-quick]") + " "
    slow_ms = float(line(out, "slow_tool [id-slow_tool]").split(" ms")[0].rsplit(" ", 1)[1])
    assert 80 <= slow_ms < 81
    assert "problems: 1 blocked, 1 cancelled, 1 failed" in out
    ranking = out.split("slowest 3 scope(s):\n")[1].splitlines()
    assert len(ranking) == 3 and any("slow_tool" in row for row in ranking)
    if kind == "atof":
        assert line(out, "session demo").startswith("session demo")
        assert "│  ├─" in out or "├─ " in out


def test_trace_show_tree_nesting_atof(files: tuple[Path, Path]) -> None:
    """ATOF: starts and ends are paired by uuid and nested by parent_uuid (session › turn › calls)."""
    trace = load_trace(files[0])
    [session] = trace.roots
    [turn] = session.children
    assert (session.kind, turn.kind) == ("session", "turn")
    assert [n.label.split(" [")[0] for n in turn.children if n.kind == "tool"] == [
        "tool slow_tool", "tool quick", "tool broken", "tool rm", "tool wait"]
    assert [n.kind for n in turn.children].count("llm") == 2


def test_trace_show_color_is_optional(files: tuple[Path, Path]) -> None:
    """Colour codes only when asked for (the CLI asks only on a terminal without --no-color / NO_COLOR)."""
    trace = load_trace(files[1])
    assert "\033[" in render_trace(trace, color=True)
    assert "\033[" not in render_trace(load_trace(files[1]), color=False)


def test_trace_show_unclosed_scope_and_unresolved_ref(tmp_path: Path) -> None:
    """An ATOF start without end shows as OPEN; an ATIF ref to a missing trajectory is flagged."""
    start = {"kind": "scope", "scope_category": "start", "atof_version": "0.1",
             "uuid": "01a05c77-08a0-7c3a-9d10-5e41a7c90001", "parent_uuid": None, "timestamp": 1_788_257_700_000_000,
             "name": "hermes.session", "attributes": [], "category": "agent", "category_profile": None,
             "data": None, "data_schema": None, "metadata": {"hermes.session_id": "x"}}
    path = tmp_path / "open.jsonl"
    path.write_text(json.dumps(start) + "\n")
    assert "OPEN" in render_trace(load_trace(path))
    doc = {"schema_version": "ATIF-v1.7", "trajectory_id": "t", "agent": {"name": "a", "version": "1"}, "steps": [
        {"step_id": 1, "source": "agent", "message": "", "observation": {"results": [
            {"subagent_trajectory_ref": [{"trajectory_id": "missing"}]}]}}]}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    assert "subagent ref missing  ✗ FAILED  unresolved" in render_trace(load_trace(path))


@pytest.mark.parametrize(("content", "reason"), [
    (None, "no such file"),
    ("", "is empty"),
    ("hello world\n", "line 1 is not JSON"),
    ('{"a": 1}\n', "line 1 is not an ATOF event"),
    ('[1, 2]', "line 1 is not an ATOF event"),
    ('{"kind": "scope", "uuid": "u", "timestamp": "yesterday"}\n', "invalid ATOF timestamp"),
    ('{"schema_version": "ATIF-v1.7", "steps": 5}', "malformed ATIF trajectory"),
    (b"\xff\xfe\x00", "not UTF-8"),
    ("DIR", "is a directory"),
])
def test_trace_show_errors_are_one_line_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               content: Any, reason: str) -> None:
    """A missing file, a directory or a file that is neither format: exit 1, one line on stderr, no traceback."""
    path = tmp_path / "input.jsonl"
    if content == "DIR":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    assert main(["show", str(path), "--no-color"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("hermes-pipeline trace show: error: ") and reason in err and str(path) in err


def test_trace_show_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    """Usage problems are argparse errors (exit 2): a negative --slowest, no sub-command."""
    with pytest.raises(SystemExit) as info:
        main(["show", "x", "--slowest", "-1"])
    assert info.value.code == 2
    assert main([]) == 2
    capsys.readouterr()


def _event(version: str, phase: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "scope", "scope_category": phase, "atof_version": version,
            "uuid": "01a05c77-08a0-7c3a-9d10-5e41a7c90002", "parent_uuid": None,
            "timestamp": 1_788_257_700_000_000 + (phase == "end"), "name": "hermes.session", "attributes": [],
            "category": "agent", "category_profile": None, "data": None, "data_schema": None,
            "metadata": {"hermes.session_id": "x"}, **extra}


def test_fmt22_23_reader_takes_any_minor_version_and_unknown_fields(tmp_path: Path) -> None:
    """FMT-22/FMT-23: a stream mixing 0.1 and a later 0.Y, with fields, flags and a category this reader
    does not know, is read as ATOF 0; an unknown major version fails fast with a one-line reason."""
    path = tmp_path / "mixed.jsonl"
    start = _event("0.1", "start")
    mark = {"kind": "mark", "atof_version": "0.9", "uuid": "01a05c77-08a0-7c3a-9d10-5e41a7c90003",
            "parent_uuid": start["uuid"], "timestamp": start["timestamp"], "name": "later.mark",
            "category": "brand_new_category", "category_profile": {"novel": 1}, "data": None, "data_schema": None,
            "metadata": None, "terminal_status": "ok"}
    end = _event("0.9", "end", attributes=["brand_new_flag"], propagation_root_uuid=start["uuid"])
    path.write_text("\n".join(json.dumps(e) for e in (start, mark, end)) + "\n")
    rendered = render_trace(load_trace(path))
    assert "session x" in rendered and "OPEN" not in rendered
    path.write_text(json.dumps(_event("1.0", "start")) + "\n")
    assert main(["show", str(path), "--no-color"]) == 1


def test_fmt10_11_every_scope_has_a_category_and_profiles_are_null_where_undefined(
        files: tuple[Path, Path]) -> None:
    """FMT-10/FMT-11: every scope event carries a category; agent and function scopes (no profile keys in
    ATOF 0.1) have ``category_profile: null``; no ``subtype`` outside ``custom``."""
    atof, _ = files
    events = [json.loads(line) for line in atof.read_text(encoding="utf-8").splitlines()]
    scopes = [e for e in events if e["kind"] == "scope"]
    assert scopes and all(isinstance(e.get("category"), str) for e in scopes)
    plain = [e for e in scopes if e["category"] in ("agent", "function", "unknown")]
    assert plain and all(e["category_profile"] is None for e in plain)
    assert all("subtype" not in (e.get("category_profile") or {}) for e in events if e.get("category") != "custom")
