"""Shared fixtures: a fresh engine, a host on it, and an in-memory recorder; and the session guard
that fails the run when the tests leave a file in the working tree or the working directory."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_pipeline import Engine, Host
from hermes_pipeline.testing import Recorder


REPOSITORY = Path(__file__).resolve().parent.parent
# Every process the tests start (`hermes`, its gateway, `python -m ...`) imports the code under test first, not a
# copy of the package installed into the environment earlier (a `pip install .` of older code): their results are
# this checkout's.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (str(REPOSITORY), os.environ.get("PYTHONPATH"))))
SKIPPED_DIRS = frozenset({".git", "__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache", "build", "dist"})
"""Directories the guard never lists: git's own, and caches .gitignore covers."""
SOURCE_SUFFIXES = frozenset({".py", ".md", ".toml", ".yaml", ".yml", ".json", ".txt"})


def _files(root: Path) -> set[str]:
    """Every file under ``root`` (relative, ``/``-separated), without the skipped directories and without a Python
    environment's (a directory holding ``pyvenv.cfg``: a ``.venv`` in the checkout is the user's, and what the
    programs the tests start install into it, as Hermes does for a tool's optional dependency, is theirs)."""
    found: set[str] = set()
    for directory, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info")
                   and not os.path.isfile(os.path.join(directory, d, "pyvenv.cfg"))]
        base = Path(directory).relative_to(root)
        found.update((base / name).as_posix() for name in names)
    return found


def _gained(root: Path, before: set[str]) -> list[str]:
    """Files under ``root`` that were not there at the start of the session.

    Not counted: a source-like file (``SOURCE_SUFFIXES``) inside a top-level directory that
    already held files, which is what another developer editing the same working tree adds while
    the suite runs; no test writes such files into the tree. Anything new at the top level, in a
    new top-level directory, or of any other type counts.
    """
    tops = {path.split("/", 1)[0] for path in before if "/" in path}
    out = []
    for path in sorted(_files(root) - before):
        top, _, rest = path.partition("/")
        if rest and top in tops and Path(path).suffix in SOURCE_SUFFIXES:
            continue
        out.append(path)
    return out


@pytest.fixture(scope="session", autouse=True)
def _nothing_written_outside_tmp_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Tests and the demo write only under ``tmp_path``: the run fails if the repository tree or
    the process working directory gained a file (outputs default to the profile directory, and
    nothing is written where nobody asked). ``HERMES_HOME`` points at a temporary profile for the
    whole session, so a default output never lands in the real ``~/.hermes``."""
    previous_home = os.environ.get("HERMES_HOME")
    os.environ["HERMES_HOME"] = str(tmp_path_factory.mktemp("hermes-home"))
    cwd = Path.cwd().resolve()
    roots = [REPOSITORY] + ([cwd] if cwd != REPOSITORY and REPOSITORY not in cwd.parents else [])
    before = {root: _files(root) for root in roots}
    yield
    if previous_home is None:
        os.environ.pop("HERMES_HOME", None)
    else:
        os.environ["HERMES_HOME"] = previous_home
    os.chdir(cwd)  # a test that changed directory without restoring it must not hide a file
    problems = [f"{root}/{path}" for root in roots for path in _gained(root, before[root])]
    if problems:
        pytest.fail("the tests wrote into the working tree or the working directory (write under tmp_path "
                    f"instead): {', '.join(problems[:20])}" + (" ..." if len(problems) > 20 else ""),
                    pytrace=False)


@pytest.fixture(autouse=True)
def _fresh_call_context() -> Iterator[None]:
    """Each test starts outside any session or turn, whatever earlier tests left open."""
    from hermes_pipeline.host.context import EMPTY_CONTEXT, current

    token = current.set(EMPTY_CONTEXT)
    yield
    current.reset(token)


@pytest.fixture
def engine() -> Engine:
    return Engine()


@pytest.fixture
def host(engine: Engine) -> Host:
    return Host(engine, platform="cli", model="test-model", provider="test-provider",
                base_url="http://127.0.0.1:9/v1", api_mode="chat_completions")


@pytest.fixture
def rec(engine: Engine) -> Iterator[Recorder]:
    recorder = Recorder()
    engine.add_plugin(recorder, name="recorder")
    yield recorder


@pytest.fixture
def fifos() -> Iterator[list[Path]]:
    """FIFOs a test makes (it appends their paths); a reader still waiting on one is released at the end (a failed
    run must not leave a thread blocked on it)."""
    made: list[Path] = []
    yield made
    for path in made:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
