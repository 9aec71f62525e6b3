"""docs/configuration.md lists every key of the pipeline file and of the profile config.yaml with type,
default and effect, generated from the validator's own key tables so that it cannot drift (issue #11
item 7; CFG-13 key names, CFG-18 policy, §7 observability keys, §13 profile keys)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hermes_pipeline.cli import config_reference, docgen
from hermes_pipeline.sinks.atof import config as atof_config
from hermes_pipeline.config.checks import boolean
from hermes_pipeline.config.profile_config import DEFAULTS, KNOWN_KEYS
from tests._repo import REPO

DOC = REPO / "docs" / "configuration.md"


def test_the_checked_in_reference_is_the_generated_one() -> None:
    """docs/configuration.md equals the generator's output (regenerate with `python scripts/regenerate.py`)."""
    assert DOC.read_text(encoding="utf-8") == docgen.render()


def test_every_key_of_the_tables_has_type_default_and_effect() -> None:
    """No key of a validator table lacks an entry (or a default), and no entry names a key that does not exist."""
    assert docgen.undocumented() == []


def _rows() -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in docgen.render().splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            rows.setdefault(cells[0].strip("`"), cells)
    return rows


def test_the_page_covers_each_component_section_and_the_profile() -> None:
    """Spot checks across the sections: atof, atif, opentelemetry (Langfuse included), request_defaults,
    [policy], [[plugins.dynamic]] and every profile key with its default from the profile defaults."""
    rows = _rows()
    for key in ("atof.sinks[].mode", "atif.filename_template", "opentelemetry.endpoints[].basic_auth_env",
                "opentelemetry.sampling_rate", "llm.temperature", "policy.unsupported_value",
                "plugins.dynamic[].manifest", "components[].enabled"):
        assert key in rows, key
    assert rows["atof.sinks[].mode"][1] == "one of 'append', 'overwrite'" and rows["atof.sinks[].mode"][2] == '"append"'
    for key in KNOWN_KEYS:
        assert key in rows, key
        default = DEFAULTS[key]
        if default is not None:
            assert rows[key][2] == docgen.render_default(default)
    assert rows["opentelemetry.endpoints[].timeout_millis"][2].endswith("10000")  # issue #30: the spec default


def test_a_key_added_to_a_table_without_documentation_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """Drift guard: a new key in a validator table (or an entry for a removed key) is reported."""
    monkeypatch.setitem(atof_config.KEYS, "brand_new", boolean)
    assert any("atof.brand_new has no entry" in p for p in docgen.undocumented())
    monkeypatch.delitem(atof_config.KEYS, "brand_new")
    monkeypatch.setitem(config_reference.ATIF, "gone_key", (None, "x"))
    assert any("atif.gone_key is documented but is no key" in p for p in docgen.undocumented())


def test_regeneration_is_one_command_and_check_reports_nothing_stale() -> None:
    """`python scripts/regenerate.py --check` exits 0 on a checkout whose derived files are current."""
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "regenerate.py"), "--check"],
                            capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
