"""Shared metrics: a narrow, privacy-bounded counter path with an opt-in package sender (spec 05).

Off unless the profile's own ``config.yaml`` says ``telemetry.shared_metrics.enabled: true``.
Lifecycle hooks are projected to versioned, allowlisted counter events, aggregated in
``$HERMES_HOME/telemetry/shared_metrics/metrics.sqlite3``, packaged once a day into immutable,
schema-validated JSON delta documents in ``outbox/``, and sent only when ``send`` is also on,
within recorded consent windows.

    from hermes_pipeline.shared_metrics import attach_shared_metrics

    metrics = attach_shared_metrics(profile_engine, hermes_home, enabled=True)
    ...
    metrics.close()
"""

from .api import SharedMetrics, attach_shared_metrics, reconcile_consent
from .clock import Clock, ManualClock, SystemClock
from .packages import ExportResult
from .profile_file import ProfileConsent, read_profile_consent
from .resource import Resource, detect_resource
from .schemas import PackageInvalid, package_errors, validate_package
from .skills import SkillReporter, SkillUse
from .store import MetricsStore, StoreError
from .transport import HttpxTransport, Response, Transport

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
