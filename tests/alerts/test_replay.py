"""A day of store history replayed through the evaluator every simulated minute, with a notifier
outage in the middle: what is sent, and when, is what a careful operator wants (spec 06 BOOK-42..44)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from hermes_pipeline.alerts.evaluator import run_once
from tests.alerts._support import Recorder, llm, minutes, no_sleep, settings, skill_run, store, task

DAY = datetime(2026, 3, 16, 0, 0, tzinfo=timezone.utc)


def test_book42_44_a_day_replayed_minute_by_minute(tmp_path: Path) -> None:
    """An outage 10:00-10:40, a failing skill 14:00-16:00 while the notifier is down 14:00-14:50, a
    crash-looping unit at 18:00, routine traffic all day, the digest the next morning."""
    conn, rec = store(tmp_path), Recorder()
    for d in range(1, 15):  # two weeks of ordinary spend: 1 USD a day
        llm(conn, DAY - timedelta(days=d) + timedelta(hours=9), cost=1.0)
    restarts = {"n": 0}

    def systemctl(cmd: object) -> str:
        return f"ActiveState=active\nSubState=running\nNRestarts={restarts['n']}\n"

    cfg = settings(systemd_unit="hermes.service", digest_time="08:00")
    log: list[tuple[str, str, str]] = []
    for m in range(0, 24 * 60 + 8 * 60 + 5):
        now = DAY + minutes(m)
        if m % 20 == 0 and not 600 <= m < 640:  # routine traffic every 20 minutes (none during the outage)
            llm(conn, now, cost=0.01)
            task(conn, "cli:chat", now, "success")
        if 600 <= m < 640:
            llm(conn, now, status="error", error_type="http_503")
        if 840 <= m < 960 and m % 10 == 0:
            skill_run(conn, "pdf", now, "failed")
        if m == 960:
            skill_run(conn, "pdf", now, "success")
        if 1080 <= m < 1086:
            restarts["n"] += 1
        rec.down = 840 <= m < 890
        before = len(rec.messages)
        run_once(conn, now, cfg, [rec], runner=systemctl, sleep=no_sleep, local=timezone.utc)
        for message in rec.messages[before:]:
            stamp = now.strftime("%d %H:%M")
            if message.kind == "digest":
                log.append((stamp, "digest", message.title))
            for item in message.items:
                if "rule" in item:
                    log.append((stamp, f"{item['kind']}", f"{item['rule']}:{item['key']}"))
    assert log == [
        ("16 08:00", "digest", "A-L1 daily digest 2026-03-15"),
        ("16 10:09", "alert", "A-C3:llm"),           # the 10th consecutive failure, the same minute
        ("16 10:39", "renotify", "A-C3:llm"),        # still down 30 minutes later
        ("16 10:40", "resolved", "A-C3:llm"),        # the first success after the outage
        ("16 14:50", "alert", "A-M1:pdf"),           # 5th failure 14:40, batch due 14:45, notifier back 14:50
        ("16 16:00", "resolved", "A-M1:pdf"),
        ("16 18:02", "alert", "A-C2:hermes.service"),  # the 3rd restart within 10 minutes
        ("16 18:13", "resolved", "A-C2:hermes.service"),  # growth in the last 10 minutes fell below 3
        ("17 08:00", "digest", "A-L1 daily digest 2026-03-16"),
    ]
    digest = [m for m in rec.messages if m.kind == "digest"][-1].text
    assert "70 tasks, success 100%" in digest  # every 20 minutes but 10:00 and 10:20
    assert "llm openai: http_503 x40" in digest and "skill pdf: failed x12" in digest
