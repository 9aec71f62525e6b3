"""Reading a profile's ``config.yaml`` as Hermes reads it: PyYAML's safe loader, in C when available.

The profile file belongs to the host (Hermes writes and reads it with PyYAML), so its values mean
here what they mean there (YAML 1.1 scalars, the last of repeated keys). libyaml parses a full
Hermes ``config.yaml`` (about 700 lines) in about 4 ms where a pure-Python loader takes 30-55 ms,
which every host start-up would pay. Editing the file keeps using ruamel.yaml, which keeps comments
(:mod:`.profile_edit`); pipeline files have their own loader (:mod:`.loader`).
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["load_yaml_text"]

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml_text(text: str) -> Any:
    """The document in ``text`` (``None`` when empty); raises :class:`yaml.YAMLError` when it is not YAML."""
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - a safe loader (CSafeLoader or SafeLoader)
