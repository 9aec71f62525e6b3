"""The isolated ``HERMES_HOME`` of a Hermes replay (spec 06 BOOK-29, BOOK-31a, BOOK-33).

:func:`isolated_home` builds it from the recording and the profile the run was recorded in (read only, never
written): the profile's ``config.yaml`` with the recorded model (a what-if's ``--set model / base_url /
api_key``), provider keys never copied and the endpoint pointing at a closed port; the skills, memory and
persona file (``SOUL.md``) *as the run started with them* (the recording names each file by hash, and the
texts were kept once per distinct content when it was recorded, :mod:`~..export.blobs`; a file of the profile
that still has the recorded hash will do too; a recording from before that gets the profile's current ones,
with a warning); ``--skill`` / ``--memory`` files in place of recorded ones; and the one-file replay plugin
(:mod:`.hermes_plugin`).

The recorded skills are every skill the run could load (:mod:`~..host.snapshot`): a skill the profile reached
through a symbolic link is rebuilt as a folder of the isolated ``skills/``, and the skills of
``skills.external_dirs`` in :data:`EXTERNAL_DIR` of the isolated home, one numbered folder per recorded
directory (``external-skills/0``, ...), to which the copied ``config.yaml``'s ``skills.external_dirs`` then
points, in the recorded order; the live external directories are never loaded. A recording that names its skills
but not the external ones (recorded before they were named) keeps the profile's ``external_dirs``, with a
warning. Any recorded file whose text was not kept (and that the profile no longer has with the recorded hash)
is named in a warning.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from .errors import TrajectoryError
from .recording import Recording

__all__ = ["EXTERNAL_DIR", "PLUGIN_NAME", "isolated_home"]

PLUGIN_NAME: Final = "hermes_pipeline_replay"
EXTERNAL_DIR: Final = "external-skills"
"""Where, in the isolated home, the skills of the recorded ``skills.external_dirs`` are rebuilt."""
_COPIED: Final = ("skills", "memories", "SOUL.md")
"""What of the recorded profile's home shapes Hermes' system prompt and is copied into the isolated one."""
_PLUGIN_YAML: Final = (f"name: {PLUGIN_NAME}\nversion: 1.0.0\nkind: standalone\n"
                       "description: serves a recorded run to Hermes (hermes-pipeline replay)\n")
_PLUGIN_INIT: Final = ('"""Written by hermes-pipeline replay into its temporary profile."""\n'
                       "from hermes_pipeline.replay.hermes_plugin import register  # noqa: F401\n")


def _read_config(source: Path | None) -> dict[str, Any]:
    path = source / "config.yaml" if source is not None else None
    if path is None or not path.is_file():
        return {}
    from ..config.yaml_text import load_yaml_text

    try:
        loaded = load_yaml_text(path.read_text(encoding="utf-8"), path)
    except Exception as exc:
        raise TrajectoryError(f"the profile's config.yaml cannot be read to rebuild the replay profile: {exc}",
                              path=str(path)) from None
    return dict(loaded) if isinstance(loaded, Mapping) else {}


def _external_files(recording: Recording) -> Iterator[tuple[str, Path, str]]:
    """``(path in the isolated home, where the file was, sha256)`` of every file of the recorded external skills."""
    from ..host.snapshot import EXTERNAL_SKILLS, external_roots

    roots = external_roots(recording.context)
    for skill in recording.context.get(EXTERNAL_SKILLS) or []:
        if not isinstance(skill, Mapping) or not isinstance(skill.get("name"), str) or skill.get("root") not in roots:
            continue
        files = skill.get("files")
        for rel, sha in (files.items() if isinstance(files, Mapping) else ()):
            if isinstance(rel, str) and isinstance(sha, str):
                yield (f"{EXTERNAL_DIR}/{roots.index(skill['root'])}/{skill['name']}/{rel}",
                       Path(skill["root"]) / skill["name"] / rel, sha)


def _restore_state(target: Path, recording: Recording, source: Path | None) -> list[str]:
    """Write the skills (external ones too), memory and persona file the recorded run started with into
    ``target`` (from the texts kept at recording time, :mod:`~..export.blobs`; a file whose content still has
    the recorded hash will do too). Returns a warning for each file that could not be restored."""
    from ..export.blobs import read_blob, snapshot_files

    # (path in the isolated home, the file it was, sha256, the folder it must stay in, its name in a warning)
    named: list[tuple[str, Path | None, str, Path, str]] = [
        (rel, source / rel if source is not None else None, sha, target, rel)
        for rel, sha in snapshot_files(recording.context)]
    named += [(rel, origin, sha, target / EXTERNAL_DIR, origin.as_posix())
              for rel, origin, sha in _external_files(recording)]
    missing: list[str] = []
    for rel, current, sha, base, label in named:
        destination = target / rel
        try:
            destination.resolve().relative_to(base.resolve())
        except ValueError:
            missing.append(label)
            continue
        text = read_blob(source, sha) if source is not None else None
        destination.parent.mkdir(parents=True, exist_ok=True)
        if text is not None:
            destination.write_text(text, encoding="utf-8")
        elif current is not None and _has_content(current, sha):
            shutil.copyfile(current, destination)
        else:
            missing.append(label)
    if not missing:
        return []
    return [f"{len(missing)} file(s) of the recorded skills and memory were not kept and are left out of the "
            f"replay profile ({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''}): the replay may "
            "diverge where the run used them"]


def _has_content(path: Path, sha: str) -> bool:
    """Whether ``path`` is a file (not itself a symbolic link) whose bytes hash to ``sha``."""
    try:
        return path.is_file() and not path.is_symlink() and hashlib.sha256(path.read_bytes()).hexdigest() == sha
    except OSError:
        return False


def _external_config(config: dict[str, Any], target: Path, recording: Recording) -> list[str]:
    """Point the copied configuration's ``skills.external_dirs`` at the rebuilt external skills (none: no
    ``external_dirs``); a recording that does not name its external skills keeps the profile's, with a warning."""
    from ..host.snapshot import EXTERNAL_SKILLS, external_roots

    skills = config.get("skills")
    section = dict(skills) if isinstance(skills, Mapping) else {}
    if EXTERNAL_SKILLS not in recording.context:
        if section.get("external_dirs"):
            return ["the recording does not name the skills of skills.external_dirs (recorded before they were "
                    "named): the replay loads the external skills as they are now"]
        return []
    section.pop("external_dirs", None)
    roots = external_roots(recording.context)
    if roots:
        section["external_dirs"] = [str(target / EXTERNAL_DIR / str(index)) for index in range(len(roots))]
    if section or "skills" in config:
        config["skills"] = section
    return []


def _records_state(recording: Recording) -> bool:
    """Whether the recording names its skills and memory file by file (else the profile's are copied)."""
    skills = recording.context.get("skills")
    return isinstance(skills, list) and all(isinstance(s, Mapping) and isinstance(s.get("files"), Mapping)
                                            for s in skills) and "memory" in recording.context


def isolated_home(target: Path, recording: Recording, source: Path | None, port: int,
                  settings: Mapping[str, Any] | None = None,
                  files: Mapping[str, Path] | None = None) -> list[str]:
    """Build the replay's ``HERMES_HOME`` at ``target`` (see the module docstring); ``source`` is only read.

    Args:
        settings: ``--set`` values that change the profile (``model``, ``base_url``, ``api_key``).
        files: files to put in place of the recorded ones (``--skill`` / ``--memory``), by path in the home.

    Returns:
        Warnings (recorded files that could not be restored, or a recording without its state).
    """
    import yaml

    settings = settings or {}
    warnings: list[str] = []

    target.mkdir(mode=0o700, parents=True)
    config = _read_config(source)
    found = config.get("model")
    model: dict[str, Any] = dict(found) if isinstance(found, Mapping) else {"provider": "custom"}
    if recording.model:
        model["default"] = recording.model
    model.update(base_url=f"http://127.0.0.1:{port}/v1", api_key="replay")  # never a real key, never reachable
    for key in ("model", "base_url", "api_key"):  # a live model from --live-from N on (--set)
        if settings.get(key) not in (None, ""):
            model["default" if key == "model" else key] = str(settings[key])
    config["model"] = model
    config["plugins"] = {"enabled": [PLUGIN_NAME]}
    config["observability"] = {"trajectories": {"enabled": True}}
    auxiliary = config.get("auxiliary")
    config["auxiliary"] = {**(dict(auxiliary) if isinstance(auxiliary, Mapping) else {}),
                           "title_generation": {"enabled": False}}
    config.pop("telemetry", None)
    state = _records_state(recording)
    if state:
        warnings += _external_config(config, target, recording)
    (target / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    if state:  # the skills and memory the run started with, whatever the profile has now
        warnings += _restore_state(target, recording, source)
    else:
        if source is not None:
            warnings.append("the recording does not name its skills and memory file by file (recorded before "
                            "they were kept): the replay uses the profile's current skills, memory and SOUL.md")
        for name in _COPIED if source is not None else ():
            assert source is not None
            origin = source / name
            if origin.is_dir() and not origin.is_symlink():
                shutil.copytree(origin, target / name, symlinks=True)
            elif origin.is_file() and not origin.is_symlink():
                shutil.copyfile(origin, target / name)
    for rel, origin in (files or {}).items():
        destination = target / rel
        if origin.is_dir():
            shutil.rmtree(destination, ignore_errors=True)
            shutil.copytree(origin, destination, symlinks=False)
        else:
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(origin, destination)
    plugin = target / "plugins" / PLUGIN_NAME
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text(_PLUGIN_YAML, encoding="utf-8")
    (plugin / "__init__.py").write_text(_PLUGIN_INIT, encoding="utf-8")
    return warnings
