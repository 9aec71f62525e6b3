"""``hermes-pipeline hermes doctor``: what is wired between a Hermes profile and hermes_pipeline.

Checks, each with a plain verdict and the fix when something is wrong: Hermes Agent installed (and
its version), the bridge's entry point registered, the bridge enabled in the profile's
``config.yaml``, the pipeline file selected and valid (and what it would export where), and other
observability plugins enabled in the same profile (NeMo Relay beside the bridge on the same file
is refused by the bridge at start). When the bridge would export nothing (not loaded, no pipeline file
and no profile consumer, an invalid pipeline file or one that exports nothing with no profile consumer,
the NeMo Relay conflict) a check fails and ``Report.reason`` names why (``--json``: ``reason``).
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from .facts import BRIDGE_PLUGIN, PIPELINE_VARIABLE, RELAY_PLUGIN, hermes_version, read_profile

__all__ = ["NOTHING_EXPORTED", "Check", "Report", "diagnose"]

Verdict = Literal["ok", "warn", "fail", "info"]


@dataclass
class Check:
    """One line of the report."""

    name: str
    verdict: Verdict
    detail: str
    fix: str | None = None


@dataclass
class Report:
    """The whole report; ``ok`` is false when any check failed."""

    home: str
    hermes_version: str | None
    checks: list[Check] = field(default_factory=list)
    destinations: list[str] = field(default_factory=list)
    reason: str | None = None
    """Why the bridge would export nothing (a code of :data:`NOTHING_EXPORTED`), ``None`` when it would."""

    @property
    def ok(self) -> bool:
        """No check failed."""
        return all(c.verdict != "fail" for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-compatible data (``--json``)."""
        return {"ok": self.ok, "home": self.home, "hermes_version": self.hermes_version,
                "exports": self.reason is None, "reason": self.reason,
                "checks": [asdict(c) for c in self.checks], "destinations": list(self.destinations)}

    def lines(self) -> list[str]:
        """The report as text lines."""
        marks = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL", "info": "    "}
        out = [f"Hermes profile: {self.home}"]
        for check in self.checks:
            out.append(f"  {marks[check.verdict]} {check.name}: {check.detail}")
            if check.fix:
                out.append(f"       fix: {check.fix}")
        if self.destinations:
            out.append("  destinations:")
            out.extend(f"       {d}" for d in self.destinations)
        if self.ok:
            out.append("ready: the bridge will run in this profile")
        elif self.reason is not None:
            out.append(f"not ready: the bridge would export nothing ({self.reason}); see FAIL above")
        else:
            out.append("not ready: see FAIL above")
        return out


def _entry_point_registered() -> bool:
    return any(ep.name == BRIDGE_PLUGIN for ep in importlib.metadata.entry_points(group="hermes_agent.plugins"))


NOTHING_EXPORTED: Final = {
    "bridge_not_enabled": "Hermes does not load the bridge in this profile",
    "no_pipeline_no_consumer": f"{PIPELINE_VARIABLE} is not set and no profile consumer (observability.* / "
                               "telemetry.shared_metrics keys) is on",
    "pipeline_invalid": "the selected pipeline file is invalid and no profile consumer is on",
    "pipeline_exports_nothing": "the pipeline file exports nothing and no profile consumer is on",
    "relay_conflict": "NeMo Relay reads the same pipeline file: the bridge refuses to export",
}
"""Codes of ``Report.reason`` (``--json``) and what each means."""


def _fail_nothing(report: Report, code: str, name: str, detail: str, fix: str | None) -> None:
    report.checks.append(Check(name, "fail", f"{detail}: the bridge would export nothing", fix))
    if report.reason is None:
        report.reason = code


def _pipeline(report: Report, consumers: list[str]) -> bool:
    """The selector check; returns whether a valid pipeline file is selected. Without a pipeline file, or with
    one that exports nothing, the profile's own consumers decide whether anything is recorded at all."""
    selected = os.environ.get(PIPELINE_VARIABLE, "").strip()
    fix_consumer = ("or turn on a profile consumer, e.g. hermes-pipeline config set "
                    "observability.trajectories.enabled true")
    if not selected:
        if consumers:
            report.checks.append(Check("pipeline file", "info", f"{PIPELINE_VARIABLE} is not set: only the profile's "
                                       "own consumers record (" + ", ".join(consumers) + ")"))
        else:
            _fail_nothing(report, "no_pipeline_no_consumer", "pipeline file",
                          f"{PIPELINE_VARIABLE} is not set and no profile consumer is on",
                          f"export {PIPELINE_VARIABLE}=/path/to/plugins.toml (see pipelines/), {fix_consumer}")
        return False
    from ..config.diagnostics import Diagnostics
    from ..config.discovery import PipelineSettings
    from ..config.errors import ConfigError
    from ..config.pipeline import load_pipeline

    settings = PipelineSettings()
    target = settings.selected_path()
    try:
        loaded = load_pipeline(settings, selected=target, diagnostics=Diagnostics(log=False))
    except ConfigError as exc:
        report.checks.append(Check("pipeline file", "fail", f"{selected} is invalid: {exc}",
                                   f"hermes-pipeline config validate {selected}"))
        if not consumers and report.reason is None:
            report.reason = "pipeline_invalid"
        return False
    report.checks.append(Check("pipeline file", "ok", f"{loaded.selected} is valid"))
    wiring = getattr(loaded, "wiring", None)
    report.destinations = list(wiring()) if callable(wiring) else [c.kind for c in loaded.components]
    nothing = loaded.nothing_exported()
    if nothing and consumers:
        report.checks.append(Check("exports", "warn", f"the pipeline file exports nothing ({nothing}); only the "
                                   "profile's own consumers record (" + ", ".join(consumers) + ")"))
    elif nothing:
        _fail_nothing(report, "pipeline_exports_nothing", "exports", f"nothing is exported or rewritten: {nothing}",
                      f"fix {loaded.selected} (hermes-pipeline config validate {loaded.selected}), {fix_consumer}")
    return True


def diagnose(home: str | Path | None = None) -> Report:
    """Build the report for the Hermes profile at ``home`` (default ``$HERMES_HOME``, else ``~/.hermes``)."""
    version = hermes_version()
    facts = read_profile(home)
    report = Report(str(facts.home), version)
    if version is None:
        report.checks.append(Check("Hermes Agent", "fail", "hermes-agent is not installed",
                                   "pip install 'hermes_pipeline[hermes]'"))
    else:
        where = shutil.which("hermes")
        report.checks.append(Check("Hermes Agent", "ok", f"hermes-agent {version}"
                                   + (f" ({where})" if where else " (the hermes command is not on PATH)")))
    if _entry_point_registered():
        report.checks.append(Check("bridge plugin", "ok", f"entry point {BRIDGE_PLUGIN} in group hermes_agent.plugins"))
    else:
        report.checks.append(Check("bridge plugin", "fail", "the hermes_agent.plugins entry point is not registered",
                                   "reinstall hermes_pipeline (pip install .)"))
    if facts.error:
        report.checks.append(Check("config.yaml", "fail", f"{facts.config_path} cannot be read: {facts.error}"))
    elif not facts.exists:
        report.checks.append(Check("config.yaml", "fail", f"{facts.config_path} does not exist",
                                   f"hermes-pipeline hermes install --home {facts.home}"))
    elif facts.bridge_enabled:
        report.checks.append(Check("bridge enabled", "ok", f"{BRIDGE_PLUGIN} is in plugins.enabled"))
    else:
        reason = "is in plugins.disabled" if BRIDGE_PLUGIN in facts.disabled else "is not in plugins.enabled"
        _fail_nothing(report, "bridge_not_enabled", "bridge enabled", f"{BRIDGE_PLUGIN} {reason}",
                      f"hermes-pipeline hermes install --home {facts.home}")
    consumers = facts.profile_consumers() if not facts.error else []
    report.checks.append(Check("profile consumers", "ok" if consumers else "info",
                               ", ".join(consumers) if consumers else "none on (observability.* keys)"))
    selected = _pipeline(report, consumers)
    others = facts.other_observability()
    if facts.relay_enabled and selected:
        _fail_nothing(report, "relay_conflict", "other observability plugins",
                      f"{RELAY_PLUGIN} is enabled and reads the same {PIPELINE_VARIABLE}: the bridge refuses to "
                      "export (two producers would interleave in the same destinations)",
                      f"hermes plugins disable {RELAY_PLUGIN}, or remove {BRIDGE_PLUGIN} from plugins.enabled")
    elif others:
        report.checks.append(Check("other observability plugins", "info", ", ".join(others) + " also enabled"))
    else:
        report.checks.append(Check("other observability plugins", "ok", "none enabled beside the bridge"))
    report.checks.append(Check("approvals timeout", "info", f"{facts.approval_timeout:g} s (a CLI deny after this "
                               "long is reported as a timeout)"))
    return report

