"""The process engine's activation on behalf of the default profile: what :func:`hermes_pipeline.get_engine`
decides when it creates the process engine and no profile has decided yet.

:mod:`hermes_pipeline.runtime` sits below the configuration layer and cannot import this module; the package
root, which sits above every layer, hands :func:`activate_default` to it
(:func:`hermes_pipeline.runtime.set_activation`), so no module is named as a string to dodge the arrow.
"""

from __future__ import annotations

from typing import Final

from ..config.discovery import PipelineSettings, canonical
from ..config.profile_config import load_profile_settings
from ..engine.core import Engine
from ..export.paths import default_output_directory
from . import activation
from .activation import ActivationReport

DEFAULT_HOLDER_SUFFIX: Final = " (get_engine)"
"""Marks the activation holder of :func:`activate_default` (distinct from an opened profile's)."""


def activate_default(engine: Engine) -> ActivationReport | None:
    """Activate the selected pipeline file on the process engine that
    :func:`hermes_pipeline.get_engine` just created, on behalf of the default profile.

    Called once per process engine (handed to :mod:`hermes_pipeline.runtime` by the package root). Does nothing
    when ``HERMES_NEMO_RELAY_PLUGINS_TOML`` is unset (nothing is processed at all then) or when a
    profile already decided the activation. Otherwise the default profile (``$HERMES_HOME``, else
    ``~/.hermes``) decides it as its first host would: its ``plugins.hook_callback_timeout``
    applies, outputs without a directory go to its ``telemetry`` directory, and the activation is
    held until :func:`~hermes_pipeline.profile.release_all` or interpreter exit. A bad file never raises: the state is
    ``FAILED`` and ``pipeline.load_failed`` is logged (the process runs without pipeline plugins).
    The profile's first-party consumers (shared metrics) start only with :func:`~hermes_pipeline.profile.open_profile`.
    """
    pipeline = PipelineSettings()
    if pipeline.selector() is None:
        return None
    home = canonical(pipeline.hermes_home_path())
    settings = load_profile_settings(home, managed=pipeline.managed_config)
    timeout = settings.hook_callback_timeout if settings.hook_callback_timeout_set else None
    return activation.PROCESS.acquire_if_unheld(str(home) + DEFAULT_HOLDER_SUFFIX, engine, pipeline,
                                     hook_callback_timeout=timeout, output_directory=default_output_directory(home))
