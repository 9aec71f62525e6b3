"""``hermes-pipeline config``: validate, explain, init, and get/set profile ``config.yaml`` keys.

Exit codes: 0 success, 1 invalid input or configuration, 2 usage. Errors are one line on
stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from ..config.diagnostics import Diagnostics
from ..config.discovery import SELECTOR_ENV, PipelineSettings, legacy_env_names, plan_layers
from ..config.errors import ConfigError
from ..config.keypath import KeyPath, format_path
from ..config.merge import leaf_paths
from ..config.pipeline import LoadedPipeline, load_pipeline
from .config_report import explain_json, problem_lines, strict_problems, validate_json

PROG: Final = "hermes-pipeline config"
REDACTED_PARENTS: Final = frozenset({"headers"})
REDACTED_KEYS: Final = frozenset({"access_key_id"})


def _error(command: str, message: str, code: int = 1) -> int:
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)
    print(f"{PROG} {command}: error: {text}", file=sys.stderr)
    return code


def _guard(command: str, fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except ConfigError as exc:
            return _error(command, str(exc))
        except OSError as exc:
            return _error(command, f"{exc.strerror or type(exc).__name__}: {exc.filename or ''}".rstrip(": "))
        except Exception as exc:  # never a traceback on the command line
            return _error(command, f"unexpected {type(exc).__name__}: {exc}")
    return run


def _target(args: argparse.Namespace, settings: PipelineSettings) -> Path | None:
    if getattr(args, "file", None):
        return Path(args.file).expanduser().absolute()
    return settings.selected_path()


def _load(target: Path, settings: PipelineSettings, discover: bool) -> tuple[LoadedPipeline | None, Diagnostics,
                                                                         ConfigError | None]:
    diagnostics = Diagnostics(log=False)
    try:
        return load_pipeline(settings, selected=target, diagnostics=diagnostics, discover=discover), diagnostics, None
    except ConfigError as exc:
        return None, diagnostics, exc


# --------------------------------------------------------------------------- validate


def _validate(args: argparse.Namespace) -> int:
    settings = PipelineSettings()
    target = _target(args, settings)
    if target is None:
        return _error("validate", f"no FILE given and {SELECTOR_ENV} is not set", 2)
    loaded, diagnostics, error = _load(target, settings, not args.no_discovery)
    strict = strict_problems(loaded, diagnostics) if args.strict and error is None else []
    # A file that would wire nothing *because* a component of it was skipped as unknown (a misspelt kind)
    # fails even without --strict: telemetry never goes missing with exit status 0.
    lost = (error is None and loaded is not None and bool(loaded.nothing_exported())
            and any(d.level == "warning" and d.code.endswith("unknown_component") for d in diagnostics.items))
    if args.json:  # same checks, same exit code; the findings as one JSON document on stdout
        print(json.dumps(validate_json(target, loaded, diagnostics, error), indent=2, ensure_ascii=False))
        return 0 if error is None and not strict and not lost else 1
    notes, errors = problem_lines(diagnostics, error)
    for line in notes:
        print(line, file=sys.stderr)
    for line in errors:  # every problem, one line each, not only the first
        _error("validate", f"invalid: {line}")
    if error is not None:
        return 1
    assert loaded is not None
    kinds = ", ".join(f"{c.kind}{'' if c.enabled else ' (disabled)'}" for c in loaded.components) or "none"
    print(f"{'exports nothing' if lost else 'valid'}: {loaded.selected} (layers: {len(loaded.sources)}; components: {kinds}; "
          f"dynamic plugins: {len(loaded.dynamic)})")
    nothing = loaded.nothing_exported()
    if nothing:
        print(f"activation ACTIVE, but nothing is exported: {nothing}")
    if lost and not strict:
        return _error("validate", "invalid: nothing would be exported because a component of unknown kind was skipped "
                                  "(see the warning above); fix the kind, or remove the component")
    if strict:
        return _error("validate", f"--strict: {'; '.join(strict)}")
    return 0


# --------------------------------------------------------------------------- explain


def _render(path: KeyPath, value: Any) -> str:
    if (len(path) >= 2 and path[-2] in REDACTED_PARENTS) or (path and path[-1] in REDACTED_KEYS):
        return '"<redacted>"'
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _explain(args: argparse.Namespace) -> int:
    settings = PipelineSettings()
    target = _target(args, settings)
    legacy = legacy_env_names()
    if getattr(args, "json", False):
        return _explain_json(args, settings, target, legacy)
    if target is None:
        print(f"{SELECTOR_ENV} is not set: pipeline processing is disabled "
              "(no discovery, no layering, no components, no exporters from plugins.toml).")
        if legacy:
            print(f"legacy variables present and ignored: {', '.join(legacy)}")
        return 0
    how = "FILE argument" if getattr(args, "file", None) else f"{SELECTOR_ENV}={settings.selector()}"
    print(f"selected file: {target}  (selected by {how})")
    print("layers, lowest precedence first (user < system < selected):")
    for candidate in plan_layers(settings, target):
        source = how if candidate.role == "selected" else candidate.located_by
        print(f"  {candidate.role:<8} {candidate.status:<9} {candidate.path}  (from {source})")
    if legacy:
        print(f"legacy variables present and ignored: {', '.join(legacy)}")
    loaded, diagnostics, error = _load(target, settings, True)
    if error is not None or loaded is None:
        for diag in diagnostics.items:
            print(str(diag), file=sys.stderr)
        return _error("explain", f"invalid: {error}")
    print("effective configuration (key = value  # source):")
    for path in leaf_paths(loaded.merged.data):
        origin = loaded.merged.origin(path)
        where = f"{origin.source}:{origin.line}" if origin and origin.line else (origin.source if origin else "?")
        print(f"  {format_path(path)} = {_render(path, _value(loaded.merged.data, path))}  # {where}")
    print("components (activation order):")
    for comp in loaded.components:
        resolved = comp.resolved.origin if comp.resolved else "unknown (skipped)"
        state = "enabled" if comp.enabled else "disabled"
        print(f"  {comp.kind:<20} {state:<9} {resolved}")
    for dyn in loaded.dynamic:
        print(f"  {dyn.id:<20} dynamic   {dyn.kind} ({dyn.manifest_path})")
    locations = _output_locations(loaded)
    if locations:
        print("output locations (relative paths resolve against the working directory; (default): no file sets "
              "the key, so the profile's directory applies):")
        for path, value, is_default in locations:
            origin = loaded.merged.origin(path)
            where = "(default)" if is_default else (f"{origin.source}:{origin.line}" if origin and origin.line
                                                    else origin.source if origin else "?")
            print(f"  {format_path(path)} = {json.dumps(value, ensure_ascii=False)}  # {where}")
    if diagnostics.items:
        print("diagnostics:")
        for diag in diagnostics.items:
            print(f"  {diag}")
    return 0


def _output_locations(loaded: LoadedPipeline) -> list[tuple[KeyPath, str, bool]]:
    """Where the enabled components write files, from each component class's optional
    ``output_locations(config, base_dir=, default_dir=)`` (the sinks state their own defaults)."""
    from ..export.paths import default_output_directory

    default_dir = default_output_directory()
    out: list[tuple[KeyPath, str, bool]] = []
    for comp in loaded.components:
        locate = getattr(comp.resolved.obj, "output_locations", None) if comp.enabled and comp.resolved else None
        if callable(locate):
            for path, value, is_default in locate(comp.config, base_dir=Path.cwd(), default_dir=default_dir):
                out.append((("components", comp.index, "config", *path), value, is_default))
    return out


def _explain_json(args: argparse.Namespace, settings: PipelineSettings, target: Path | None,
                  legacy: list[str]) -> int:
    """``config explain --json``: the merged result, each key with its file:line; exit codes as for text."""
    if target is None:
        print(json.dumps(explain_json(None, None, [], legacy, None, Diagnostics(log=False), None), indent=2))
        return 0
    how = "FILE argument" if getattr(args, "file", None) else f"{SELECTOR_ENV}={settings.selector()}"
    loaded, diagnostics, error = _load(target, settings, True)
    doc = explain_json(target, how, plan_layers(settings, target), legacy, loaded, diagnostics, error)
    print(json.dumps(doc, indent=2, ensure_ascii=False))
    return 0 if error is None else 1


def _value(data: Any, path: KeyPath) -> Any:
    for seg in path:
        data = data[seg]
    return data


# --------------------------------------------------------------------------- init


def _init(args: argparse.Namespace) -> int:
    from ..config.starter import starter_text
    from ..config.templates import find_template, templates

    if args.list_templates:
        for item in templates():
            print(f"{item.name:<18} {item.summary}")
        print("write one with: hermes-pipeline config init --template NAME [PATH]")
        return 0
    template = find_template(args.template) if args.template else None
    default = "plugins.yaml" if template is not None and not template.filename.endswith(".toml") else "plugins.toml"
    path = Path(args.path or default).expanduser().absolute()
    if path.exists() and not args.force:
        return _error("init", f"{path} already exists; pass --force to overwrite it")
    if path.exists() and path.is_dir():
        return _error("init", f"{path} is a directory")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(template.text() if template is not None else starter_text(), encoding="utf-8")
    print(f"wrote {path}")
    unset = [name for name in (template.environment_variables() if template is not None else [])
             if not os.environ.get(name, "").strip()]
    if unset:
        print(f"set in the environment first (never in the file): {', '.join(unset)}")
    print(f"select it with: export {SELECTOR_ENV}={path}")
    return 0


# --------------------------------------------------------------------------- get / set


def _home(args: argparse.Namespace) -> Path:
    if args.home:
        return Path(args.home).expanduser()
    return PipelineSettings().hermes_home_path()


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _set(args: argparse.Namespace) -> int:
    from ..config.profile_config import KNOWN_KEYS, clamp_note
    from ..config.profile_edit import parse_scalar, set_value

    from ..config.alert_settings import TABLE_KEYS as ALERT_TABLE_KEYS
    from ..config.observability_settings import TABLE_KEYS

    tables = args.key in TABLE_KEYS or args.key in ALERT_TABLE_KEYS
    value = parse_scalar(args.value, tables=tables)  # table keys take a YAML flow mapping or list
    path = set_value(_home(args), args.key, value, force=args.force)
    print(f"set {args.key} = {_show(value)} in {path}")
    note = clamp_note(args.key, value)
    if note:
        print(f"{PROG} set: note: {note}", file=sys.stderr)
    if args.key not in KNOWN_KEYS:
        print(f"{PROG} set: warning: {args.key} written with --force; this version does not read it",
              file=sys.stderr)
    return 0


def _get(args: argparse.Namespace) -> int:
    from ..config.profile_edit import get_value

    home = _home(args)
    present, value = get_value(home, args.key, force=args.force)
    if not present:
        return _error("get", f"{args.key} is not set in {home / 'config.yaml'}")
    print(_show(value))
    return 0


def add_parser(subparsers: Any) -> None:
    """Add the ``config`` command (and its subcommands) to ``subparsers``."""
    config = subparsers.add_parser(
        "config", help="validate and explain the pipeline file; edit profile config.yaml",
        description="Work with the Relay-compatible pipeline file selected by "
                    f"{SELECTOR_ENV} and with a profile's config.yaml.")
    config.set_defaults(func=lambda _args: (config.print_help(), 2)[1])
    sub = config.add_subparsers(dest="config_command", metavar="SUBCOMMAND")
    validate = sub.add_parser("validate", help="validate a pipeline file (exit 0 valid, 1 invalid or nothing wired because a kind is unknown, 2 usage)")
    validate.add_argument("file", nargs="?", metavar="FILE", help=f"the file to validate (default: ${SELECTOR_ENV})")
    validate.add_argument("--no-discovery", action="store_true",
                          help="validate FILE alone, without layering the user and system files")
    validate.add_argument("--strict", action="store_true",
                          help="also exit 1 when something the file asks for is ignored or skipped (an unknown "
                               "kind or key, a dropped value, a skipped destination) or nothing is exported")
    validate.add_argument("--json", action="store_true",
                          help="print the findings as JSON (file, line, key, message, severity, suggestion); "
                               "same exit codes")
    validate.set_defaults(func=_guard("validate", _validate))
    explain = sub.add_parser("explain", help="show the effective merged configuration and where each key came from")
    explain.add_argument("file", nargs="?", metavar="FILE", help=f"explain FILE as if {SELECTOR_ENV} selected it")
    explain.add_argument("--json", action="store_true",
                         help="print the merged result as JSON, every key with the file and line it came from")
    explain.set_defaults(func=_guard("explain", _explain))
    init = sub.add_parser("init", help="write a starter plugins.toml, or one of the shipped examples",
                          description="Write a commented starter pipeline file, or with --template one of the "
                                      "examples shipped with the package (the repository's pipelines/ files: "
                                      "local files, an OpenTelemetry collector, Langfuse, middleware, ...).")
    init.add_argument("path", nargs="?", default=None, metavar="PATH",
                      help="where to write it (default: ./plugins.toml, ./plugins.yaml for a YAML template)")
    init.add_argument("--template", metavar="NAME",
                      help="write the shipped example NAME instead of the starter (see --list-templates)")
    init.add_argument("--list-templates", action="store_true", help="list the shipped examples and exit")
    init.add_argument("--force", action="store_true", help="overwrite an existing file")
    init.set_defaults(func=_guard("init", _init))
    for name, helptext, func in (("set", "set KEY to VALUE (a YAML scalar) in the profile config.yaml", _set),
                                 ("get", "print KEY from the profile config.yaml", _get)):
        cmd = sub.add_parser(name, help=helptext)
        cmd.add_argument("key", metavar="KEY", help="dotted key, e.g. telemetry.shared_metrics.enabled")
        if name == "set":
            cmd.add_argument("value", metavar="VALUE", help="YAML scalar: true, 5, 'text'")
        cmd.add_argument("--home", metavar="DIR", help="profile directory (default: $HERMES_HOME, else ~/.hermes)")
        cmd.add_argument("--force", action="store_true",
                         help="accept a KEY this version does not know (a forward-compatible key); without it "
                              "unknown keys are refused with the closest known key")
        cmd.set_defaults(func=_guard(name, func))


__all__ = ["add_parser"]
