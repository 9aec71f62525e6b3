"""Generate ``docs/configuration.md``: every key of the pipeline file and of the profile ``config.yaml``.

    python -m hermes_pipeline.cli.docgen            # print the page
    python -m hermes_pipeline.cli.docgen --write    # write docs/configuration.md of this checkout
    python scripts/regenerate.py                    # the same, plus the packaged example copies

Key names come from the tables the validator itself uses, each key's type from its checker (the text
the checker gives for a wrong value), defaults from the sinks' configuration dataclasses and the
pipeline document's records where they hold a plain value, and the effect from :mod:`.config_reference`.
:func:`undocumented` lists keys of the tables without an entry there (and entries naming no key); a
test requires it to be empty and the checked-in page to equal :func:`render`.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from . import config_reference as R

Check = Callable[[Any], "str | None"]
TITLE: Final = "# Configuration reference"


class _Unusable:
    """A value no checker accepts: what a checker says about it names the expected type."""


@dataclass(frozen=True)
class Section:
    """One table of the page: a heading, the key prefix shown, the keys with their types, entries and defaults."""

    title: str
    prefix: str
    types: Mapping[str, str]
    entries: Mapping[str, R.Entry]
    defaults: Mapping[str, Any] = field(default_factory=dict)
    intro: str = ""


def check_type(check: Check) -> str:
    """The type a checker expects, from its message for a value it cannot accept (``expected a boolean``)."""
    message = check(_Unusable()) or "any value"
    return message.removeprefix("expected ").strip()


def _annotation(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(annotation))
    if origin in (types.UnionType, typing.Union):
        return " or ".join(_annotation(a) for a in typing.get_args(annotation) if a is not type(None))
    base = origin or annotation
    names = {bool: "a boolean", str: "a string", int: "an integer", list: "an array of tables", dict: "a table"}
    if base in names:
        return names[base]
    return "a table" if isinstance(base, type) else str(annotation)


def model_types(model: Any) -> dict[str, str]:
    """Key → type text of a record's (dataclass's) fields."""
    hints = typing.get_type_hints(model)
    return {f.name: _annotation(hints[f.name]) for f in dataclasses.fields(model)}


def model_defaults(model: Any) -> dict[str, Any]:
    """Key → plain default of a record's (dataclass's) fields (factories left out)."""
    return {f.name: f.default for f in dataclasses.fields(model)
            if f.default is not dataclasses.MISSING and f.default_factory is dataclasses.MISSING}


def dataclass_defaults(cls: Any, rename: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Key → plain default of a configuration dataclass (``rename`` maps a field to its key)."""
    out: dict[str, Any] = {}
    for item in dataclasses.fields(cls):
        if item.default is not dataclasses.MISSING:
            out[(rename or {}).get(item.name, item.name)] = item.default
    return out


def render_default(value: Any) -> str:
    """A default as it would be written in TOML (``none`` for no value)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple | list):
        return "[" + ", ".join(render_default(v) for v in value) + "]"
    return str(value)


def sections() -> list[Section]:
    """Every table of the page, in order."""
    from ..components import observability_keys as K
    from ..components.request_defaults import LLM_KEYS, POLICY_KEYS
    from ..config import models
    from ..config.policy import Policy
    from ..config.profile_config import DEFAULTS, KNOWN_KEYS
    from ..sinks.otel import config as otel_config
    from ..sinks.atif import config as atif_config
    from ..sinks.atof import config as atof_config

    def checks(table: Mapping[str, Check]) -> dict[str, str]:
        return {key: check_type(check) for key, check in table.items()}

    endpoint = dataclass_defaults(otel_config.TraceEndpoint)
    llm = {key: (None, R.REQUEST_LLM_EFFECT.format(key=key)) for key in LLM_KEYS}
    return [
        Section("Top level", "", model_types(models.PipelineDocument), R.DOCUMENT),
        Section("`[policy]`", "policy.", model_types(Policy), R.POLICY, model_defaults(Policy),
                intro="Actions: `ignore` drops silently (the key's default applies), `warn` drops with a warning, "
                      "`error` fails the load."),
        Section("`[[components]]`", "components[].", model_types(models.ComponentEntry), R.COMPONENT,
                model_defaults(models.ComponentEntry)),
        Section("`[plugins]`", "plugins.", model_types(models.PluginsTable), R.PLUGINS),
        Section("`[[plugins.dynamic]]`", "plugins.dynamic[].", model_types(models.DynamicRecord), R.DYNAMIC),
        Section("`observability`: `[components.config]`", "", checks(K.TOP), R.OBSERVABILITY),
        Section("`observability`: `policy`", "policy.", checks(K.POLICY), R.COMPONENT_POLICY),
        Section("`observability`: `atof`", "atof.", checks(atof_config.KEYS), R.ATOF, dataclass_defaults(atof_config.AtofConfig),
                intro="The removed version-1 keys `atof.output_directory`, `filename`, `mode` and `endpoints` are "
                      "always refused; declare `[[components.config.atof.sinks]]` instead."),
        Section("`observability`: `atof.sinks[]` with `type = \"file\"`", "atof.sinks[].", checks(atof_config.FILE_SINK),
                R.ATOF_FILE, dataclass_defaults(atof_config.FileSinkConfig)),
        Section("`observability`: `atof.sinks[]` with `type = \"stream\"`", "atof.sinks[].", checks(atof_config.STREAM_SINK),
                R.ATOF_STREAM, dataclass_defaults(atof_config.StreamSinkConfig)),
        Section("`observability`: `atif`", "atif.", checks(atif_config.KEYS), R.ATIF, dataclass_defaults(atif_config.AtifConfig)),
        Section("`observability`: `atif.storage[]` with `type = \"s3\"`", "atif.storage[].", checks(atif_config.S3_STORAGE),
                R.ATIF_S3),
        Section("`observability`: `atif.storage[]` with `type = \"http\"`", "atif.storage[].",
                checks(atif_config.HTTP_STORAGE), R.ATIF_HTTP, dataclass_defaults(atif_config.HttpStorageConfig)),
        Section("`observability`: `opentelemetry`", "opentelemetry.", checks(otel_config.KEYS), R.OTEL,
                dataclass_defaults(otel_config.OtelConfig)),
        Section("`observability`: `opentelemetry.endpoints[]` (trace endpoints, Langfuse included)",
                "opentelemetry.endpoints[].", checks(otel_config.TRACE_ENDPOINT), R.TRACE_ENDPOINT, endpoint,
                intro="Langfuse: `type = \"gen_ai\"`, `endpoint = \"<host>/api/public/otel/v1/traces\"`, "
                      "`basic_auth_env = {username = \"LANGFUSE_PUBLIC_KEY\", password = \"LANGFUSE_SECRET_KEY\"}` "
                      "(`hermes-pipeline config init --template langfuse`)."),
        Section("`observability`: `opentelemetry.logs`", "opentelemetry.logs.", checks(otel_config.LOGS), R.LOGS),
        Section("`observability`: `opentelemetry.metrics`", "opentelemetry.metrics.", checks(otel_config.METRICS), R.METRICS),
        Section("`observability`: `opentelemetry.logs.endpoints[]` and `metrics.endpoints[]`", "<signal>.endpoints[].",
                checks(otel_config.SIGNAL_ENDPOINT), R.SIGNAL_ENDPOINT, endpoint),
        Section("`observability`: `opentelemetry.file_sinks[]`", "opentelemetry.file_sinks[].",
                checks(otel_config.FILE_SINK), R.OTEL_FILE_SINK),
        Section("`request_defaults`: `[components.config]`", "", {"llm": "a table", "tools": "a table",
                                                                   "policy": "a table"}, R.REQUEST_DEFAULTS),
        Section("`request_defaults`: `llm`", "llm.", checks(LLM_KEYS), {k: ("none", e) for k, (_, e) in llm.items()}),
        Section("`request_defaults`: `policy`", "policy.", checks(POLICY_KEYS), R.COMPONENT_POLICY),
        Section("Profile `$HERMES_HOME/config.yaml`", "", checks(KNOWN_KEYS), R.PROFILE, DEFAULTS,
                intro="Per profile, independent of the pipeline file. Edit with `hermes-pipeline config set KEY "
                      "VALUE` (comments and key order are kept)."),
    ]


def undocumented() -> list[str]:
    """Keys of the tables without an entry in :mod:`.config_reference`, entries naming no key, and keys whose
    default is known neither from code nor from the entry; empty when the page is complete."""
    problems = []
    for section in sections():
        for key in section.types:
            if key not in section.entries:
                problems.append(f"{section.title}: {section.prefix}{key} has no entry in config_reference")
            elif section.entries[key][0] is None and key not in section.defaults:
                problems.append(f"{section.title}: {section.prefix}{key} has no default (code or entry)")
        for key in section.entries:
            if key not in section.types:
                problems.append(f"{section.title}: {section.prefix}{key} is documented but is no key")
    return problems


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(section: Section) -> list[str]:
    lines = [f"### {section.title}", ""]
    if section.intro:
        lines += [section.intro, ""]
    lines += ["| Key | Type | Default | Effect |", "|---|---|---|---|"]
    for key, kind in section.types.items():
        default, effect = section.entries.get(key, (None, "(undocumented)"))
        shown = default if default is not None else render_default(section.defaults.get(key))
        lines.append(f"| `{section.prefix}{key}` | {_cell(kind)} | {_cell(shown)} | {_cell(effect)} |")
    return lines + [""]


def render() -> str:
    """The whole page."""
    lines = [TITLE, "",
             "<!-- Generated by `python scripts/regenerate.py` (or `python -m hermes_pipeline.cli.docgen --write`) "
             "from the key tables of the code; edit hermes_pipeline/cli/config_reference.py, not this file. -->", "",
             "Two files configure hermes_pipeline: the **pipeline file** (`plugins.toml` or YAML, selected by "
             "`HERMES_NEMO_RELAY_PLUGINS_TOML`, process-wide) and each profile's **`config.yaml`**. Keys under "
             "`[components.config]` depend on the component `kind`; each table below gives the key, its type, its "
             "default and its effect. Relative paths resolve against the working directory at activation.", "",
             "## Precedence: pipeline file, environment, defaults", "",
             "For OpenTelemetry export, the pipeline file wins where it sets a key; the standard `OTEL_*` variables "
             "fill in what it leaves unset; the built-in default comes last. The environment never switches export "
             "on: the `opentelemetry` section must be enabled. Its endpoint variable is used only when the section "
             "(after layering) lists no trace endpoint, and the `OTEL_EXPORTER_OTLP_*HEADERS` variables go only to "
             "that endpoint. `OTEL_SDK_DISABLED=true` switches all span export off. Invalid values are ignored with "
             "a warning naming the variable (an unusable endpoint URL is an error of `config validate`).", "",
             "## Pipeline file", ""]
    all_sections = sections()
    for section in all_sections:
        if section.title.startswith("`observability`: `[components"):
            lines += ["## Component `observability`", "",
                      "Keys of `[components.config]` for `kind = \"observability\"`: ATOF events, ATIF trajectories, "
                      "OpenTelemetry (and Langfuse). An invalid value inside one destination entry skips that entry "
                      "with a warning.", ""]
        elif section.title.startswith("`request_defaults`: `[components"):
            lines += ["## Component `request_defaults`", "",
                      "An example middleware component: fills in request keys and tool arguments the host did not "
                      "set.", ""]
        elif section.title.startswith("Profile"):
            lines += ["## Profile settings", ""]
        lines += _table(section)
    lines += ["## Environment variables", "", "| Variable | Effect |", "|---|---|"]
    lines += [f"| `{name.replace(', ', '`, `')}` | {_cell(text)} |" for name, text in R.ENVIRONMENT.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the page, or with ``--write`` write ``docs/configuration.md`` next to this package's checkout."""
    parser = argparse.ArgumentParser(prog="python -m hermes_pipeline.cli.docgen", description=__doc__)
    parser.add_argument("--write", metavar="PATH", nargs="?", const="", default=None,
                        help="write the page (default path: docs/configuration.md of this checkout)")
    args = parser.parse_args(argv)
    problems = undocumented()
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    text = render()
    if args.write is None:
        sys.stdout.write(text)
        return 0
    path = Path(args.write) if args.write else Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
