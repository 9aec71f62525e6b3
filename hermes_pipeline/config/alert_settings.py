"""The ``observability.alerts.*`` keys of the profile's ``config.yaml`` (spec 06 §11).

The alert evaluator (``hermes-pipeline alerts``) reads them. :data:`KEYS` maps each dotted key to
its validator (a problem text or ``None``) and :data:`DEFAULTS` holds the normative defaults of
the chapter's rules, delivery times and noise control; :func:`alerts_from` turns a parsed
``config.yaml`` into :class:`AlertSettings` (an invalid value falls back to its default with a
warning). Secrets (webhook URLs, the Feishu signing secret, the SMTP password) are never keys here:
they come from environment variables only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from .diagnostics import Diagnostics
from .observability_settings import checked_values

PREFIX: Final = "observability.alerts."
NOTIFIER_NAMES: Final = ("webhook", "feishu", "email")


def _bool(value: Any) -> str | None:
    return None if isinstance(value, bool) else "expected a boolean (true or false)"


def _positive_int(value: Any) -> str | None:
    return None if isinstance(value, int) and not isinstance(value, bool) and value > 0 else "expected an integer > 0"


def _positive_number(value: Any) -> str | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    return None if ok else "expected a number > 0"


def _fraction(value: Any) -> str | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and 0 < value <= 1
    return None if ok else "expected a number greater than 0 and at most 1"


def _unit(value: Any) -> str | None:
    if value is None:
        return None
    ok = isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9:_.@\\-]+", value.strip() or "!") is not None
    return None if ok else "expected a systemd unit name (e.g. hermes-gateway.service) or null"


def _clock(value: Any) -> str | None:
    ok = isinstance(value, str) and re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d", value.strip()) is not None
    return None if ok else "expected a local time HH:MM (24-hour)"


def _notifiers(value: Any) -> str | None:
    if not isinstance(value, list) or any(not isinstance(v, str) or not v.strip() for v in value):
        return "expected a list of notifier names (webhook, feishu, email or a plugin's name)"
    return None


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) and value.strip() else "expected a non-empty string"


def _host(value: Any) -> str | None:
    return None if value is None or (isinstance(value, str) and value.strip()) else "expected a host name or null"


def _port(value: Any) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 < value < 65536
    return None if ok else "expected a port number (1-65535)"


def _addresses(value: Any) -> str | None:
    if not isinstance(value, list) or any(not isinstance(v, str) or "@" not in v for v in value):
        return "expected a list of e-mail addresses"
    return None


KEYS: Final[dict[str, Callable[[Any], str | None]]] = {
    PREFIX + "enabled": _bool,
    PREFIX + "notifiers": _notifiers,
    PREFIX + "cost_spike_factor": _positive_number,
    PREFIX + "cost_window_minutes": _positive_int,
    PREFIX + "cost_baseline_days": _positive_int,
    PREFIX + "cost_min_active_days": _positive_int,
    PREFIX + "systemd_unit": _unit,
    PREFIX + "restart_count": _positive_int,
    PREFIX + "restart_window_minutes": _positive_int,
    PREFIX + "llm_failures": _positive_int,
    PREFIX + "skill_failures": _positive_int,
    PREFIX + "task_success_rate": _fraction,
    PREFIX + "task_window_minutes": _positive_int,
    PREFIX + "task_min_runs": _positive_int,
    PREFIX + "write_storm_count": _positive_int,
    PREFIX + "write_storm_minutes": _positive_int,
    PREFIX + "critical_renotify_minutes": _positive_int,
    PREFIX + "medium_renotify_minutes": _positive_int,
    PREFIX + "medium_collect_minutes": _positive_int,
    PREFIX + "digest_time": _clock,
    PREFIX + "max_per_hour": _positive_int,
    PREFIX + "send_timeout_seconds": _positive_number,
    PREFIX + "run_timeout_seconds": _positive_number,
    PREFIX + "email_host": _host,
    PREFIX + "email_port": _port,
    PREFIX + "email_from": _text,
    PREFIX + "email_to": _addresses,
}
"""Dotted key → validator."""

DEFAULTS: Final[dict[str, Any]] = {
    PREFIX + "enabled": False, PREFIX + "notifiers": [],
    PREFIX + "cost_spike_factor": 3.0, PREFIX + "cost_window_minutes": 60, PREFIX + "cost_baseline_days": 14,
    PREFIX + "cost_min_active_days": 3, PREFIX + "systemd_unit": None, PREFIX + "restart_count": 3,
    PREFIX + "restart_window_minutes": 10, PREFIX + "llm_failures": 10, PREFIX + "skill_failures": 5,
    PREFIX + "task_success_rate": 0.5, PREFIX + "task_window_minutes": 60, PREFIX + "task_min_runs": 4,
    PREFIX + "write_storm_count": 100, PREFIX + "write_storm_minutes": 10,
    PREFIX + "critical_renotify_minutes": 30, PREFIX + "medium_renotify_minutes": 240,
    PREFIX + "medium_collect_minutes": 5, PREFIX + "digest_time": "08:00",
    PREFIX + "max_per_hour": 10, PREFIX + "send_timeout_seconds": 10.0, PREFIX + "run_timeout_seconds": 45.0,
    PREFIX + "email_host": None, PREFIX + "email_port": 587,
    PREFIX + "email_from": "hermes-alerts@localhost", PREFIX + "email_to": [],
}
"""The normative defaults (spec 06 BOOK-42..44 and the "(default)" values)."""

SECTIONS: Final = ("observability.alerts",)
"""Sections whose every key belongs to this schema."""
TABLE_KEYS: Final = (PREFIX + "notifiers", PREFIX + "email_to")
"""Keys whose value ``config set`` takes as a YAML flow list."""


@dataclass(frozen=True)
class AlertSettings:
    """The ``observability.alerts.*`` settings (field names are the keys without the prefix, ``.`` → ``_``)."""

    enabled: bool = False
    notifiers: tuple[str, ...] = ()
    cost_spike_factor: float = 3.0
    cost_window_minutes: int = 60
    cost_baseline_days: int = 14
    cost_min_active_days: int = 3
    systemd_unit: str | None = None
    restart_count: int = 3
    restart_window_minutes: int = 10
    llm_failures: int = 10
    skill_failures: int = 5
    task_success_rate: float = 0.5
    task_window_minutes: int = 60
    task_min_runs: int = 4
    write_storm_count: int = 100
    write_storm_minutes: int = 10
    critical_renotify_minutes: int = 30
    medium_renotify_minutes: int = 240
    medium_collect_minutes: int = 5
    digest_time: str = "08:00"
    max_per_hour: int = 10
    send_timeout_seconds: float = 10.0
    run_timeout_seconds: float = 45.0
    email_host: str | None = None
    email_port: int = 587
    email_from: str = "hermes-alerts@localhost"
    email_to: tuple[str, ...] = ()


def alerts_from(raw: Mapping[str, Any], diagnostics: Diagnostics | None = None,
                source: str = "config.yaml") -> AlertSettings:
    """:class:`AlertSettings` from a parsed ``config.yaml`` (bad values: default plus a warning)."""
    values: dict[str, Any] = {}
    for dotted, value in checked_values(raw, KEYS, diagnostics, source):
        if isinstance(value, list):
            value = tuple(v.strip() for v in value)
        elif isinstance(value, str):
            value = value.strip()
        values[dotted[len(PREFIX):].replace(".", "_")] = value
    return AlertSettings(**values)


DESCRIPTIONS: Final[dict[str, tuple[str | None, str]]] = {
    PREFIX + "enabled": (None, "Evaluate the alert rules (`hermes-pipeline alerts run|daemon`) over the observability "
                               "store."),
    PREFIX + "notifiers": (None, "Notifiers alerts go to: `webhook`, `feishu`, `email` or a plugin of the "
                                   "`hermes_pipeline.notifiers` entry-point group."),
    PREFIX + "cost_spike_factor": (None, "A-C1: critical when the last window's LLM cost exceeds this many times the "
                                         "mean daily cost."),
    PREFIX + "cost_window_minutes": (None, "A-C1: the window whose LLM cost is compared, in minutes."),
    PREFIX + "cost_baseline_days": (None, "A-C1: complete days before today averaged (days without activity count "
                                          "as 0)."),
    PREFIX + "cost_min_active_days": (None, "A-C1 stays inactive until this many baseline days had LLM calls."),
    PREFIX + "systemd_unit": ("none (A-C2 off)", "A-C2: the agent's systemd unit, critical when `failed` or "
                                                 "restarting repeatedly."),
    PREFIX + "restart_count": (None, "A-C2: restarts within the restart window that count as a crash loop."),
    PREFIX + "restart_window_minutes": (None, "A-C2: the restart window, in minutes."),
    PREFIX + "llm_failures": (None, "A-C3: critical when this many most recent LLM calls all failed."),
    PREFIX + "skill_failures": (None, "A-M1: medium when this many most recent runs of one skill all failed."),
    PREFIX + "task_success_rate": (None, "A-M2: medium when a task class's success rate in the window is below "
                                         "this."),
    PREFIX + "task_window_minutes": (None, "A-M2: the task window, in minutes."),
    PREFIX + "task_min_runs": (None, "A-M2: fewest runs in the window before a task class is judged."),
    PREFIX + "write_storm_count": (None, "A-M3: medium when at least this many memory or skill writes fall within "
                                         "one storm window."),
    PREFIX + "write_storm_minutes": (None, "A-M3: the storm window, in minutes."),
    PREFIX + "critical_renotify_minutes": (None, "A still-firing critical alert is sent again after this many "
                                                 "minutes."),
    PREFIX + "medium_renotify_minutes": (None, "A still-firing medium alert is sent again after this many minutes."),
    PREFIX + "medium_collect_minutes": (None, "Medium alerts are collected this long after the first firing, then "
                                              "sent as one batch."),
    PREFIX + "digest_time": (None, "Local time (HH:MM) of the daily digest (A-L1 and folded alerts)."),
    PREFIX + "max_per_hour": (None, "Most notifications sent in any hour; the excess is folded into the next "
                                    "digest."),
    PREFIX + "send_timeout_seconds": (None, "Deadline of one message to one notifier, in seconds: connecting, sending and "
                                            "the whole answer (a trickling answer included). A message that went out "
                                            "but got no answer in time counts as delivered, unconfirmed, and is never "
                                            "sent again."),
    PREFIX + "run_timeout_seconds": (None, "Deadline of one `alerts run`, in seconds (below the 60 s timer period, so "
                                           "runs never pile up); what is not sent by then stays due for the next run."),
    PREFIX + "email_host": ("none", "SMTP server of the `email` notifier (STARTTLS; user and password from "
                                    "`HERMES_ALERTS_SMTP_USER` / `HERMES_ALERTS_SMTP_PASSWORD`)."),
    PREFIX + "email_port": (None, "SMTP port of the `email` notifier."),
    PREFIX + "email_from": (None, "Sender address of alert e-mails."),
    PREFIX + "email_to": (None, "Recipients of alert e-mails."),
}
"""Reference descriptions of the keys (``docs/configuration.md``): key → (default shown, effect)."""
