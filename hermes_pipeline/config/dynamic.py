"""Dynamic plugins declared by ``[[plugins.dynamic]]`` records and ``relay-plugin.toml`` manifests (spec 03 §6).

The manifest is validated (structure, compatibility, capabilities, the single load contract) and
the SHA-256 digest of ``source.artifact`` verified **before** any plugin code is imported
(CFG-25). ``kind = "python"`` plugins (CFG-28a) are imported from the verified bytes;
``rust_dynamic`` and ``worker`` plugins need the native runtime and are refused without it
(CFG-28).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import re
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ..contract.versions import PACKAGE_VERSION as __version__
from .diagnostics import Diagnostics
from .errors import ConfigError, NativeRuntimeRequired
from .files import read_config_bytes, read_config_text
from .keypath import format_path
from .loader import ParsedFile, parse_file

MAX_ARTIFACT_BYTES: Final = 256 * 1024 * 1024
"""Largest plugin artifact (a .py file or a wheel) whose digest is checked."""

_DIGEST: Final = re.compile(r"sha256:[0-9a-f]{64}")
_CLAUSE: Final = re.compile(r"\s*(>=|<=|==|!=|>|<|~=)?\s*(\d+(?:\.\d+)*)\s*")
_ENTRYPOINT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_.]*")


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class PluginInfo(_Section):
    id: str
    kind: Literal["rust_dynamic", "worker", "python"]


class Compat(_Section):
    relay: str | None = None
    native_api: str | None = None
    worker_protocol: str | None = None
    hermes_pipeline: str | None = None


class Defaults(_Section):
    enabled: bool = False


class Capabilities(_Section):
    items: list[Literal["plugin_native", "plugin_worker", "config_schema"]] = []


class SchemaRef(_Section):
    path: str


class Source(_Section):
    artifact: str
    manifest_root: str | None = None


class Integrity(_Section):
    sha256: str


class Load(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    library: str | None = None
    symbol: str | None = None
    runtime: Literal["python", "rust"] | None = None
    entrypoint: str | None = None


class Manifest(BaseModel):
    """A ``relay-plugin.toml`` manifest (NeMo Relay manifest v1 plus the ``python`` kind)."""

    model_config = ConfigDict(extra="allow", strict=True)

    manifest_version: Literal[1]
    plugin: PluginInfo
    compat: Compat = Compat()
    defaults: Defaults = Defaults()
    capabilities: Capabilities = Capabilities()
    config_schema: SchemaRef | None = None
    source: Source
    integrity: Integrity
    load: Load = Load()


@dataclass
class DynamicPlugin:
    """One validated dynamic record."""

    id: str
    kind: Literal["rust_dynamic", "worker", "python"]
    manifest_path: Path
    manifest: Manifest
    config: dict[str, Any]
    index: int
    artifact: Path = field(default_factory=Path)


# --------------------------------------------------------------------------- version ranges


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def _pad(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    n = max(len(a), len(b))
    return a + (0,) * (n - len(a)), b + (0,) * (n - len(b))


def version_in_range(version: str, spec: str) -> bool:
    """``True`` if ``version`` satisfies the comma-separated range ``spec`` (``>=0.1,<1.0``).

    Raises ``ValueError`` when ``spec`` is malformed.
    """
    numeric = re.match(r"\d+(?:\.\d+)*", version)
    current = _version(numeric.group(0) if numeric else "0")
    clauses = [c for c in spec.split(",")]
    if not spec.strip() or any(not c.strip() for c in clauses):
        raise ValueError("empty version range")
    for clause in clauses:
        match = _CLAUSE.fullmatch(clause)
        if match is None:
            raise ValueError(f"malformed version clause {clause.strip()!r}")
        op, bound_text = match.group(1) or "==", match.group(2)
        a, b = _pad(current, _version(bound_text))
        ok = {">=": a >= b, "<=": a <= b, ">": a > b, "<": a < b, "==": a == b, "!=": a != b,
              "~=": a >= b and a[: len(_version(bound_text)) - 1] == b[: len(_version(bound_text)) - 1]}[op]
        if not ok:
            return False
    return True


# --------------------------------------------------------------------------- manifests


def _manifest_error(parsed: ParsedFile | None, path: Path, key: tuple[str | int, ...], message: str) -> ConfigError:
    line = parsed.line_for(key) if parsed is not None else None
    return ConfigError(message, path=path, line=line, key=format_path(key) or None, code="pipeline.manifest_invalid")


def read_manifest(path: Path) -> tuple[Manifest, ParsedFile]:
    """Parse and structurally validate one manifest; :class:`ConfigError` on any problem."""
    parsed = parse_file(path, allow_yaml=False)
    try:
        manifest = Manifest.model_validate(parsed.data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        raise _manifest_error(parsed, path, loc, f"invalid manifest: {first['msg']}") from None
    m = manifest

    def need(cond: bool, key: tuple[str, ...], message: str) -> None:
        if not cond:
            raise _manifest_error(parsed, path, key, message)

    need(bool(m.plugin.id.strip()), ("plugin", "id"), "plugin.id must be a non-blank string")
    need(m.defaults.enabled is False, ("defaults", "enabled"), "defaults.enabled must be false")
    need(m.config_schema is None or "config_schema" in m.capabilities.items, ("capabilities", "items"),
         "[config_schema] requires 'config_schema' in capabilities.items")
    need(bool(_DIGEST.fullmatch(m.integrity.sha256)), ("integrity", "sha256"),
         "integrity.sha256 must be 'sha256:' followed by 64 lowercase hex digits")
    load = m.load
    if m.plugin.kind == "python":
        need(m.compat.hermes_pipeline is not None, ("compat", "hermes_pipeline"),
             "a python plugin must declare compat.hermes_pipeline (a version range)")
        need(load.entrypoint is not None and bool(_ENTRYPOINT.fullmatch(load.entrypoint)), ("load", "entrypoint"),
             "a python plugin needs load.entrypoint = 'module:object'")
        need(load.library is None and load.symbol is None and load.runtime is None, ("load",),
             "a python plugin's [load] may only contain 'entrypoint'")
        try:
            compatible = version_in_range(__version__, m.compat.hermes_pipeline or "")
        except ValueError as exc:
            raise _manifest_error(parsed, path, ("compat", "hermes_pipeline"), f"invalid version range: {exc}") \
                from None
        need(compatible, ("compat", "hermes_pipeline"),
             f"plugin {m.plugin.id!r} does not support the installed hermes_pipeline {__version__}")
    elif m.plugin.kind == "rust_dynamic":
        need(m.compat.relay is not None, ("compat", "relay"), "a rust_dynamic plugin must declare compat.relay")
        need(m.compat.native_api == "1", ("compat", "native_api"), "compat.native_api must be \"1\"")
        need(load.library is not None and load.symbol is not None, ("load",),
             "a rust_dynamic plugin needs load.library and load.symbol")
        need(load.runtime is None and load.entrypoint is None, ("load",),
             "a rust_dynamic plugin's [load] may only contain 'library' and 'symbol'")
    else:
        need(m.compat.relay is not None, ("compat", "relay"), "a worker plugin must declare compat.relay")
        need(m.compat.worker_protocol == "grpc-v1", ("compat", "worker_protocol"),
             "compat.worker_protocol must be \"grpc-v1\"")
        need(load.runtime is not None and load.entrypoint is not None, ("load",),
             "a worker plugin needs load.runtime and load.entrypoint")
        need(load.library is None and load.symbol is None, ("load",),
             "a worker plugin's [load] may only contain 'runtime' and 'entrypoint'")
    if m.compat.relay is not None:
        try:
            version_in_range("0", m.compat.relay)
        except ValueError as exc:
            raise _manifest_error(parsed, path, ("compat", "relay"), f"invalid version range: {exc}") from None
    return manifest, parsed


def artifact_path(plugin: DynamicPlugin) -> Path:
    """``source.artifact`` resolved against the manifest's directory."""
    return (plugin.manifest_path.parent / plugin.manifest.source.artifact).resolve()


def verified_bytes(plugin: DynamicPlugin) -> bytes:
    """The artifact's bytes after checking its SHA-256 digest; :class:`ConfigError` on mismatch."""
    path = artifact_path(plugin)
    try:  # a regular file only: an artifact that is a FIFO or a device must not hang the load
        data = read_config_bytes(path, limit=MAX_ARTIFACT_BYTES)
    except ConfigError as exc:
        raise ConfigError(f"source.artifact of plugin {plugin.id!r} {exc.message}", path=plugin.manifest_path,
                          key="source.artifact", code="pipeline.integrity_failed") from None
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    if digest != plugin.manifest.integrity.sha256:
        raise ConfigError(f"integrity check failed for plugin {plugin.id!r}: the SHA-256 digest of source.artifact "
                          "does not match integrity.sha256; nothing was loaded",
                          path=plugin.manifest_path, key="integrity.sha256", code="pipeline.integrity_failed")
    return data


def native_refusal(plugin: DynamicPlugin, reason: str) -> NativeRuntimeRequired:
    """The error for a ``rust_dynamic`` / ``worker`` plugin without the native runtime (CFG-28, CFG-60)."""
    hint = ""
    if plugin.kind == "worker" and plugin.manifest.load.runtime == "python":
        hint = "; a Python worker also needs the Relay-managed environment created by 'nemo-relay plugins add'"
    return NativeRuntimeRequired(
        f"plugin {plugin.id!r} ({plugin.kind}) needs the NeMo Relay native runtime: "
        f"native runtime unavailable: {reason}{hint}",
        path=plugin.manifest_path, key="plugin.kind", code="pipeline.native_required")


def import_python_plugin(plugin: DynamicPlugin) -> Any:
    """Verify the digest, then import ``load.entrypoint`` from the artifact (CFG-28a).

    A ``.py`` artifact is executed from the verified bytes, with its directory on ``sys.path``
    for that import only; a ``.whl`` / ``.zip`` artifact is put on ``sys.path`` for the import.
    """
    data = verified_bytes(plugin)
    artifact = artifact_path(plugin)
    module_name, _, attr = (plugin.manifest.load.entrypoint or "").partition(":")

    def failure(message: str) -> ConfigError:
        return ConfigError(message, path=plugin.manifest_path, key="load.entrypoint",
                           code="pipeline.component_load_failed")

    suffix = artifact.suffix.lower()
    if suffix == ".py":
        if module_name != artifact.stem:
            raise failure(f"load.entrypoint module must be the artifact's module {artifact.stem!r}")
        existing = sys.modules.get(module_name)
        if existing is not None and getattr(existing, "__file__", None) != str(artifact):
            raise failure(f"a different module named {module_name!r} is already imported")
        module = types.ModuleType(module_name)
        module.__file__ = str(artifact)
        module.__spec__ = importlib.util.spec_from_file_location(module_name, artifact)
        sys.modules[module_name] = module
        sys.path.insert(0, str(artifact.parent))
        try:
            exec(compile(data, str(artifact), "exec"), module.__dict__)
        except Exception as exc:
            sys.modules.pop(module_name, None)
            raise failure(f"plugin {plugin.id!r} failed to import: {type(exc).__name__}: {exc}") from None
        finally:
            _remove_path(str(artifact.parent))
        obj: Any = module
    elif suffix in (".whl", ".zip"):
        sys.path.insert(0, str(artifact))
        try:
            obj = importlib.import_module(module_name)
        except Exception as exc:
            raise failure(f"plugin {plugin.id!r} failed to import: {type(exc).__name__}: {exc}") from None
        finally:
            _remove_path(str(artifact))
    else:
        raise failure("source.artifact of a python plugin must be a .py file or a .whl/.zip archive")
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise failure(f"load.entrypoint object {attr!r} not found in module {module_name!r}") from None
    return obj


def _remove_path(entry: str) -> None:
    try:
        sys.path.remove(entry)
    except ValueError:
        pass


def load_config_schema(plugin: DynamicPlugin) -> dict[str, Any] | None:
    """The JSON Schema named by ``[config_schema].path``, or ``None``."""
    ref = plugin.manifest.config_schema
    if ref is None:
        return None
    path = plugin.manifest_path.parent / ref.path
    try:
        schema = json.loads(read_config_text(path, code="pipeline.manifest_invalid"))
    except ConfigError:
        raise
    except ValueError as exc:
        raise ConfigError(f"config_schema of plugin {plugin.id!r} cannot be read as JSON ({type(exc).__name__})",
                          path=path, code="pipeline.manifest_invalid") from None
    if not isinstance(schema, dict):
        raise ConfigError("config_schema must be a JSON object", path=path, code="pipeline.manifest_invalid")
    return schema


def plan_dynamic(records: list[Any], selected: Path, parsed: ParsedFile, component_kinds: set[str],
                 diagnostics: Diagnostics) -> list[DynamicPlugin]:
    """Validate ``[[plugins.dynamic]]`` records of the selected file, in file order (CFG-22..CFG-25)."""
    from .components import json_problems

    plans: list[DynamicPlugin] = []
    seen: dict[str, int] = {}
    for index, record in enumerate(records):
        key = ("plugins", "dynamic", index)

        def fail(message: str, sub: tuple[str | int, ...] = ()) -> ConfigError:
            return ConfigError(message, path=selected, line=parsed.line_for((*key, *sub)),
                               key=format_path((*key, *sub)), code="pipeline.dynamic_invalid")

        if not isinstance(record, dict):
            raise fail("each [[plugins.dynamic]] record must be a table")
        extra = sorted(set(record) - {"manifest", "config"})
        if extra:
            raise fail(f"unexpected field(s) {', '.join(extra)}; a record has only 'manifest' and 'config'",
                       (extra[0],))
        manifest_ref = record.get("manifest")
        if not isinstance(manifest_ref, str) or not manifest_ref.strip():
            raise fail("'manifest' is required and must be a non-blank string", ("manifest",))
        config = record.get("config", {})
        if not isinstance(config, dict):
            raise fail("'config' must be a table", ("config",))
        problems = json_problems(config, ("config",))
        if problems:
            raise fail(f"config must be JSON-compatible: {problems[0][1]}", problems[0][0])
        manifest_path = Path(manifest_ref).expanduser()
        if not manifest_path.is_absolute():
            manifest_path = selected.parent / manifest_path
        if not manifest_path.is_file():
            raise fail("manifest file not found", ("manifest",))
        manifest, _ = read_manifest(manifest_path)
        plugin_id = manifest.plugin.id
        if plugin_id in seen:
            raise fail(f"plugin id {plugin_id!r} is declared by two records (#{seen[plugin_id]} and #{index})")
        if plugin_id in component_kinds:
            raise fail(f"plugin id {plugin_id!r} is also used as a [[components]] kind")
        seen[plugin_id] = index
        plan = DynamicPlugin(plugin_id, manifest.plugin.kind, manifest_path, manifest, config, index)
        plan.artifact = artifact_path(plan)
        verified_bytes(plan)
        plans.append(plan)
    return plans
