"""The consumers every profile may start, shipped with the package (CFG-85): structured logs, shared metrics,
the trajectory store, the observability store and the quick OTel endpoint.

Each is a small :class:`~hermes_pipeline.profile.consumers.ProfileConsumer` whose ``attach`` imports its
package when called (a plain import, pointing down the layers): a profile with a consumer switched off never
imports that consumer's package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from ..config.profile_config import ProfileSettings
from .consumers import ProfileConsumer

if TYPE_CHECKING:
    from .profiles import Profile


class StructuredLogsConsumer:
    """``observability.logs``: hermes_pipeline's own JSON Lines log in the profile (BOOK-47)."""

    name = "structured_logs"

    def enabled(self, settings: ProfileSettings) -> bool:
        return True  # always attached: the log path is the profile's

    def attach(self, profile: Profile) -> Any:
        from ..logs import attach_for_profile

        return attach_for_profile(profile)


class SharedMetricsConsumer:
    """``shared_metrics``: the opt-in usage metrics (spec 05); switched off, it still reconciles consent."""

    name = "shared_metrics"

    def enabled(self, settings: ProfileSettings) -> bool:
        return True  # its switched-off state still has work to do, which it decides for itself

    def attach(self, profile: Profile) -> Any:
        from ..shared_metrics.profile_entry import attach_for_profile

        return attach_for_profile(profile)


class TrajectoryStoreConsumer:
    """``observability.trajectories``: the profile's trajectory store (BOOK-28)."""

    name = "trajectory_store"

    def enabled(self, settings: ProfileSettings) -> bool:
        return settings.trajectories.enabled is True

    def attach(self, profile: Profile) -> Any:
        from ..sinks.trajectory_store import attach_for_profile

        return attach_for_profile(profile)


class ObservabilityStoreConsumer:
    """``observability.audit_enabled``: the profile's observability store (BOOK-16)."""

    name = "observability_store"

    def enabled(self, settings: ProfileSettings) -> bool:
        return settings.observability.audit_enabled is True

    def attach(self, profile: Profile) -> Any:
        from ..sinks.observability_store import attach_for_profile

        return attach_for_profile(profile)


class QuickOtelConsumer:
    """``observability.otel_enabled``: the shorthand OTLP endpoint of the profile (BOOK-46)."""

    name = "quick_otel"

    def enabled(self, settings: ProfileSettings) -> bool:
        return settings.observability.otel_enabled is True

    def attach(self, profile: Profile) -> Any:
        from ..sinks.otel.quick_endpoint import attach_for_profile

        return attach_for_profile(profile)


BUILTIN_CONSUMERS: Final[tuple[ProfileConsumer, ...]] = (
    StructuredLogsConsumer(), SharedMetricsConsumer(), TrajectoryStoreConsumer(), ObservabilityStoreConsumer(),
    QuickOtelConsumer())
"""The built-in consumers in start order (closed in the reverse order)."""
