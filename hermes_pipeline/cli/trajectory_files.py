"""Finding trajectories for the ``replay`` and ``trajectory`` commands: the store of ``$HERMES_HOME``,
an id or a path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..replay.errors import TrajectoryError

__all__ = ["LazyStore", "profile_home", "resolve_trajectory", "store_directory"]


def profile_home(home: str | None = None) -> Path:
    """``--home``, else ``$HERMES_HOME``, else ``~/.hermes``."""
    from ..config.discovery import PipelineSettings

    return Path(home).expanduser() if home else PipelineSettings().hermes_home_path()


def store_directory(home: Path) -> Path:
    """The trajectory store directory of the profile at ``home`` (``observability.trajectories.dir``)."""
    from ..config.profile_config import load_profile_settings

    return load_profile_settings(home, log=False).trajectories.directory(home)


class LazyStore:
    """The store directory of the profile at ``home``, read from its ``config.yaml`` when first asked for
    (a replay of a file with ``--output`` never needs it, nor the YAML reader). Calling it returns the
    directory."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._directory: Path | None = None

    def __call__(self) -> Path:
        if self._directory is None:
            self._directory = store_directory(self.home)
        return self._directory


def resolve_trajectory(ref: str, store: Path | Callable[[], Path]) -> Path:
    """A path as given when it exists; else the store file whose id is ``ref`` (``*-<ref>.json``; a
    unique prefix of the id is enough). ``store``: the store directory, or a callable returning it
    (called only for an id).

    Raises:
        TrajectoryError: no such file or id, or an ambiguous prefix.
    """
    path = Path(ref).expanduser()
    if path.exists() or ref.endswith(".json") or "/" in ref:
        if not path.exists():
            raise TrajectoryError("no such trajectory file", path=ref)
        return path
    if not isinstance(store, Path):
        store = store()
    from ..sinks.trajectory_store import TrajectoryLookupError, find_trajectory

    try:
        return find_trajectory(store, ref)[1]
    except TrajectoryLookupError as exc:
        hint = "" if exc.candidates else " (see 'hermes-pipeline trajectory list')"
        raise TrajectoryError(f"{exc}{hint}", path=ref) from None
