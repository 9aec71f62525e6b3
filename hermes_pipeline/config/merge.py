"""Layer merging with provenance (spec 03 §9.3, CFG-42..CFG-46).

Tables merge recursively and the higher layer wins per key; ``components`` are matched by
``kind``; lists directly inside a component's ``config`` and the observability destination lists
(each sink states its own, :func:`sink_lists`) concatenate, higher layer first; an explicitly empty
``opentelemetry.logs.endpoints`` / ``opentelemetry.metrics.endpoints`` clears the inherited list;
every other list is replaced.
Every value of the result remembers the file (and line) it came from.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

from .keypath import KeyPath, format_path
from .layers import Layer

SINK_GROUP: Final = "hermes_pipeline.sinks"
"""The entry-point group of the ``observability`` component's sinks."""


@lru_cache(maxsize=64)
def sink_lists(section: str) -> tuple[frozenset[KeyPath], frozenset[KeyPath]]:
    """``(concatenated, clearable)`` list paths of the sink named ``section``, relative to the section,
    as the sink states them (its builder's ``list_paths`` and ``clearable_paths``).

    The sink is found by name in the ``hermes_pipeline.sinks`` entry-point group (the sinks sit above
    this layer, so they are looked up, never imported by name); an unknown or broken sink has none.
    """
    for ep in importlib.metadata.entry_points(group=SINK_GROUP):
        if ep.name == section:
            try:
                builder = ep.load()
            except Exception:  # validation reports a sink that does not import
                return frozenset(), frozenset()
            concat = frozenset(tuple(p) for p in getattr(builder, "list_paths", ()))
            return concat, frozenset(tuple(p) for p in getattr(builder, "clearable_paths", ()))
    return frozenset(), frozenset()


Origins = dict[KeyPath, "Origin"]


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a value came from."""

    source: str
    line: int | None = None


@dataclass
class Merged:
    """The merged document and the origin of each of its values."""

    data: dict[str, Any]
    origins: Origins = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    """The layered files, lowest precedence first."""

    def origin(self, path: KeyPath) -> Origin | None:
        """Origin of ``path`` or of its nearest ancestor that has one."""
        for end in range(len(path), -1, -1):
            found = self.origins.get(path[:end])
            if found is not None:
                return found
        return None

    def locate(self, path: KeyPath) -> tuple[str | None, int | None]:
        """``(file, line)`` of ``path`` (a :data:`~hermes_pipeline.config.policy.Locator`)."""
        found = self.origin(path)
        return (found.source, found.line) if found is not None else (None, None)

    def locator(self, base: KeyPath) -> Callable[[KeyPath], tuple[str | None, int | None]]:
        """A locator for paths relative to ``base`` (see :data:`hermes_pipeline.config.policy.Locator`)."""
        def locate(path: KeyPath) -> tuple[str | None, int | None]:
            return self.locate((*base, *path))
        return locate

    def provenance(self) -> dict[str, str]:
        """Dotted key path → source file, for every leaf value of :attr:`data`."""
        out: dict[str, str] = {}
        for path in leaf_paths(self.data):
            found = self.origin(path)
            if found is not None:
                out[format_path(path)] = found.source
        return out


def leaf_paths(value: Any, prefix: KeyPath = ()) -> list[KeyPath]:
    """Paths of the scalar leaves (and empty containers) of ``value``, in document order."""
    if isinstance(value, dict) and value:
        return [p for key, item in value.items() for p in leaf_paths(item, (*prefix, key))]
    if isinstance(value, list) and value:
        return [p for i, item in enumerate(value) for p in leaf_paths(item, (*prefix, i))]
    return [prefix] if prefix else []


def layer_origins(layer: Layer) -> Origins:
    """The origin of every value of one layer."""
    out: Origins = {}
    stack: list[tuple[Any, KeyPath]] = [(layer.data, ())]
    while stack:
        value, path = stack.pop()
        out[path] = Origin(layer.source, layer.parsed.line_for(path))
        if isinstance(value, dict):
            stack.extend((item, (*path, key)) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((item, (*path, i)) for i, item in enumerate(value))
    return out


def _copy(out: Origins, origins: Origins, src: KeyPath, dst: KeyPath) -> None:
    n = len(src)
    for path, origin in origins.items():
        if path[:n] == src:
            out[dst + path[n:]] = origin


def _list_rule(path: KeyPath, kinds: dict[int, str]) -> str:
    """``concat``, ``clearable`` or ``replace`` for a list at merged ``path``."""
    if len(path) >= 4 and path[0] == "components" and path[2] == "config":
        rel = path[3:]
        kind = kinds.get(path[1]) if isinstance(path[1], int) else None
        if kind == "observability" and len(rel) >= 2 and isinstance(rel[0], str):
            concat, clearable = sink_lists(rel[0])
            if rel[1:] in concat:
                return "clearable" if rel[1:] in clearable else "concat"
        if len(rel) == 1:
            return "concat"
    return "replace"


class _Merger:
    def __init__(self, lo: Origins, hi: Origins, kinds: dict[int, str]) -> None:
        self.lo, self.hi, self.kinds = lo, hi, kinds
        self.out: Origins = {}

    def value(self, low: Any, high: Any, lpath: KeyPath, hpath: KeyPath, opath: KeyPath) -> Any:
        if isinstance(low, dict) and isinstance(high, dict):
            return self.table(low, high, lpath, hpath, opath)
        if isinstance(low, list) and isinstance(high, list):
            rule = _list_rule(opath, self.kinds)
            if rule == "concat" or (rule == "clearable" and high):
                for i in range(len(high)):
                    _copy(self.out, self.hi, (*hpath, i), (*opath, i))
                for j in range(len(low)):
                    _copy(self.out, self.lo, (*lpath, j), (*opath, len(high) + j))
                origin = self.hi.get(hpath) or self.lo.get(lpath)
                if origin is not None:
                    self.out[opath] = origin
                return [*high, *low]
        _copy(self.out, self.hi, hpath, opath)
        return high

    def table(self, low: dict[str, Any], high: dict[str, Any], lpath: KeyPath, hpath: KeyPath,
              opath: KeyPath) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, item in low.items():
            if key in high:
                result[key] = self.value(item, high[key], (*lpath, key), (*hpath, key), (*opath, key))
            else:
                result[key] = item
                _copy(self.out, self.lo, (*lpath, key), (*opath, key))
        for key, item in high.items():
            if key not in low:
                result[key] = item
                _copy(self.out, self.hi, (*hpath, key), (*opath, key))
        origin = self.hi.get(hpath) or self.lo.get(lpath)
        if origin is not None:
            self.out[opath] = origin
        return result

    def document(self, low: dict[str, Any], high: dict[str, Any]) -> dict[str, Any]:
        low_components = low.get("components", [])
        high_components = high.get("components", [])
        rest_low = {k: v for k, v in low.items() if k != "components"}
        rest_high = {k: v for k, v in high.items() if k != "components"}
        result = self.table(rest_low, rest_high, (), (), ())
        if "components" in low or "components" in high:
            result["components"] = self.components(low_components, high_components)
        return result

    def components(self, low: list[dict[str, Any]], high: list[dict[str, Any]]) -> list[dict[str, Any]]:
        by_kind = {entry["kind"]: j for j, entry in enumerate(high)}
        low_kinds = {entry["kind"] for entry in low}
        merged: list[dict[str, Any]] = []
        for i, entry in enumerate(low):
            self.kinds[i] = entry["kind"]
            j = by_kind.get(entry["kind"])
            if j is None:
                merged.append(entry)
                _copy(self.out, self.lo, ("components", i), ("components", i))
            else:
                merged.append(self.table(entry, high[j], ("components", i), ("components", j), ("components", i)))
        for j, entry in enumerate(high):
            if entry["kind"] not in low_kinds:
                self.kinds[len(merged)] = entry["kind"]
                _copy(self.out, self.hi, ("components", j), ("components", len(merged)))
                merged.append(entry)
        origin = self.hi.get(("components",)) or self.lo.get(("components",))
        if origin is not None:
            self.out[("components",)] = origin
        return merged


def merge_layers(layers: list[Layer]) -> Merged:
    """Merge preprocessed layers, lowest precedence first (user < system < selected)."""
    if not layers:
        return Merged({})
    first = layers[0]
    merged = Merged(first.data, layer_origins(first), [first.source])
    for layer in layers[1:]:
        kinds = {i: entry["kind"] for i, entry in enumerate(merged.data.get("components", []))}
        merger = _Merger(merged.origins, layer_origins(layer), kinds)
        data = merger.document(merged.data, layer.data)
        merged = Merged(data, merger.out, [*merged.sources, layer.source])
    return merged
