"""The wiring: a profile, its one shared event stream, its consumers, and the process activation (spec 03 §10,
§11, §13).

Host authors need :func:`open_profile`. The configuration layer below only reads and validates files (the
pipeline file, the profile's ``config.yaml``); this package puts what they say together on an engine.

The public names are imported on first use (PEP 562): importing the package costs nothing until a profile
opens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .activation import ACTIVE_LOG_LINE, PROCESS, ActivationReport, ActivationState, ProcessActivation
    from .builtin_consumers import BUILTIN_CONSUMERS
    from .consumers import CONSUMER_ENTRY_POINT_GROUP, ProfileConsumer
    from .process import activate_default
    from .profiles import Profile, open_profile, open_profiles, release_all
    from .stream import SharedStream

_HOME: Final = {
    "ACTIVE_LOG_LINE": "activation",
    "PROCESS": "activation",
    "ActivationReport": "activation",
    "ActivationState": "activation",
    "ProcessActivation": "activation",
    "BUILTIN_CONSUMERS": "builtin_consumers",
    "CONSUMER_ENTRY_POINT_GROUP": "consumers",
    "ProfileConsumer": "consumers",
    "activate_default": "process",
    "Profile": "profiles",
    "open_profile": "profiles",
    "open_profiles": "profiles",
    "release_all": "profiles",
    "SharedStream": "stream",
}
"""Where each public name lives (its module under this package)."""

__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())

__all__ = [
    "ACTIVE_LOG_LINE",
    "BUILTIN_CONSUMERS",
    "CONSUMER_ENTRY_POINT_GROUP",
    "PROCESS",
    "ActivationReport",
    "ActivationState",
    "ProcessActivation",
    "Profile",
    "ProfileConsumer",
    "SharedStream",
    "activate_default",
    "open_profile",
    "open_profiles",
    "release_all",
]
