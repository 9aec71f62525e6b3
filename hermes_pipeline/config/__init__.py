"""The configuration layer: it reads and validates files, and nothing else (spec 03): the pipeline file
(``plugins.toml`` / YAML: discovery, layering, validation) and the profile's own ``config.yaml``.

What the files say is wired by :mod:`hermes_pipeline.profile` (profiles, their consumers, the process
activation); nothing here imports it (asking this package for one of its names, :data:`MOVED_TO_PROFILE`,
says where it lives now).
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
"""Names once under ``hermes_pipeline.config`` that live in :mod:`hermes_pipeline.profile` (the wiring)."""


def __getattr__(name: str) -> Any:
    if name in MOVED_TO_PROFILE:  # the configuration layer never imports the wiring above it
        raise AttributeError(f"hermes_pipeline.config.{name} moved: import it from hermes_pipeline.profile "
                             f"(or hermes_pipeline) instead")
    return _own_names(name)


__all__ = [
    "BUILTIN_KINDS",
    "SELECTOR_ENV",
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
    "ProfileSettings",
    "SessionSegmentSettings",
    "SharedMetricsSettings",
    "ValidationContext",
    "available_kinds",
    "load_pipeline",
    "load_profile_settings",
]
