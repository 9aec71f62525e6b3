"""Seeded observability stores, a frozen clock and recording notifiers for the alert tests."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from hermes_pipeline.alerts.delivery import Message
from hermes_pipeline.alerts.rules import sql_time
from hermes_pipeline.sinks.observability_store.db import connect, store_path

T0 = datetime(2026, 3, 16, 12, 0, tzinfo=timezone.utc)
"""A Monday noon UTC: the frozen "now" of most tests."""


def store(home: Path) -> sqlite3.Connection:
    """A fresh store of the observability store's own schema under ``home``."""
    return connect(store_path(home))


def llm(conn: sqlite3.Connection, ended: datetime, status: str = "ok", cost: float | None = None,
        error_type: str | None = None) -> None:
    conn.execute("INSERT INTO llm_calls (started_at, ended_at, provider, model, status, error_type, cost_usd) "
                 "VALUES (?, ?, 'openai', 'm', ?, ?, ?)", (sql_time(ended), sql_time(ended), status, error_type, cost))


def skill_run(conn: sqlite3.Connection, skill: str, ended: datetime, outcome: str) -> None:
    conn.execute("INSERT INTO skill_runs (skill_name, started_at, ended_at, outcome) VALUES (?, ?, ?, ?)",
                 (skill, sql_time(ended), sql_time(ended), outcome))


def task(conn: sqlite3.Connection, task_class: str, ended: datetime, outcome: str,
         error_type: str | None = None) -> None:
    conn.execute("INSERT INTO task_runs (task_class, started_at, ended_at, outcome, error_type) VALUES (?, ?, ?, ?, ?)",
                 (task_class, sql_time(ended), sql_time(ended), outcome, error_type))


def memory_write(conn: sqlite3.Connection, changed: datetime) -> None:
    conn.execute("INSERT INTO memory_changes (file_path, change_type, actor, changed_at) VALUES "
                 "('memories/MEMORY.md', 'modify', 'agent-reflection', ?)", (sql_time(changed),))


def skill_change(conn: sqlite3.Connection, skill: str, version: int, kind: str, changed: datetime) -> None:
    conn.execute("INSERT INTO skill_history (skill_name, version, change_type, changed_at) VALUES (?, ?, ?, ?)",
                 (skill, version, kind, sql_time(changed)))


@dataclass
class Recorder:
    """A notifier that records what it was given and fails while ``down`` is true."""

    name: str = "recorder"
    down: bool = False
    messages: list[Message] = field(default_factory=list)
    attempts: int = 0

    def send(self, message: Message) -> None:
        self.attempts += 1
        if self.down:
            raise RuntimeError("receiver is down")
        self.messages.append(message)

    def alerts(self) -> list[tuple[str, str, str]]:
        """(kind, rule, key) of every alert item delivered."""
        out: list[tuple[str, str, str]] = []
        for m in self.messages:
            for item in m.items:
                if "rule" in item:
                    out.append((str(item["kind"]), str(item["rule"]), str(item["key"])))
        return out


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


def no_sleep(seconds: float) -> None:
    """Backoff without waiting (the tests count attempts instead)."""


def settings(**overrides: Any) -> Any:
    from hermes_pipeline.config.alert_settings import AlertSettings

    base: dict[str, Any] = {"enabled": True, "digest_time": "23:59"}
    base.update(overrides)
    return AlertSettings(**base)
