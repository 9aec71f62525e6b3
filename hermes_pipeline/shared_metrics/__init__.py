"""Shared metrics: a narrow, privacy-bounded counter path with an opt-in package sender (spec 05).

Off unless the profile's own ``config.yaml`` says ``telemetry.shared_metrics.enabled: true``.
The profile's scope events are counted as versioned, allowlisted counter events, aggregated in
``$HERMES_HOME/telemetry/shared_metrics/metrics.sqlite3``, packaged once a day into immutable,
schema-validated JSON delta documents in ``outbox/``, and sent only when ``send`` is also on,
within recorded consent windows.

    from hermes_pipeline.shared_metrics import attach_shared_metrics

    metrics = attach_shared_metrics(profile_engine, hermes_home, enabled=True)
    ...
    metrics.close()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .api import SharedMetrics, attach_shared_metrics
    from .clock import Clock, ManualClock, SystemClock
    from .packages import ExportResult
    from .profile_file import ProfileConsent, read_profile_consent
    from .resource import Resource, detect_resource
    from .schemas import PackageInvalid, package_errors, validate_package
    from .skills import SkillReporter, SkillUse
    from .store import MetricsStore, StoreError
    from .switched_off import reconcile_consent
    from .transport import HttpxTransport, Response, Transport

_HOME: Final = {
    "SharedMetrics": "api", "attach_shared_metrics": "api", "reconcile_consent": "switched_off",
    "Clock": "clock", "ManualClock": "clock", "SystemClock": "clock",
    "ExportResult": "packages",
    "ProfileConsent": "profile_file", "read_profile_consent": "profile_file",
    "Resource": "resource", "detect_resource": "resource",
    "PackageInvalid": "schemas", "package_errors": "schemas", "validate_package": "schemas",
    "SkillReporter": "skills", "SkillUse": "skills",
    "MetricsStore": "store", "StoreError": "store",
    "HttpxTransport": "transport", "Response": "transport", "Transport": "transport",
}
"""Where each public name lives. The names are imported on first use (PEP 562), so that a module
importing one piece (the observability store reads :mod:`.vocab`, a profile with shared metrics off
runs only the consent reconciler) does not load the stream listener, the packager or jsonschema."""

__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())


__all__ = [
    "Clock",
    "ExportResult",
    "HttpxTransport",
    "ManualClock",
    "MetricsStore",
    "PackageInvalid",
    "ProfileConsent",
    "Resource",
    "Response",
    "SharedMetrics",
    "SkillReporter",
    "SkillUse",
    "StoreError",
    "SystemClock",
    "Transport",
    "attach_shared_metrics",
    "detect_resource",
    "package_errors",
    "read_profile_consent",
    "reconcile_consent",
    "validate_package",
]
