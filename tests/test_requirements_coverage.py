"""Traceability guard: every OBS, MW, CFG, FMT and SM requirement is cited by a test or listed, with
its reason, in ``docs/requirements-not-applicable.md`` (``scripts/requirements_coverage.py``).

The specification is not in the repository; its ids are also checked in (``docs/requirement-ids.txt``), so
the coverage checks run everywhere: against the specification where it is found (``tests/_spec.py``:
``$HERMES_PIPELINE_SPEC``, or ``shared/spec`` beside the checkout or beside the repository it was cloned
from), else against that list. Only the check that the list equals the specification needs the
specification itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._spec import MISSING, PRESENT
from tests._spec import coverage as cov

needs_spec = pytest.mark.skipif(not PRESENT, reason=MISSING)


def _ids() -> dict[str, str]:
    """The requirement ids: the specification's where it is here, else the checked-in list."""
    return cov.spec_ids(cov.DEFAULT_SPEC) if PRESENT else cov.listed_ids_file(cov.DEFAULT_IDS)


def _state() -> tuple[dict[str, str], dict[str, list[str]], dict[str, str]]:
    return _ids(), cov.cited_ids(cov.DEFAULT_TESTS), cov.not_applicable_ids(cov.DEFAULT_NOT_APPLICABLE)


def test_every_requirement_is_cited_by_a_test_or_listed_with_a_reason() -> None:
    """Each OBS, MW, CFG, FMT and SM id of the spec is named by a test (name or docstring) or listed
    in docs/requirements-not-applicable.md."""
    ids, cited, listed = _state()
    reports = cov.build_report(ids, cited, listed, cov.CHECKED_FAMILIES)
    missing = {fam: rep.missing for fam, rep in reports.items() if rep.missing}
    assert not missing, (
        f"requirements neither cited by a test nor listed in {cov.DEFAULT_NOT_APPLICABLE.name}: {missing}; "
        "add a test that proves the rule and names the id, or list the id there with the reason")


def test_listed_ids_exist_and_are_not_also_cited() -> None:
    """The doc lists only real ids, and none that a test already cites (then the doc is stale)."""
    ids, cited, listed = _state()
    assert sorted(set(listed) - set(ids), key=cov.sort_key) == []
    both = sorted((set(listed) & set(cited)), key=cov.sort_key)
    assert both == [], f"cited by tests, so remove them from {cov.DEFAULT_NOT_APPLICABLE.name}: {both}"


def test_tests_cite_only_ids_the_spec_defines() -> None:
    """A cited id that the spec does not define is a typo or a stale reference."""
    ids, cited, _ = _state()
    unknown = sorted(set(cited) - set(ids), key=cov.sort_key)
    assert unknown == [], {i: cited[i] for i in unknown}


@needs_spec
def test_checked_in_id_list_matches_the_spec() -> None:
    """docs/requirement-ids.txt (used where the spec is absent) holds exactly the spec's ids."""
    assert cov.listed_ids_file(cov.DEFAULT_IDS) == cov.spec_ids(cov.DEFAULT_SPEC), (
        "regenerate with: python scripts/requirements_coverage.py --write-ids")


def test_script_classifies_cited_listed_and_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The inventory itself: definitions are read from ``**ID**`` markers, ranges cite only their first
    id, doc list items count under their heading, ``--json`` and ``--check`` report the rest."""
    # Ids are assembled at run time so that this file does not itself cite them.
    o, m = "OBS", "SM"
    one, two, twelve, three = f"{o}-1", f"{o}-2", f"{o}-12", f"{m}-3"
    spec = tmp_path / "spec"
    spec.mkdir()
    (spec / "01.md").write_text(f"- **{one}** (MUST) one.\n- **{two}** two, see {one}.\n- **{twelve}** twelve.\n"
                                f"- **{three}** three.\n", encoding="utf-8")
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_a.py").write_text(f'def test_x():\n    """{one} / {three}..5: ..."""\n', encoding="utf-8")
    (tests / "notes.txt").write_text(f"{two}\n", encoding="utf-8")  # not a .py file: not a citation
    doc = tmp_path / "na.md"
    doc.write_text(f"## Native runtime\n\n- **{two}** — two. Native only.\n\n{twelve} in prose is not a listing.\n",
                   encoding="utf-8")
    args = ["--spec", str(spec), "--tests", str(tests), "--not-applicable", str(doc), "--json"]
    assert cov.main(args) == 0
    out = json.loads(capsys.readouterr().out)
    obs, sm = out["families"]["OBS"], out["families"]["SM"]
    assert (obs["total"], obs["cited"], obs["not_applicable"], obs["missing"]) == (3, 1, 1, 1)
    assert obs["missing_ids"] == [twelve] and obs["not_applicable_ids"] == {"Native runtime": [two]}
    assert (sm["cited"], sm["missing"]) == (1, 0)
    assert cov.main(args[:-1] + ["--check"]) == 1
    ids_file = tmp_path / "ids.txt"
    assert cov.main(["--spec", str(spec), "--ids", str(ids_file), "--write-ids"]) == 0
    assert cov.listed_ids_file(ids_file) == {one: "01.md", two: "01.md", twelve: "01.md", three: "01.md"}
    capsys.readouterr()
    assert cov.main(["--spec", str(tmp_path / "absent"), "--ids", str(ids_file), "--tests", str(tests),
                     "--not-applicable", str(doc)]) == 0
    assert f"requirement ids from {ids_file}" in capsys.readouterr().out
