"""The configuration layer: pipeline files (``plugins.toml`` / YAML), layering, validation,
process-wide activation, and the profile's own ``config.yaml`` (spec 03).

Host authors need :func:`open_profile`; operators use ``hermes-pipeline config ...``; component
authors meet :class:`ValidationContext` (``validate_config(config, vctx)``) and
:mod:`hermes_pipeline.config.checks`.

The public names are imported on first use (PEP 562): a host that only opens a profile (the Hermes
bridge) loads the modules on that path, not the validation policy, the document models or the
suggestion helpers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from .._lazy import lazy_names

if TYPE_CHECKING:
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

_HOME: Final = {
    "ACTIVE_LOG_LINE": "activation",
    "PROCESS": "activation",
    "ActivationReport": "activation",
    "ActivationState": "activation",
    "ProcessActivation": "activation",
    "BUILTIN_KINDS": "components",
    "available_kinds": "components",
    "ComponentDiagnostics": "diagnostics",
    "Diagnostic": "diagnostics",
    "Diagnostics": "diagnostics",
    "SELECTOR_ENV": "discovery",
    "PipelineSettings": "discovery",
    "ConfigError": "errors",
    "NativeRuntimeRequired": "errors",
    "ComponentEntry": "models",
    "DynamicRecord": "models",
    "PipelineDocument": "models",
    "PluginsTable": "models",
    "LoadedPipeline": "pipeline",
    "load_pipeline": "pipeline",
    "Policy": "policy",
    "ValidationContext": "policy",
    "Profile": "profile",
    "open_profile": "profile",
    "open_profiles": "profile",
    "release_all": "profile",
    "ProfileSettings": "profile_config",
    "SessionSegmentSettings": "profile_config",
    "SharedMetricsSettings": "profile_config",
    "load_profile_settings": "profile_config",
}
"""Where each public name lives (its module under this package)."""

__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())


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
