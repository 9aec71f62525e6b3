"""``hermes-pipeline hermes doctor``: what is wired between a Hermes profile and hermes_pipeline.

Checks, each with a plain verdict and the fix when something is wrong: Hermes Agent installed (and
its version), the bridge's entry point registered, the bridge enabled in the profile's
``config.yaml``, the pipeline file selected and valid (and what it would export where), and other
observability plugins enabled in the same profile (NeMo Relay beside the bridge on the same file
is refused by the bridge at start).
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from .facts import BRIDGE_PLUGIN, PIPELINE_VARIABLE, RELAY_PLUGIN, hermes_version, read_profile

__all__ = ["Check", "Report", "diagnose"]

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

    @property
    def ok(self) -> bool:
        """No check failed."""
        return all(c.verdict != "fail" for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-compatible data (``--json``)."""
        return {"ok": self.ok, "home": self.home, "hermes_version": self.hermes_version,
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
        out.append("ready: the bridge will run in this profile" if self.ok else "not ready: see FAIL above")
        return out


def _entry_point_registered() -> bool:
    return any(ep.name == BRIDGE_PLUGIN for ep in importlib.metadata.entry_points(group="hermes_agent.plugins"))


def _pipeline(report: Report) -> bool:
    """The selector check; returns whether a valid pipeline file is selected."""
    selected = os.environ.get(PIPELINE_VARIABLE, "").strip()
    if not selected:
        report.checks.append(Check("pipeline file", "warn", f"{PIPELINE_VARIABLE} is not set: the bridge registers "
                                   "nothing and Hermes runs unchanged",
                                   f"export {PIPELINE_VARIABLE}=/path/to/plugins.toml (see pipelines/)"))
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
        return False
    report.checks.append(Check("pipeline file", "ok", f"{loaded.selected} is valid"))
    wiring = getattr(loaded, "wiring", None)
    report.destinations = list(wiring()) if callable(wiring) else [c.kind for c in loaded.components]
    nothing = loaded.nothing_exported()
    if nothing:
        report.checks.append(Check("exports", "warn", f"nothing is exported or rewritten: {nothing}"))
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
        report.checks.append(Check("bridge enabled", "fail", f"{BRIDGE_PLUGIN} {reason}",
                                   f"hermes-pipeline hermes install --home {facts.home}"))
    selected = _pipeline(report)
    others = facts.other_observability()
    if facts.relay_enabled and selected:
        report.checks.append(Check("other observability plugins", "fail",
                                   f"{RELAY_PLUGIN} is enabled and reads the same {PIPELINE_VARIABLE}: the bridge "
                                   "refuses to export (two producers would interleave in the same destinations)",
                                   f"hermes plugins disable {RELAY_PLUGIN}, or remove {BRIDGE_PLUGIN} from "
                                   "plugins.enabled"))
    elif others:
        report.checks.append(Check("other observability plugins", "info", ", ".join(others) + " also enabled"))
    else:
        report.checks.append(Check("other observability plugins", "ok", "none enabled beside the bridge"))
    report.checks.append(Check("approvals timeout", "info", f"{facts.approval_timeout:g} s (a CLI deny after this "
                               "long is reported as a timeout)"))
    return report

