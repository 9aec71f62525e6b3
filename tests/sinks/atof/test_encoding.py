"""The ATOF history delta stays readable when a sink loses lines (FMT-25 with FMT-37 and FMT-80): a file never
holds a delta whose base it lost."""

from __future__ import annotations

import errno
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.export import MemoryDestination
from hermes_pipeline.export import files as export_files
from hermes_pipeline.sinks.atof import build_atof_plugin
from hermes_pipeline.sinks.atof import encoder as atof_encoder

from tests.sinks.atof._support import decode
from hermes_pipeline.testing import chat_response

SYSTEM = {"role": "system", "content": "be brief"}


def history(turns: int) -> list[list[dict[str, Any]]]:
    """The request messages of ``turns`` consecutive turns of one conversation (each extends the last)."""
    out, messages = [], [SYSTEM]
    for n in range(turns):
        messages = [*messages, {"role": "user", "content": f"question {n}"}]
        out.append(messages)
        messages = [*messages, {"role": "assistant", "content": f"answer {n}"}]
    return out


def rebuilt_histories(lines: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """What a reader rebuilds from the file: each LLM start's history from the ones before it (FMT-25).
    Fails when a delta's offset points past what the file holds."""
    known: list[dict[str, Any]] = []
    out = []
    for line in lines:
        if line["name"] != "llm.call" or line.get("scope_category") != "start":
            continue
        offset = line["data"]["messages_offset"]
        assert offset <= len(known), f"a delta at offset {offset} with only {len(known)} messages before it"
        known = known[:offset] + line["data"]["request"]["body"]["messages"]
        out.append(known)
    return out


class StuckThenFailing(MemoryDestination):
    """Its first write blocks until ``release`` is set, then fails for good (ENOSPC: not retried)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.first = threading.Event()
        self.calls = 0

    def write(self, batch: list[Any]) -> None:
        self.calls += 1
        if self.calls == 1:
            self.first.set()
            assert self.release.wait(10)
            raise OSError(errno.ENOSPC, "No space left on device")
        super().write(batch)


def file_sink(destination: Any, **extra: Any) -> Any:
    return build_atof_plugin({"enabled": True, "sinks": [{"type": "file", **extra}]}, destinations={0: destination},
                             deferred=False)


def test_fmt_25_a_delta_queued_before_its_base_was_lost_is_written_in_full(engine: Engine) -> None:
    """FMT-25 with FMT-37: the first LLM start is lost in a failed batch while the second, encoded as a delta
    on top of it, already waits in the queue; the writer then writes the second one with its full history,
    and the file always rebuilds to the requests' histories."""
    dest = StuckThenFailing()
    plugin = file_sink(dest)
    engine.add_plugin(plugin, name="atof")
    host = Host(engine, model="m", provider="p")
    requests = history(4)
    with host.session() as session:
        with session.turn("question 0") as turn:
            turn.call_llm({"messages": requests[0]}, lambda request: chat_response("answer 0"))
            turn.complete("answer 0")
        plugin.flush(0.05)  # hurries the writer: it takes the first batch and sticks in write()
        assert dest.first.wait(10)
        with session.turn("question 1") as turn:  # encoded while the first batch is still in flight
            turn.call_llm({"messages": requests[1]}, lambda request: chat_response("answer 1"))
            turn.complete("answer 1")
        dest.release.set()
        assert plugin.flush(10.0)
        for n in (2, 3):
            with session.turn(f"question {n}") as turn:
                turn.call_llm({"messages": requests[n]}, lambda request: chat_response(f"answer {n}"))
                turn.complete(f"answer {n}")
    assert plugin.flush(10.0)
    lines = decode(dest)
    offsets = [line["data"]["messages_offset"] for line in lines
               if line["name"] == "llm.call" and line.get("scope_category") == "start"]
    assert offsets[0] == 0  # the second start, the first one written, carries its whole history
    assert rebuilt_histories(lines) == requests[1:]
    assert plugin.stats()["sinks"][0]["dropped_after_errors"] >= 1
    plugin.shutdown(5.0)


def test_fmt_25_80_a_start_refused_by_a_full_queue_is_no_base_for_a_delta(engine: Engine) -> None:
    """FMT-80 with FMT-25: an LLM start refused by a full queue never reaches the file, so no later LLM start
    of its session may be a delta on it (its lines rebuild to the requests' histories)."""
    gate = threading.Event()
    dest = MemoryDestination(gate=gate)
    plugin = file_sink(dest, max_queue_size=2)
    engine.add_plugin(plugin, name="atof")
    requests = history(3)
    ids = {"session_id": "s", "task_id": "k"}
    engine.dispatch("on_session_start", {"session_id": "s", "model": "m", "platform": "cli"})
    assert dest.writing.wait(5.0)  # the session start is in flight, stuck in write(): the queue is empty

    def attempt(turn_id: str, count: int, messages: list[dict[str, Any]]) -> None:
        engine.dispatch("pre_api_request", {**ids, "turn_id": turn_id, "api_request_id": f"{turn_id}:{count}",
                                            "api_call_count": count, "model": "m", "provider": "p",
                                            "api_mode": "chat_completions",
                                            "request": {"method": "POST", "body": {"messages": messages}}})

    engine.dispatch("pre_llm_call", {**ids, "turn_id": "u0", "user_message": "question 0", "is_first_turn": True})
    attempt("u0", 1, requests[0])  # queued: the queue is full now
    attempt("u0", 2, requests[1])  # refused: a longer history that the file will never hold
    gate.set()
    assert plugin.flush(5.0)
    engine.dispatch("pre_llm_call", {**ids, "turn_id": "u1", "user_message": "question 1", "is_first_turn": False})
    assert plugin.flush(5.0)
    attempt("u1", 1, requests[2])
    assert plugin.flush(5.0)
    plugin.shutdown(5.0)
    lines = decode(dest)
    assert rebuilt_histories(lines) == [requests[0], requests[2]]
    assert plugin.stats()["sinks"][0]["dropped_queue_full"] >= 1


def test_fmt_25_35_a_batch_written_after_midnight_goes_to_the_day_it_was_encoded_for(
        engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """FMT-25 with FMT-35: a daily file (``{date}``) restarts the history delta; a batch encoded before midnight
    whose write comes after it (a slow disk, a retry) is written to the day it was encoded for, so the new day's
    file never opens with a delta whose base is in yesterday's file. Each file rebuilds on its own."""
    clocks = {"encoder": "2026-12-06", "file": "2026-12-06"}
    monkeypatch.setattr(atof_encoder, "utc_date", lambda epoch=None: clocks["encoder"])
    monkeypatch.setattr(export_files, "utc_date", lambda epoch=None: clocks["file"])
    plugin = build_atof_plugin({"enabled": True, "sinks": [{"type": "file", "output_directory": str(tmp_path),
                                                            "filename": "events-{date}.jsonl"}]}, deferred=False)
    engine.add_plugin(plugin, name="atof")
    host = Host(engine, model="m", provider="p")
    requests = history(3)
    with host.session() as session:
        for n in range(3):
            if n == 1:
                clocks["file"] = "2026-12-07"  # the batch settled on the 6th is written after midnight
            if n == 2:
                clocks["encoder"] = "2026-12-07"  # the next batch is the 7th's
            with session.turn(f"question {n}") as turn:
                turn.call_llm({"messages": requests[n]}, lambda request, n=n: chat_response(f"answer {n}"))
                turn.complete(f"answer {n}")
            assert plugin.flush(10.0)
    plugin.shutdown(5.0)
    days = {path.name: [json.loads(line) for line in path.read_text().splitlines()]
            for path in tmp_path.glob("events-*.jsonl")}
    assert sorted(days) == ["events-2026-12-06.jsonl", "events-2026-12-07.jsonl"]
    assert rebuilt_histories(days["events-2026-12-06.jsonl"]) == requests[:2]
    assert rebuilt_histories(days["events-2026-12-07.jsonl"]) == requests[2:]
