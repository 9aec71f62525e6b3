"""Replay of recorded trajectories (spec 06 §8): a reader layer above the sinks.

- :class:`Recording` reads a trajectory file back (:func:`load_trajectory` checks it);
- :class:`Replay` installs the two execution middlewares that serve it on an engine;
- :mod:`.diff` compares two trajectories step by step; :mod:`.runner` runs an agent under a replay
  in an isolated temporary profile (the ``hermes-pipeline replay`` command).
"""

from .codec import provider_response, request_hash, sanitized_request
from .errors import ReplayDivergence, TrajectoryError
from .recording import RecordedCall, Recording, load_trajectory
from .replay import Divergence, Mode, Replay, ServedStep

__all__ = [
    "Divergence",
    "Mode",
    "RecordedCall",
    "Recording",
    "Replay",
    "ReplayDivergence",
    "ServedStep",
    "TrajectoryError",
    "load_trajectory",
    "provider_response",
    "request_hash",
    "sanitized_request",
]
