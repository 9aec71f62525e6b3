"""The wiring lives in ``hermes_pipeline.profile`` and the configuration layer never imports it (issue #29 item 1:
no arrow up a layer): an old ``hermes_pipeline.config`` path says where the name moved; and the process engine's activation is handed to the runtime by the package
root instead of being looked up by a module name (CFG-50)."""

from __future__ import annotations

import importlib

import pytest

import hermes_pipeline
from hermes_pipeline import config, profile, runtime


def test_a_moved_name_says_where_it_lives_now() -> None:
    for name in sorted(config.MOVED_TO_PROFILE):
        assert getattr(profile, name) is not None
        with pytest.raises(AttributeError, match=r"import it from hermes_pipeline\.profile"):
            getattr(config, name)
        assert name not in config.__all__
    assert hermes_pipeline.open_profile is profile.open_profile
    assert importlib.import_module("hermes_pipeline.config").ConfigError.__module__ == "hermes_pipeline.config.errors"


def test_the_runtime_is_handed_the_activation_of_the_default_profile() -> None:
    """Importing the package hands :func:`runtime.get_engine` the activation; the runtime names no module."""
    activation = runtime.set_activation(None)
    try:
        assert activation is not None
        assert activation.__module__ == "hermes_pipeline"
        assert activation.__name__ == "_activate_process_engine"
    finally:
        runtime.set_activation(activation)
