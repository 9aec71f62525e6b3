"""Exporters on real payloads, hermes_pipeline side by side with NeMo Relay and the floor (issue #29 item 8).

``bench_exporters.py`` measures the tool-call workload: one-word tool results and a one-message LLM
request, which hide what a real session costs (the scrubber alone costs about 90 us per KB of new
text). This bench replays a session recorded from the real Hermes Agent (``record_real_payloads.py``;
the fixture ``data/real_payloads.json.gz``): Hermes' own system prompt and 28 tool schemas in every LLM
request, the growing message history, ``read_file`` and ``terminal`` results of up to 7 KB, and planted
secrets (a key in the user's prompt, a bearer token in a ``terminal`` command, a password in a JSON file
read back). Each session replays the recorded turn (6 LLM calls, 8 tool calls); every session's user message
and tool results carry a session tag, so each session brings new text, as real sessions do (within a session
the history repeats, as it does for Hermes).

The same events go to every side, in the same shapes:

- ``plain``: the replay loop with no instrumentation (the baseline of "added" caller time);
- ``floor``: the smallest code writing the same ATOF lines and ATIF files inline (``_floor.floor_replay``),
  and the obliged floor (+ one pluggy call per event, the credential scrubber, one writer thread, the ATIF
  files written as FMT-52 says: temporary file, ``fsync``, rename);
- hermes_pipeline: ``Host`` on a fresh ``Engine()``, ``turn.call_llm`` with the recorded request and reply
  and ``turn.call_tool`` with the recorded arguments and result; no plugins; the ``observability``
  component with ATOF + ATIF, then + OTLP to a discarding loopback receiver;
- NeMo Relay: ``llm.call`` / ``call_end`` (``OpenAIChatCodec``) and ``tools.call`` / ``call_end`` in the same
  scopes, with no subscriber, with its manual exporters (``AtofExporter`` + one ``AtifExporter`` per
  session) and with its ``observability`` plugin (ATOF + ATIF, then + OTLP) given the same component config.

Figures per row (median over rounds, the rows in a rotating order per round, each after an untimed
``gc.collect()`` as in ``bench_exporters.py``): all-CPU per tool call
(``time.process_time()``, every thread, first session to the end of shutdown), caller-thread CPU per tool
call and what it adds over ``plain``; ratios between rows of the same run. Every exporter run's outputs
are checked (all ATOF lines, one ATIF file per session) and, for hermes_pipeline and the obliged floor,
that no planted secret reached them. Then the memory check: hermes_pipeline ATOF + ATIF on this workload
until ``--events`` events (default 1,000,000), RSS at 10 checkpoints.

Run: ``python bench/bench_real_payloads.py`` (``--quick``; ``--help``). Figures go to ``RESULTS.md``.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.metadata
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_exporters as base  # noqa: E402
from _floor import OBLIGATIONS, DequeWriter, floor_replay  # noqa: E402
from _receiver import Receiver, ReceiverProcess  # noqa: E402
from _relay import Row, relay_replay  # noqa: E402
from _timing import fresh_run  # noqa: E402
from bench_exporters import Run, Timed, add_observability, count_outputs, observability_config  # noqa: E402

import orjson  # noqa: E402
import pluggy  # noqa: E402

from hermes_pipeline import Engine, Host  # noqa: E402
from hermes_pipeline.host.context import CallContext, current  # noqa: E402

FIXTURE = Path(__file__).resolve().parent / "data" / "real_payloads.json.gz"
_floor_hookspec = pluggy.HookspecMarker("caller-floor")
_floor_hookimpl = pluggy.HookimplMarker("caller-floor")
ToolCall = tuple[str, str, dict[str, Any], str]  # (call id, tool name, arguments, result)
LLMCall = tuple[dict[str, Any], dict[str, Any], list[ToolCall]]  # (request, response, tool calls)


def load_fixture(path: Path = FIXTURE) -> dict[str, Any]:
    """The recorded session (see ``record_real_payloads.py``); a clear error when it is missing or damaged."""
    try:
        return json.loads(gzip.decompress(path.read_bytes()))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"{path}: cannot read the real-payload fixture ({exc}); "
                         f"record it with: python bench/record_real_payloads.py") from None


def _tagged(text: str, tag: str) -> str:
    """``text`` with the session tag in it: a JSON object gains a ``"run"`` member first, other text a prefix."""
    return f'{{"run": "{tag}", {text[1:]}' if text.startswith("{") else f"[{tag}] {text}"


@dataclass(frozen=True)
class Session:
    user: str
    calls: list[LLMCall]
    final: str


class RealWorkload:
    """``sessions`` replays of the recorded turn, each with its own tagged user message and tool results."""

    def __init__(self, fixture: dict[str, Any], sessions: int) -> None:
        self.fixture, self.sessions = fixture, sessions
        calls = fixture["calls"]
        self.llm_calls = len(calls)
        self.tools_per_session = sum(len(c["tools"]) for c in calls)
        self.model = fixture["request"].get("model", "hermes-demo-1")
        self._cache: dict[int, Session] = {}

    @property
    def tool_calls(self) -> int:
        return self.sessions * self.tools_per_session

    def events(self, sessions: int | None = None) -> int:
        return (self.sessions if sessions is None else sessions) * (4 + 2 * self.llm_calls + 2 * self.tools_per_session)

    def session(self, index: int, keep: bool = True) -> Session:
        """Session ``index``'s payloads (built once and kept when ``keep``: building is set-up, never timed)."""
        if index in self._cache:
            return self._cache[index]
        fx, tag = self.fixture, f"s{index:06d}"
        results = {t["id"]: _tagged(t["result"], tag) for c in fx["calls"] for t in c["tools"]}
        user = f"[{tag}] {fx['user_message']}"
        messages = []
        for m in fx["messages"]:
            if m.get("role") == "tool" and m.get("tool_call_id") in results:
                m = {**m, "content": results[m["tool_call_id"]]}
            elif m.get("role") == "user":
                m = {**m, "content": user}
            messages.append(m)
        calls: list[LLMCall] = []
        for c in fx["calls"]:
            request = {**fx["request"], "messages": messages[:c["messages"]]}
            tools = [(t["id"], t["name"], t["arguments"], results[t["id"]]) for t in c["tools"]]
            calls.append((request, c["response"], tools))
        final = fx["calls"][-1]["response"]["choices"][0]["message"].get("content") or ""
        out = Session(user, calls, final)
        if keep:
            self._cache[index] = out
        return out

    def secrets(self) -> list[bytes]:
        return [s.encode() for s in self.fixture["secrets"]]


def _result(text: str) -> Callable[..., str]:
    return lambda **kwargs: text


def plain_run(w: RealWorkload, directory: Path, receiver: Receiver) -> Run:
    timed = Timed()
    for index in range(w.sessions):
        s = w.session(index)
        for request, response, tools in s.calls:
            _ = (lambda r: response)(request)
            for call_id, name, args, result in tools:
                fn = _result(result)
                timed(lambda: fn(**args))
    timed.loop_done()
    timed.stop()
    return timed.run()


OBLIGED: Final = "+ hook, scrub, writer, FMT-52 files"
"""The obliged floor's row (:data:`~_floor.OBLIGATIONS`)."""


def floor_row(w: RealWorkload, directory: Path, receiver: Receiver | None, obliged: bool = False) -> Run:
    sessions = [[(s.user, s.calls)] for s in (w.session(i) for i in range(w.sessions))]
    timed = Timed()
    floor_replay(sessions, directory, timed, obligations=OBLIGATIONS if obliged else (), model=w.model)
    timed.loop_done()
    timed.stop()
    lines, files = count_outputs(directory)
    return timed.run(atof_lines=lines, atif_files=files)


def hermes_session(host: Host, s: Session, timed: Callable[[Callable[[], object]], object]) -> None:
    with host.session() as session:
        with session.turn(s.user) as turn:
            for request, response, tools in s.calls:
                turn.call_llm(request, lambda r, response=response: response)
                for call_id, name, args, result in tools:
                    fn = _result(result)
                    timed(lambda: turn.call_tool(name, args, fn, tool_call_id=call_id))
            turn.complete(s.final)


def hermes_run(w: RealWorkload, directory: Path, receiver: Receiver, *, exporters: bool, otlp: bool) -> Run:
    engine = Engine()
    name, component = "", None
    if exporters:
        name, component = add_observability(engine, observability_config(
            directory, receiver.endpoint if otlp else None))
    host = Host(engine, platform="cli", model=w.model, provider="bench", base_url="http://127.0.0.1/v1")
    timed, before = Timed(), receiver.bytes_received
    for index in range(w.sessions):
        hermes_session(host, w.session(index), timed)
    timed.loop_done()
    if component is not None:
        component.flush(300.0)
        engine.remove_plugin(name)
    timed.stop()
    lines, files = count_outputs(directory)
    dropped = base._dropped(component.stats()) if component is not None else 0
    return timed.run(atof_lines=lines, atif_files=files, otlp_bytes=receiver.bytes_received - before, dropped=dropped)


class _CallerFloor(DequeWriter):
    """The caller floor's recorder: each tool hook is one pluggy call whose hookimpl appends ``(clock, fields)``
    to a deque; one writer thread (:class:`_floor.DequeWriter`) drains it into JSON lines."""

    def __init__(self, path: Path) -> None:
        self._out = open(path, "wb", buffering=1 << 16)  # noqa: SIM115 - closed by close()
        super().__init__("caller-floor-writer")

    @_floor_hookimpl
    def pre_tool_call(self, fields: tuple[Any, ...]) -> None:
        self._append((time.time_ns(), "start", fields))

    @_floor_hookimpl
    def post_tool_call(self, fields: tuple[Any, ...]) -> None:
        self._append((time.time_ns(), "end", fields))

    def _append(self, record: tuple[Any, ...]) -> None:
        self._queue.append(record)
        if len(self._queue) >= 256:
            with self._wake:
                self._wake.notify()

    def close(self) -> None:
        super().close()
        self._out.close()

    def _write_ready(self, queue: deque[Any]) -> None:
        write = self._out.write
        while queue:
            write(orjson.dumps(queue.popleft(), default=str) + b"\n")


class _CallerFloorSpec:
    @_floor_hookspec
    def pre_tool_call(self, fields: tuple[Any, ...]) -> None:
        """Before the tool runs: ``(tool name, a copy of the arguments, tool call id)``."""

    @_floor_hookspec
    def post_tool_call(self, fields: tuple[Any, ...]) -> None:
        """After it returned: ``(tool call id, result)``."""


def caller_floor_run(w: RealWorkload, directory: Path, receiver: Receiver) -> Run:
    """The caller-thread floor of a recorded tool call on this workload (issue #29 target: <= 5 us).

    Everything but the tool calls is the ``hermes ATOF + ATIF`` row itself (the same ``Host``, LLM calls, sessions
    and turns, the same publication and writer threads projecting and writing the LLM records), so the agent's
    thread sees the same caches and the same competing threads between two tool calls. Each tool call is the least
    a recorded one can be: one pluggy hook call before the tool (the hook contract: ``pre_tool_call`` must fire
    first) and one after, each appending ``(clock, fields)`` to a deque drained by a writer thread, with the
    arguments copied (a host may mutate them later) and the tool's context made current while it runs (hooks
    fired inside a tool carry its id, MW-42). No payload dict, no dispatch loop, no status, no pairing: the engine's
    figure over this one is what its tool path costs beyond the obligations."""
    engine = Engine()
    name, component = add_observability(engine, observability_config(directory, None))
    host = Host(engine, platform="cli", model=w.model, provider="bench", base_url="http://127.0.0.1/v1")
    plugins = pluggy.PluginManager("caller-floor")
    plugins.add_hookspecs(_CallerFloorSpec)
    recorder = _CallerFloor(directory / "tool-floor.jsonl")
    plugins.register(recorder)
    hooks = plugins.hook
    timed = Timed()
    for index in range(w.sessions):
        s = w.session(index)
        with host.session() as session:
            with session.turn(s.user) as turn:
                for request, response, tools in s.calls:
                    turn.call_llm(request, lambda r, response=response: response)
                    for call_id, tool_name, args, result in tools:
                        fn = _result(result)

                        def tool_call() -> str:
                            hooks.pre_tool_call(fields=(tool_name, args.copy(), call_id))
                            token = current.set(CallContext(session, turn, call_id, tool_name))
                            try:
                                value = fn(**args)
                            finally:
                                current.reset(token)
                            hooks.post_tool_call(fields=(call_id, value))
                            return value

                        timed(tool_call)
                turn.complete(s.final)
    timed.loop_done()
    component.flush(300.0)
    engine.remove_plugin(name)
    recorder.close()
    timed.stop()
    return timed.run()


def relay_run(w: RealWorkload, directory: Path, receiver: Receiver, *, mode: str, otlp: bool = False) -> Run:
    """``mode``: ``none`` (no subscriber), ``manual`` (AtofExporter + AtifExporter), ``plugin`` (``_relay.py``)."""
    config = observability_config(directory, receiver.endpoint if otlp else None) if mode == "plugin" else None
    sessions = ([[(request, response, [(call_id, name, args, _result(result)) for call_id, name, args, result in tools])
                  for request, response, tools in w.session(index).calls]] for index in range(w.sessions))
    before = receiver.bytes_received
    timed = relay_replay(base.relay, base.relay_plugin, sessions, directory, w.model, Timed, mode=mode,
                         component_config=config)
    timed.stop()
    lines, files = count_outputs(directory)
    return timed.run(atof_lines=lines, atif_files=files, otlp_bytes=receiver.bytes_received - before)


def rows(with_relay: bool) -> list[Row]:
    out = [Row("plain", "no instrumentation", plain_run),
           Row("floor", "ATOF + ATIF (minimal inline code)", floor_row, True),
           Row("floor", OBLIGED, partial(floor_row, obliged=True), True, scrubs=True),
           Row("floor", "caller: 2 pluggy calls + deque, ATOF+ATIF", caller_floor_run),
           Row("hermes", "no plugins", partial(hermes_run, exporters=False, otlp=False)),
           Row("hermes", "ATOF + ATIF", partial(hermes_run, exporters=True, otlp=False), True, scrubs=True),
           Row("hermes", "ATOF + ATIF + OTLP", partial(hermes_run, exporters=True, otlp=True), True, True, True)]
    if with_relay:
        out += [Row("relay", "no subscribers", partial(relay_run, mode="none")),
                Row("relay", "ATOF + ATIF (manual exporters)", partial(relay_run, mode="manual"), True),
                Row("relay", "ATOF + ATIF (observability plugin)", partial(relay_run, mode="plugin"), True),
                Row("relay", "ATOF + ATIF + OTLP (obs. plugin)", partial(relay_run, mode="plugin", otlp=True),
                    True, True)]
    return out


def leaks(directory: Path, secrets: list[bytes]) -> int:
    """How many planted secrets occur in the files under ``directory``."""
    found = 0
    for path in directory.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += sum(data.count(s) for s in secrets)
    return found


def compare(w: RealWorkload, rounds: int, root: Path, receiver: Receiver, with_relay: bool) -> list[str]:
    table = rows(with_relay)
    runs: list[list[Run]] = [[] for _ in table]
    added: list[list[float]] = [[] for _ in table]
    leaked: list[int] = [0 for _ in table]
    problems: list[str] = []
    for r in range(rounds + 1):  # round 0 is a warm-up, not counted
        order = list(range(len(table)))
        results: dict[int, Run] = {}
        for i in order[r % len(order):] + order[:r % len(order)]:
            def scan(directory: Path, i: int = i) -> None:
                leaked[i] = max(leaked[i], leaks(directory, w.secrets()))

            results[i] = fresh_run(root / f"r{r}-{i}", partial(table[i].fn, w, receiver=receiver),
                                   scan if table[i].files else None)
        for i, run in results.items() if r else ():
            runs[i].append(run)
            added[i].append(run.cpu - results[0].cpu)
            row = table[i]
            if row.files and (run.atof_lines != w.events() or run.atif_files != w.sessions):
                problems.append(f"round {r} {row.side} {row.config}: {run.atof_lines}/{w.events()} ATOF lines, "
                                f"{run.atif_files}/{w.sessions} ATIF files, {run.dropped} dropped")
            if row.otlp and run.otlp_bytes <= 0:
                problems.append(f"round {r} {row.side} {row.config}: nothing reached the OTLP receiver")
    med = statistics.median
    head = (f"{'side':<7} {'configuration':<36} {'all-CPU us/tool call':>21} {'caller CPU us':>13} "
            f"{'added us':>9} {'tool calls/s':>12} {'secrets in output':>17}")
    lines = [head, "-" * len(head)]
    all_cpu = [med(run.process for run in rr) / w.tool_calls * 1e6 for rr in runs]
    rate = [med(w.tool_calls / run.elapsed for run in rr) for rr in runs]
    for i, row in enumerate(table):
        secret = str(leaked[i]) if row.files else "-"
        lines.append(f"{row.side:<7} {row.config:<36} {all_cpu[i]:>21.1f} {med(r.cpu for r in runs[i]) / 1e3:>13.2f} "
                     f"{med(added[i]) / 1e3:>9.2f} {rate[i]:>12,.0f} {secret:>17}")
    at = {(row.side, row.config): i for i, row in enumerate(table)}
    ours, ours_otlp = all_cpu[at["hermes", "ATOF + ATIF"]], all_cpu[at["hermes", "ATOF + ATIF + OTLP"]]
    floor, obliged = all_cpu[at["floor", "ATOF + ATIF (minimal inline code)"]], \
        all_cpu[at["floor", OBLIGED]]
    lines += ["", "ratios (all-CPU per tool call, this run):",
              f"  hermes ATOF + ATIF / obliged floor: {ours / obliged:.2f}x (target <= 2x)",
              f"  hermes ATOF + ATIF / inline floor: {ours / floor:.2f}x"]
    if ("relay", "ATOF + ATIF (manual exporters)") in at:
        manual = all_cpu[at["relay", "ATOF + ATIF (manual exporters)"]]
        plugin_otlp = all_cpu[at["relay", "ATOF + ATIF + OTLP (obs. plugin)"]]
        plugin = all_cpu[at["relay", "ATOF + ATIF (observability plugin)"]]
        lines += [f"  hermes ATOF + ATIF / relay manual exporters: {ours / manual:.2f}x (target <= 0.5x)",
                  f"  hermes ATOF + ATIF / relay observability plugin: {ours / plugin:.2f}x",
                  f"  hermes ATOF + ATIF + OTLP / relay observability plugin with OTLP: {ours_otlp / plugin_otlp:.2f}x "
                  f"(target <= 0.5x)",
                  f"  obliged floor / relay manual exporters: {obliged / manual:.2f}x"]
    caller = med(added[at["hermes", "ATOF + ATIF"]]) / 1e3
    none = med(added[at["hermes", "no plugins"]]) / 1e3
    caller_floor = med(added[at["floor", "caller: 2 pluggy calls + deque, ATOF+ATIF"]]) / 1e3
    lines += [f"caller thread: hermes ATOF + ATIF adds {caller:.2f} us per tool call over plain (target <= 5 us); "
              f"no plugins adds {none:.2f} us (target <= 1.5 us)",
              f"caller floor (2 pluggy hook calls + a deque, in the hermes ATOF + ATIF run) adds {caller_floor:.2f} us: "
              f"hermes ATOF + ATIF is {caller / caller_floor:.2f}x the caller floor"]
    lines += [f"output check: {p}" for p in problems] or [
        f"output check: every exporter run wrote all {w.events()} ATOF events and {w.sessions} ATIF files"]
    return lines


def memory_check(w: RealWorkload, target: int, root: Path) -> list[str]:
    """hermes_pipeline ATOF + ATIF on this workload until ``target`` events; RSS at 10 checkpoints."""
    directory = root / "memory"
    engine = Engine()
    name, component = add_observability(engine, observability_config(directory, None))
    host = Host(engine, platform="cli", model=w.model, provider="bench", base_url="http://127.0.0.1/v1")
    per = w.events(1)
    step = max(1, -(-target // (10 * per)))
    pace = max(1, 5_000 // per)
    out = [f"memory check: hermes_pipeline ATOF + ATIF until >= {target:,} events ({per} per session, every session "
           f"new text; a flush every {pace} sessions; files deleted at each checkpoint)",
           f"{'checkpoint':>10} {'sessions':>9} {'events':>11} {'ATOF lines':>11} {'dropped':>8} "
           f"{'peak RSS MiB':>12} {'RSS MiB':>8} {'s':>6}"]
    peak, current = base.rss_mib()
    out.append(f"{0:>10} {0:>9} {0:>11} {0:>11} {0:>8} {peak:>12.1f} {current:>8.1f} {0:>6.1f}")
    print("\n".join(out), flush=True)
    sessions = lines = checkpoint = 0
    start = time.perf_counter()
    while w.events(sessions) < target:
        for done in range(1, step + 1):
            hermes_session(host, w.session(sessions + done, keep=False), lambda fn: fn())
            if done % pace == 0:
                component.flush(300.0)
        sessions += step
        component.flush(300.0)
        checkpoint += 1
        for path in directory.rglob("*.json*"):
            if path.suffix == ".jsonl":  # counted in 1 MiB chunks: the file of one checkpoint is ~600 MiB
                with path.open("rb") as lines_file:
                    lines += sum(chunk.count(b"\n") for chunk in iter(partial(lines_file.read, 1 << 20), b""))
                os.truncate(path, 0)
            else:
                path.unlink()
        peak, current = base.rss_mib()
        row = (f"{checkpoint:>10} {sessions:>9} {w.events(sessions):>11,} {lines:>11,} "
               f"{base._dropped(component.stats()):>8,} {peak:>12.1f} {current:>8.1f} {time.perf_counter() - start:>6.1f}")
        print(row, flush=True)
        out.append(row)
    engine.remove_plugin(name)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small run: 20 sessions, 3 rounds, 50,000 events")
    parser.add_argument("--sessions", type=int, default=None, help="sessions per run (default 100; --quick 20)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 5; --quick 3)")
    parser.add_argument("--events", type=int, default=None,
                        help="memory check target in events (default 1,000,000; --quick 50,000; 0 skips)")
    parser.add_argument("--no-relay", action="store_true", help="skip the NeMo Relay rows")
    parser.add_argument("--fixture", type=Path, default=FIXTURE, help="the recorded session")
    args = parser.parse_args(argv)
    w = RealWorkload(load_fixture(args.fixture), args.sessions or (20 if args.quick else 100))
    rounds = args.rounds or (3 if args.quick else 5)
    target = args.events if args.events is not None else (50_000 if args.quick else 1_000_000)
    logging.getLogger("hermes_pipeline").setLevel(logging.ERROR)
    with_relay = base.relay is not None and not args.no_relay
    fx = w.fixture
    print(f"workload: real payloads recorded from hermes-agent {fx['hermes_version']}: {w.sessions} sessions x "
          f"({w.llm_calls} LLM calls + {w.tools_per_session} tool calls) = {w.tool_calls:,} tool calls, "
          f"{w.events():,} ATOF events per run; requests carry {len(fx['request'].get('tools', []))} tool schemas "
          f"({len(json.dumps(fx['request'].get('tools', []))):,} chars); {rounds} rounds (+1 warm-up), medians")
    if base.RELAY_MISSING:
        print(base.RELAY_MISSING)
    elif with_relay:
        print(f"nemo-relay {importlib.metadata.version('nemo-relay')}")
    with tempfile.TemporaryDirectory(prefix="bench-real-") as tmp:
        root = Path(tmp)
        with ReceiverProcess() as receiver:
            for line in compare(w, rounds, root, receiver, with_relay):
                print(line, flush=True)
        if target > 0:
            print()
            memory_check(w, target, root)
    return 0


if __name__ == "__main__":
    from _results import run_with_results  # --write-results: the figures also go to bench/RESULTS.md

    raise SystemExit(run_with_results("bench_real_payloads", main))
