"""Quiet under a storm, and no secret in the log (spec 01 OBS-15, OBS-16; spec 04 FMT-33a).

OBS-16 as hermes_pipeline keys it: one WARNING per (plugin, hook, exception type) whatever the messages,
repeats at DEBUG, and at most once a minute per key a WARNING counting the repeats suppressed since.
The clock is injected, so no test sleeps.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from hermes_pipeline import Engine
from hermes_pipeline.engine.failures import REPORT_INTERVAL, FailureLog

SECRET = "ZQ5W8E2R7T1Y4U9I3O6P0A"


class FakeClock:
    """Monotonic seconds that move only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def storm_engine(clock: FakeClock) -> Engine:
    engine = Engine()
    engine.failures = FailureLog(clock=clock)

    def chatty(**kwargs: Any) -> None:  # a new message on every call, as when it embeds its arguments
        raise ValueError(f"cannot handle call {kwargs.get('tool_call_id')} with {kwargs.get('args')!r}")

    engine.register_hook("post_tool_call", chatty, plugin="chatty")
    return engine


def dispatch_calls(engine: Engine, count: int, start: int = 0) -> None:
    for n in range(start, start + count):
        engine.dispatch("post_tool_call", {"tool_call_id": f"c{n}", "args": {"path": f"{n}.txt"}})


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "chatty" in r.getMessage()]


def test_obs16_storm_of_differing_messages_logs_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    """OBS-16: 100 failures whose messages all differ give one WARNING (it was one per call), 99 DEBUG
    repeats, and the counters still count every failure."""
    clock = FakeClock()
    engine = storm_engine(clock)
    with caplog.at_level(logging.DEBUG, logger="hermes_pipeline"):
        dispatch_calls(engine, 100)
    assert len(warnings_of(caplog)) == 1
    debug = [r for r in caplog.records if r.levelno == logging.DEBUG and "chatty" in r.getMessage()]
    assert len(debug) == 99
    assert engine.failure_stats().by_plugin["chatty"] == 100


def test_obs16_suppressed_repeats_are_reported_at_most_once_a_minute(caplog: pytest.LogCaptureFixture) -> None:
    """OBS-16: after the interval, the next failure of the key also logs "N more failures ... suppressed";
    within the interval nothing more is logged at WARNING; each key is reported on its own."""
    clock = FakeClock()
    engine = storm_engine(clock)
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline"):
        dispatch_calls(engine, 11)  # 1 warning, 10 suppressed
        assert len(warnings_of(caplog)) == 1
        clock.now += REPORT_INTERVAL - 1
        dispatch_calls(engine, 5, 11)  # still inside the minute: no report
        assert len(warnings_of(caplog)) == 1
        clock.now += 1
        dispatch_calls(engine, 1, 16)  # the minute is over: this repeat reports the 16 suppressed so far
        reports = warnings_of(caplog)[1:]
        assert len(reports) == 1
        assert "16 more failures of post_tool_call callbacks of plugin 'chatty' raising ValueError suppressed" \
            in reports[0]
        assert "in the last 60 s" in reports[0]
        clock.now += 10
        dispatch_calls(engine, 3, 17)
        assert len(warnings_of(caplog)) == 2
        clock.now += REPORT_INTERVAL
        dispatch_calls(engine, 1, 20)
        assert "4 more failures" in warnings_of(caplog)[-1]

        def other(**kwargs: Any) -> None:
            raise KeyError("x")

        engine.register_hook("post_tool_call", other, plugin="chatty")  # same plugin and hook, another type
        dispatch_calls(engine, 2, 21)
    assert sum("raised KeyError" in w for w in warnings_of(caplog)) == 1


def test_obs16_fmt33a_failure_warning_is_credential_scrubbed(caplog: pytest.LogCaptureFixture) -> None:
    """FMT-33a / OBS-59: a callback whose exception message quotes its arguments (a key, a password) never
    puts them in the log, neither in the first WARNING nor in the DEBUG repeats."""
    engine = Engine()

    def leaky(**kwargs: Any) -> None:
        raise RuntimeError(f"bad request {kwargs['args']!r} with sk-proj-{SECRET} and password: {SECRET}")

    engine.register_hook("pre_tool_call", leaky, plugin="leaky")
    with caplog.at_level(logging.DEBUG, logger="hermes_pipeline"):
        for _ in range(3):
            engine.dispatch("pre_tool_call", {"args": {"password": SECRET, "cmd": f"export TOKEN={SECRET}"}})
    lines = [r.getMessage() for r in caplog.records if "leaky" in r.getMessage()]
    assert len(lines) == 3 and "bad request" in lines[0]
    assert all(SECRET not in line for line in lines)
    assert SECRET not in caplog.text


def test_fmt33a_every_package_log_record_is_scrubbed(caplog: pytest.LogCaptureFixture) -> None:
    """FMT-33a: any record of a ``hermes_pipeline`` logger (plugin loggers created at run time included) is
    scrubbed, its message, arguments and traceback; records of other loggers are left alone."""
    import hermes_pipeline.engine.failures  # noqa: F401 - installs the scrubbing with the engine

    with caplog.at_level(logging.DEBUG):
        logging.getLogger("hermes_pipeline.plugin.fresh-plugin-xyz").warning("using %s", f"Bearer {SECRET}")
        logging.getLogger("hermes_pipeline").info("url https://u:%s@db/x", SECRET)
        try:
            raise ValueError(f"api_key={SECRET}")
        except ValueError:
            logging.getLogger("hermes_pipeline.sinks.someone").exception("write failed")
        logging.getLogger("not_hermes").warning("foreign %s", f"Bearer {SECRET}")
    ours = [r for r in caplog.records if r.name.startswith("hermes_pipeline")]
    assert len(ours) == 3
    text = "\n".join(caplog.handler.format(r) for r in ours)
    assert SECRET not in text and "write failed" in text and "ValueError" in text
    [foreign] = [r for r in caplog.records if r.name == "not_hermes"]
    assert SECRET in foreign.getMessage()


def test_obs16_report_suppressed_flushes_pending_counts(caplog: pytest.LogCaptureFixture) -> None:
    """OBS-16: a host winding down can have the repeats not reported yet logged at once (one WARNING per key
    with repeats, none for a key without); the next report of a key starts a new interval."""
    clock = FakeClock()
    engine = storm_engine(clock)
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline"):
        dispatch_calls(engine, 7)
        clock.now += 5
        assert engine.failures.report_suppressed() == 1
        assert engine.failures.report_suppressed() == 0
    reports = warnings_of(caplog)[1:]
    assert len(reports) == 1 and "6 more failures" in reports[0] and "in the last 5 s" in reports[0]
