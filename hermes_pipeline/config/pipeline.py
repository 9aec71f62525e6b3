"""Loading a pipeline: steps 2–7 of spec 03 CFG-47, without activating anything.

:func:`load_pipeline` parses the selected file, discovers and preprocesses the user and system
files, merges them with provenance, resolves every kind, validates every component's config
(disabled ones included) and every dynamic record. Any failure raises :class:`ConfigError`;
warnings stay in the returned :class:`LoadedPipeline`'s diagnostics.

It is the one function that decides validity: ``config validate`` and process activation both
call it, so what validate accepts is what activation runs. Problems are collected rather than
raised one at a time (every one is in the diagnostics; the raised error is the first, with a count
of the rest), and for each enabled component whose class offers ``check_activation(config, vctx)``
(a hermes_pipeline extension) the consequences of activation are checked too: for the
``observability`` component, the entries its sinks would skip and any enabled section that would
be left without a destination.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .components import ResolvedKind, apply_drops, available_kinds, resolve_kind, validate_config
from .diagnostics import Diagnostics
from .discovery import Candidate, PipelineSettings, plan_layers
from .document import read_policy, validate_document
from .errors import ConfigError, NativeRuntimeRequired
from .keypath import KeyPath
from .layers import Layer, preprocess
from .loader import parse_file
from .merge import Merged, merge_layers
from .models import PipelineDocument
from .policy import DEFAULT_POLICY, Policy, ValidationContext, component_policy, fixed_locator
from .suggest import did_you_mean, hint

if TYPE_CHECKING:
    from .dynamic import DynamicPlugin

NATIVE_UNAVAILABLE = "the NeMo Relay native runtime is not installed (optional extra; not yet supported)"
"""The degraded-mode reason of this build (spec 03 §12): there is no native bridge yet."""


@dataclass
class PlannedComponent:
    """One merged component after resolution and validation."""

    kind: str
    index: int
    enabled: bool
    config: dict[str, Any]
    policy: Policy
    resolved: ResolvedKind | None
    """``None`` for an unknown kind that the policy let through (it is skipped)."""


@dataclass
class LoadedPipeline:
    """A validated, merged pipeline, ready to activate."""

    selected: Path
    candidates: list[Candidate]
    merged: Merged
    policy: Policy
    document: PipelineDocument
    components: list[PlannedComponent] = field(default_factory=list)
    dynamic: list[DynamicPlugin] = field(default_factory=list)
    diagnostics: Diagnostics = field(default_factory=Diagnostics)

    @property
    def sources(self) -> list[str]:
        """The layered files, lowest precedence first."""
        return list(self.merged.sources)

    def provenance(self) -> dict[str, str]:
        """Dotted key path → the file each effective value came from."""
        return self.merged.provenance()

    def nothing_exported(self) -> str | None:
        """Why activating this pipeline would export nothing and register no middleware, or ``None``.

        A component counts as doing something unless its class offers ``describe_activation(config)``
        (a hermes_pipeline extension) and that returns an empty list; every dynamic plugin counts.
        """
        reasons: list[str] = []
        for comp in self.components:
            if comp.resolved is None:
                reasons.append(f"component kind {comp.kind!r} is unknown and was skipped")
            elif not comp.enabled:
                reasons.append(f"component {comp.kind!r} is disabled")
            else:
                describe = getattr(comp.resolved.obj, "describe_activation", None)
                if not callable(describe) or describe(comp.config):
                    return None
                reasons.append(f"component {comp.kind!r} has nothing enabled")
        if self.dynamic:
            return None
        if not self.components:
            reasons.append("the file declares no [[components]] and no [[plugins.dynamic]]")
        return "; ".join(reasons)

    def wiring(self) -> list[str]:
        """What activation wires, one short text per enabled component (for ``config validate``)."""
        out: list[str] = []
        for comp in self.components:
            if comp.enabled and comp.resolved is not None:
                describe = getattr(comp.resolved.obj, "describe_activation", None)
                parts = describe(comp.config) if callable(describe) else []
                out.append(f"{comp.kind} ({', '.join(parts)})" if parts else comp.kind)
        out += [f"{d.id} (dynamic {d.kind} plugin)" for d in self.dynamic]
        return out


def _remap(merged: Merged, base: KeyPath, removed: list[tuple[KeyPath, int]]) -> None:
    for list_path, index in removed:
        prefix = (*base, *list_path)
        n = len(prefix)
        remapped = {}
        for path, origin in merged.origins.items():
            position = path[n] if path[:n] == prefix and len(path) > n else None
            if isinstance(position, int):
                if position == index:
                    continue
                if position > index:
                    path = (*prefix, position - 1, *path[n + 1:])
            remapped[path] = origin
        merged.origins = remapped


def load_layers(settings: PipelineSettings, selected: Path, diagnostics: Diagnostics, *,
                discover: bool = True) -> tuple[list[Candidate], list[Layer], Layer]:
    """Parse and preprocess the selected file and the discovered files (CFG-47 steps 2–3)."""
    parsed = parse_file(selected)
    selected_layer = preprocess(parsed, "selected", diagnostics)
    candidates = plan_layers(settings, selected, discover=discover)
    layers: list[Layer] = []
    for candidate in candidates:
        if candidate.status != "layered":
            continue
        if candidate.role == "selected":
            layers.append(selected_layer)
            continue
        layer = preprocess(parse_file(candidate.path, allow_yaml=False), candidate.role, diagnostics)
        layers.append(layer)
        diagnostics.warning("plugin.configuration_inherited",
                            f"configuration inherited from the {candidate.role} file {candidate.path}",
                            source=str(candidate.path))
    return candidates, layers, selected_layer


def load_pipeline(
    settings: PipelineSettings | None = None,
    *,
    selected: Path | None = None,
    diagnostics: Diagnostics | None = None,
    discover: bool = True,
    cwd: Path | None = None,
) -> LoadedPipeline:
    """Load, layer and validate the pipeline selected by ``settings`` (or the explicit ``selected`` file).

    Imports only the component implementations the document names (CFG-80); dynamic Python
    plugins are verified but not imported. Raises :class:`ConfigError` on any load failure.
    """
    settings = settings or PipelineSettings()
    diagnostics = diagnostics if diagnostics is not None else Diagnostics()
    target = selected if selected is not None else settings.selected_path(cwd)
    if target is None:
        raise ConfigError("no pipeline file selected: HERMES_NEMO_RELAY_PLUGINS_TOML is not set",
                          code="pipeline.not_selected")
    target = target if target.is_absolute() else (cwd or Path.cwd()) / target
    candidates, layers, selected_layer = load_layers(settings, target, diagnostics, discover=discover)
    merged = merge_layers(layers)
    try:
        policy = read_policy(merged, diagnostics)
    except ConfigError as exc:
        diagnostics.fail(exc)
        policy = DEFAULT_POLICY
    try:
        validate_document(merged, policy, diagnostics)
    except ConfigError as exc:
        diagnostics.fail(exc)
    components = _plan_components(merged, policy, diagnostics)
    _report_reenabled(layers, components, diagnostics)
    kinds = {c.kind for c in components}
    raw_plugins = merged.data.get("plugins")
    plugins: dict[str, Any] = raw_plugins if isinstance(raw_plugins, dict) else {}
    raw_dynamic = plugins.get("dynamic", [])
    dynamic: list[DynamicPlugin] = []
    if isinstance(raw_dynamic, list) and raw_dynamic:
        # the manifest models are built only for a file that has [[plugins.dynamic]] records
        from .dynamic import plan_dynamic

        try:
            dynamic = plan_dynamic(list(raw_dynamic), target, selected_layer.parsed, kinds, diagnostics)
        except ConfigError as exc:
            diagnostics.fail(exc)
    for plan in dynamic:
        try:
            if plan.kind != "python":
                from .dynamic import native_refusal

                raise native_refusal(plan, NATIVE_UNAVAILABLE)
            _check_dynamic_schema(plan, diagnostics)
        except ConfigError as exc:
            diagnostics.fail(exc, component=plan.id)
    diagnostics.raise_if_failed()
    document = PipelineDocument.from_data(merged.data, path=target)
    return LoadedPipeline(target, candidates, merged, policy, document, components, dynamic, diagnostics)


def _plan_components(merged: Merged, policy: Policy, diagnostics: Diagnostics) -> list[PlannedComponent]:
    planned: list[PlannedComponent] = []
    for index, entry in enumerate(merged.data.get("components", [])):
        kind = entry["kind"]
        base: KeyPath = ("components", index)
        where = merged.locate((*base, "kind"))
        try:
            resolved = resolve_kind(kind, diagnostics, where=where, key=f"components[{index}].kind")
        except ConfigError as exc:  # an ambiguous or broken implementation: recorded, the next one is checked
            diagnostics.fail(exc, component=kind)
            continue
        enabled = entry.get("enabled", True) is not False
        config = entry.get("config", {})
        if not isinstance(config, dict):  # already reported by validate_document; validate the rest
            config = entry["config"] = {}
        own = config.get("policy") if isinstance(config.get("policy"), dict) else None
        effective = component_policy(policy, own)
        if resolved is None:
            _unknown(kind, policy, diagnostics, where, index)
            planned.append(PlannedComponent(kind, index, enabled, config, effective, None))
            continue
        vctx = ValidationContext(component=kind, policy=effective, diagnostics=diagnostics,
                                 locate=merged.locator((*base, "config")),
                                 key_prefix=f"components[{index}].config")
        cleaned = _validated(resolved.obj, config, vctx, merged, (*base, "config"), activation=enabled)
        entry["config"] = cleaned
        if enabled and getattr(resolved.obj, "requires_native", False) is True:
            diagnostics.fail(NativeRuntimeRequired(
                f"component {kind!r} requires the native runtime: native runtime unavailable: {NATIVE_UNAVAILABLE}",
                path=where[0], line=where[1], key=f"components[{index}]", code="pipeline.native_required"),
                component=kind)
        planned.append(PlannedComponent(kind, index, enabled, cleaned, effective, resolved))
    return planned


def _validated(obj: Any, config: dict[str, Any], vctx: ValidationContext, merged: Merged,
               base: KeyPath, *, activation: bool) -> dict[str, Any]:
    cleaned, removed = validate_config(obj, config, vctx)
    check = getattr(obj, "check_activation", None)
    if activation and callable(check):  # what activation would skip or refuse, without activating
        vctx.drops.clear()  # already applied to ``cleaned`` by validate_config
        try:
            check(copy.deepcopy(cleaned), vctx)
        except Exception as exc:
            vctx.error((), f"check_activation() raised {type(exc).__name__}: {exc}", code="pipeline.component_invalid")
        removed += apply_drops(cleaned, vctx.drops)
        vctx.drops.clear()
    _remap(merged, base, removed)
    return cleaned


def _unknown(kind: str, policy: Policy, diagnostics: Diagnostics, where: tuple[str | None, int | None],
             index: int) -> None:
    kinds = available_kinds()
    suggestion = did_you_mean(kind, kinds)
    message = f"unknown component kind {kind!r}{hint(suggestion)}; available kinds: {', '.join(kinds) or 'none'}"
    level = policy.unknown_component
    key = f"components[{index}].kind"
    if level == "error":
        diagnostics.fail(ConfigError(message, path=where[0], line=where[1], key=key,
                                     code="plugin.unknown_component", suggestion=suggestion), component=kind)
    elif level == "warn":
        diagnostics.warning("plugin.unknown_component", message + "; the component is skipped", component=kind,
                            source=where[0], line=where[1], key=key, suggestion=suggestion)


def _report_reenabled(layers: list[Layer], components: list[PlannedComponent], diagnostics: Diagnostics) -> None:
    enabled = {c.kind for c in components if c.enabled}
    for layer in layers:
        for kind in layer.disabled_kinds:
            if kind in enabled:
                diagnostics.warning("plugin.component_reenabled",
                                    f"component {kind!r} is enabled although {layer.source} declares it with "
                                    "enabled = false", component=kind, source=layer.source)


def _check_dynamic_schema(plan: DynamicPlugin, diagnostics: Diagnostics) -> None:
    from .components import check_schema
    from .dynamic import load_config_schema

    schema = load_config_schema(plan)
    if schema is None:
        return
    strict = Policy(unknown_component="error", unknown_field="error", unsupported_value="error")
    vctx = ValidationContext(component=plan.id, policy=strict, diagnostics=diagnostics,
                             locate=fixed_locator(str(plan.manifest_path)),
                             key_prefix=f"plugins.dynamic[{plan.index}].config")
    check_schema(schema, plan.config, vctx)
