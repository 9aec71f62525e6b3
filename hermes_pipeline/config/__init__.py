"""The configuration layer: it reads and validates files, and nothing else (spec 03): the pipeline file
(``plugins.toml`` / YAML: discovery, layering, validation) and the profile's own ``config.yaml``.

What the files say is wired by :mod:`hermes_pipeline.profile` (profiles, their consumers, the process
activation); its public names are still found here under their old path (:data:`MOVED_TO_PROFILE`).
Operators use ``hermes-pipeline config ...``; component authors meet :class:`ValidationContext`
(``validate_config(config, vctx)``) and :mod:`hermes_pipeline.config.checks`.

The public names are imported on first use (PEP 562): a host that only opens a profile (the Hermes
bridge) loads the modules on that path, not the validation policy, the document models or the
suggestion helpers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .components import BUILTIN_KINDS, available_kinds
    from .diagnostics import ComponentDiagnostics, Diagnostic, Diagnostics
    from .discovery import SELECTOR_ENV, PipelineSettings
    from .errors import ConfigError, NativeRuntimeRequired
    from .models import ComponentEntry, DynamicRecord, PipelineDocument, PluginsTable
    from .pipeline import LoadedPipeline, load_pipeline
    from .policy import Policy, ValidationContext
    from .profile_config import ProfileSettings, SessionSegmentSettings, SharedMetricsSettings, load_profile_settings

_HOME: Final = {
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
    "ProfileSettings": "profile_config",
    "SessionSegmentSettings": "profile_config",
    "SharedMetricsSettings": "profile_config",
    "load_profile_settings": "profile_config",
}
"""Where each public name lives (its module under this package)."""

_own_names, __dir__ = lazy_names(__name__, _HOME, globals())

MOVED_TO_PROFILE: Final = frozenset({"ACTIVE_LOG_LINE", "PROCESS", "ActivationReport", "ActivationState",
                                     "ProcessActivation", "Profile", "open_profile", "open_profiles", "release_all"})
"""Names documented under ``hermes_pipeline.config`` that now live in :mod:`hermes_pipeline.profile`."""


def __getattr__(name: str) -> Any:
    if name in MOVED_TO_PROFILE:  # the old public path keeps working (the one import up, for compatibility)
        from ..profile import activation, profiles

        value = getattr(profiles if hasattr(profiles, name) else activation, name)
        globals()[name] = value
        return value
    return _own_names(name)


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
