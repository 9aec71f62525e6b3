"""The configuration layer: pipeline files (``plugins.toml`` / YAML), layering, validation,
process-wide activation, and the profile's own ``config.yaml`` (spec 03).

Host authors need :func:`open_profile`; operators use ``hermes-pipeline config ...``; component
authors meet :class:`ValidationContext` (``validate_config(config, vctx)``) and
:mod:`hermes_pipeline.config.checks`.
"""

from .activation import ACTIVE_LOG_LINE, PROCESS, ActivationReport, ActivationState, ProcessActivation
from .components import BUILTIN_KINDS, available_kinds
from .diagnostics import ComponentDiagnostics, Diagnostic, Diagnostics
from .discovery import SELECTOR_ENV, PipelineSettings
from .errors import ConfigError, NativeRuntimeRequired
from .models import ComponentEntry, DynamicRecord, PipelineDocument, PluginsTable
from .pipeline import LoadedPipeline, load_pipeline
from .policy import Policy, ValidationContext
from .profile import Profile, open_profile, open_profiles, release_all
from .profile_config import ProfileSettings, SessionSegmentSettings, SharedMetricsSettings, load_profile_settings

__all__ = [
    "ACTIVE_LOG_LINE",
    "BUILTIN_KINDS",
    "PROCESS",
    "SELECTOR_ENV",
    "ActivationReport",
    "ActivationState",
    "ComponentDiagnostics",
    "ComponentEntry",
    "ConfigError",
    "Diagnostic",
    "Diagnostics",
    "DynamicRecord",
    "LoadedPipeline",
    "NativeRuntimeRequired",
    "PipelineDocument",
    "PipelineSettings",
    "PluginsTable",
    "Policy",
    "ProcessActivation",
    "Profile",
    "ProfileSettings",
    "SessionSegmentSettings",
    "SharedMetricsSettings",
    "ValidationContext",
    "available_kinds",
    "load_pipeline",
    "load_profile_settings",
    "open_profile",
    "open_profiles",
    "release_all",
]
