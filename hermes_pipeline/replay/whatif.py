"""What a what-if replay puts in place of the recorded skills and memory (``--skill`` / ``--memory``).

``--skill NAME=PATH`` replaces the recorded skill ``NAME`` (looked up by its name, in any category folder
of the recording's snapshot, the profile's own skills first, then those of ``skills.external_dirs``; a name the
recording does not have becomes a new skill ``skills/NAME``) with ``PATH``: a ``SKILL.md`` file, or a whole
skill directory. ``--memory FILE=PATH`` replaces the memory file ``FILE`` (``MEMORY.md``, or a path under
``memories/``) with the file ``PATH``. :func:`replacement_files` checks each and returns them by path relative to
the replay's profile.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

from .errors import TrajectoryError
from .recording import Recording

__all__ = ["replacement_files"]


def _pair(item: str, option: str) -> tuple[str, Path]:
    name, sep, path = item.partition("=")
    name, path = name.strip(), path.strip()
    if not sep or not name or not path:
        raise TrajectoryError(f"{option} expects NAME=PATH, not {item!r}", key=option)
    source = Path(path).expanduser()
    if not source.exists():
        raise TrajectoryError(f"{option} {name}: no such file or directory", path=str(source), key=option)
    return name, source


def _safe(rel: str, option: str) -> str:
    parts = PurePosixPath(rel).parts
    if not parts or rel.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise TrajectoryError(f"{option} {rel!r}: give a name inside the profile (no '/' at the start, no '..')",
                              key=option)
    return PurePosixPath(*parts).as_posix()


def _recorded_skill(recording: Recording, name: str) -> str:
    """The recorded skill ``name``'s folder in the replay's profile: ``skills/<its path>``, or where an external
    skill is rebuilt (:data:`~.hermes_home.EXTERNAL_DIR`); a name the recording has not: ``skills/<name>``."""
    from ..host.snapshot import EXTERNAL_SKILLS, external_roots
    from .hermes_home import EXTERNAL_DIR

    roots = external_roots(recording.context)
    for key in ("skills", EXTERNAL_SKILLS):
        for skill in recording.context.get(key) or []:
            recorded = skill.get("name") if isinstance(skill, Mapping) else None
            if isinstance(recorded, str) and (recorded == name or recorded.rsplit("/", 1)[-1] == name):
                if key == "skills":
                    return "skills/" + _safe(recorded, "--skill")
                if skill.get("root") in roots:
                    return f"{EXTERNAL_DIR}/{roots.index(skill['root'])}/" + _safe(recorded, "--skill")
    return "skills/" + _safe(name, "--skill")


def replacement_files(recording: Recording, skills: Iterable[str] = (),
                      memories: Iterable[str] = ()) -> dict[str, Path]:
    """``{path in the profile: file or directory to put there}`` for the ``--skill`` / ``--memory`` options.

    Raises:
        TrajectoryError: not ``NAME=PATH``, ``PATH`` missing, or a name leaving the profile.
    """
    out: dict[str, Path] = {}
    for item in skills:
        name, source = _pair(item, "--skill")
        if source.is_dir() and not (source / "SKILL.md").is_file():
            raise TrajectoryError("--skill: a skill directory holds a SKILL.md", path=str(source), key="--skill")
        rel = _recorded_skill(recording, name)
        out[rel if source.is_dir() else rel + "/SKILL.md"] = source
    for item in memories:
        name, source = _pair(item, "--memory")
        if not source.is_file():
            raise TrajectoryError("--memory: give a file", path=str(source), key="--memory")
        rel = _safe(name, "--memory")
        out[rel if rel.startswith("memories/") else "memories/" + rel] = source
    return out
