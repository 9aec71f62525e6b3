"""The bridge's wrappers of Hermes' write-approval functions (:mod:`hermes_pipeline.hermes.write_approvals`).

Hermes' modules are stood in for by small modules in ``sys.modules`` with the same names and parameters, so each
case is exact and fast: an approval is reported before and after Hermes applies it, with the pending record it
applies and who decided (``user``; ``user:<platform>:<user id>`` from the gateway's message event); a denial
reports the records Hermes deleted; Hermes' results and exceptions pass unchanged; a missing function, one with
other parameters, or a recorder that fails leaves Hermes as it is, with a warning. The real CLI is
``tests/hermes/test_write_approval_e2e.py``.
"""

from __future__ import annotations

import json
import logging
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

from hermes_pipeline.hermes import write_approvals

RECORDS: list[dict[str, Any]] = []


class Recorder:
    def __init__(self, fail: bool = False) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.fail = fail

    def approving(self, pending: Any, args: Any) -> str:
        if self.fail:
            raise RuntimeError("store gone")
        self.calls.append(("approving", pending.pending_id, pending.subsystem, pending.subject, dict(args)))
        return f"t-{pending.pending_id}"

    def finish(self, token: str, **kw: Any) -> None:
        self.calls.append(("finish", token, kw))

    def denied(self, pending: Any, decided_by: str) -> None:
        self.calls.append(("denied", pending.pending_id, pending.origin, decided_by))


def _module(name: str, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    for key, value in attrs.items():
        setattr(module, key, value)
    return module


def apply_skill_pending(payload: dict[str, Any]) -> str:
    if payload.get("action") == "boom":
        raise OSError("disk full")
    return json.dumps({"success": True, "message": "ok"})


def apply_memory_pending(payload: dict[str, Any], store: Any) -> dict[str, Any]:
    return {"success": False, "error": "no entry matched"}


def handle_pending_subcommand(subsystem: str, args: list[str], *, memory_store: Any = None,
                              set_mode_fn: Any = None) -> str:
    if args[0] in ("deny", "reject"):
        RECORDS[:] = [r for r in RECORDS if args[1] != "all" and r["id"] != args[1]]
        return "Rejected"
    for record in [r for r in RECORDS if r["subsystem"] == subsystem]:
        if subsystem == "skills":
            sys.modules["tools.skill_manager_tool"].apply_skill_pending(record["payload"])
        else:
            sys.modules["tools.memory_tool"].apply_memory_pending(record["payload"], memory_store)
    return "Approved"


@pytest.fixture
def hermes(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, types.ModuleType]]:
    """Stand-ins for Hermes' modules, with two pending records."""
    RECORDS[:] = [
        {"id": "s1", "subsystem": "skills", "origin": "foreground", "created_at": 1_700_000_000.0,
         "payload": {"action": "create", "name": "pdf", "content": "---\nname: pdf\n---\n"}},
        {"id": "m1", "subsystem": "memory", "origin": "background_review",
         "payload": {"action": "add", "target": "user", "content": "Name: Ana"}}]
    wa = _module("tools.write_approval",
                 list_pending=lambda subsystem: [r for r in RECORDS if r["subsystem"] == subsystem])
    modules = {"tools": _module("tools", write_approval=wa), "tools.write_approval": wa,
               "tools.skill_manager_tool": _module("tools.skill_manager_tool", apply_skill_pending=apply_skill_pending),
               "tools.memory_tool": _module("tools.memory_tool", apply_memory_pending=apply_memory_pending),
               "hermes_cli.write_approval_commands": _module("hermes_cli.write_approval_commands",
                                                             handle_pending_subcommand=handle_pending_subcommand)}
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    yield modules
    write_approvals.uninstall()


def _command(modules: dict[str, types.ModuleType], *args: Any, **kwargs: Any) -> Any:
    return modules["hermes_cli.write_approval_commands"].handle_pending_subcommand(*args, **kwargs)


def test_an_approval_is_reported_around_hermes_applying_it(hermes: dict[str, types.ModuleType]) -> None:
    recorder = Recorder()
    assert len(write_approvals.install(recorder)) == 3  # type: ignore[arg-type]
    assert _command(hermes, "skills", ["approve", "all"]) == "Approved"
    assert recorder.calls == [
        ("approving", "s1", "skills", "pdf", RECORDS[0]["payload"]),
        ("finish", "t-s1", {"ok": True, "decided_by": "user", "lifecycle": "created", "reason": None,
                            "error": None})]
    recorder.calls.clear()
    assert _command(hermes, "memory", ["approve", "all"], memory_store=None) == "Approved"  # Hermes' answer, unchanged
    assert recorder.calls[0][:4] == ("approving", "m1", "memory", "memories/USER.md")
    assert recorder.calls[1] == ("finish", "t-m1", {"ok": False, "decided_by": "user", "error": "no entry matched"})


def test_the_gateway_names_the_user_deciding_and_a_denial_reports_the_records_that_went(
        hermes: dict[str, types.ModuleType]) -> None:
    recorder = Recorder()
    write_approvals.install(recorder)  # type: ignore[arg-type]
    platform = types.SimpleNamespace(value="telegram")

    def gateway_handler(event: Any) -> Any:  # as gateway/slash_commands.py: the message event is a local
        return _command(hermes, "skills", ["deny", "s1"])

    assert gateway_handler(types.SimpleNamespace(source=types.SimpleNamespace(platform=platform, user_id="42"))) \
        == "Rejected"
    assert recorder.calls == [("denied", "s1", "foreground", "user:telegram:42")]
    recorder.calls.clear()
    assert _command(hermes, "memory", ["reject", "nope"]) == "Rejected"  # nothing went: nothing denied
    assert recorder.calls == []


def test_hermes_results_and_failures_pass_unchanged(hermes: dict[str, types.ModuleType],
                                                    caplog: pytest.LogCaptureFixture) -> None:
    recorder = Recorder()
    write_approvals.install(recorder)  # type: ignore[arg-type]
    skills = hermes["tools.skill_manager_tool"]
    with pytest.raises(OSError, match="disk full"):
        skills.apply_skill_pending({"action": "boom", "name": "pdf"})
    assert recorder.calls[-1][2]["ok"] is False and recorder.calls[-1][2]["error"] == "disk full"
    assert recorder.calls[0][1].startswith("unlisted-")  # no pending record has that payload
    write_approvals.install(Recorder(fail=True))  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.hermes"):
        assert json.loads(skills.apply_skill_pending(RECORDS[0]["payload"]))["success"] is True
    assert "recording a staged write's approval failed" in caplog.text


def test_a_missing_function_or_other_parameters_leave_hermes_alone(hermes: dict[str, types.ModuleType],
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    def renamed(data: dict[str, Any]) -> str:
        return "{}"

    monkeypatch.setattr(hermes["tools.skill_manager_tool"], "apply_skill_pending", renamed)
    monkeypatch.delattr(hermes["tools.memory_tool"], "apply_memory_pending")
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.hermes"):
        done = write_approvals.install(Recorder())  # type: ignore[arg-type]
    assert done == ["hermes_cli.write_approval_commands.handle_pending_subcommand"]
    assert hermes["tools.skill_manager_tool"].apply_skill_pending is renamed
    assert "tools.skill_manager_tool.apply_skill_pending: it does not take (payload, ...)" in caplog.text
    assert "tools.memory_tool.apply_memory_pending: it is missing" in caplog.text
    write_approvals.uninstall()
    assert hermes["hermes_cli.write_approval_commands"].handle_pending_subcommand is handle_pending_subcommand
