"""Process-wide activation, rollback, release and profile isolation (spec 03 §3, §10, §11;
CFG-2..CFG-10, CFG-47..CFG-55, CFG-86, CFG-87)."""

from __future__ import annotations

import logging
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline import Engine, get_engine
from hermes_pipeline.profile import ACTIVE_LOG_LINE, ActivationState, activation, open_profile
from hermes_pipeline.profile.activation import ProcessActivation

from .conftest import COMPONENT_SOURCE, OBS_MINIMAL, Env, Site

TWO = 'version = 1\n[[components]]\nkind = "first"\n[[components]]\nkind = "second"\n'


def test_cfg_3_unset_selector_disables_everything(env: Env, site: Site, process: Engine) -> None:
    """CFG-3: with the selector unset nothing is discovered, layered, resolved or imported: DISABLED."""
    marker = env.root / "imported"
    module = site.module(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\n")
    site.dist("eager-dist", {"eager": f"{module}:Component"})
    env.write(env.user_file, 'version = 1\n[[components]]\nkind = "eager"\n')
    profile = open_profile()
    report = profile.activation
    assert report.state is ActivationState.DISABLED and report.sources == [] and report.selected is None
    assert not marker.exists() and process.plugins.names() == []


def test_cfg_4_cfg_50_active_process_wide_with_log_line(env: Env, process: Engine,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    """CFG-4 / CFG-50: a loadable selected file activates on the process engine and logs the line once."""
    env.select(env.write("sel.toml", OBS_MINIMAL))
    with caplog.at_level(logging.INFO, logger="hermes_pipeline.config"):
        first = open_profile(env.root / "profile-a")
        second = open_profile(env.root / "profile-b")
    assert first.activation.state is ActivationState.ACTIVE and second.activation is first.activation
    assert process.plugins.names() == ["component:observability"]
    assert [r.getMessage() for r in caplog.records].count(ACTIVE_LOG_LINE) == 1


def test_cfg_7_missing_selected_file_fails_without_fallback(env: Env, process: Engine) -> None:
    """CFG-7: a missing selected file → ERROR pipeline.load_failed naming path and cause, FAILED, and no
    fallback to the (valid) discovered files."""
    env.write(env.user_file, OBS_MINIMAL)
    missing = env.root / "absent.toml"
    env.select(missing)
    report = open_profile().activation
    assert report.state is ActivationState.FAILED and process.plugins.names() == []
    diag = report.diagnostics[-1]
    assert diag.code == "pipeline.load_failed" and diag.level == "error"
    assert str(missing) in diag.message and "file not found" in diag.message
    assert "continuing without pipeline plugins" in diag.message


def test_cfg_7_invalid_discovered_file_fails_the_activation(env: Env, process: Engine) -> None:
    env.write(env.system_file, "version = 7\n")
    env.select(env.write("sel.toml", OBS_MINIMAL))
    report = open_profile().activation
    assert report.state is ActivationState.FAILED and str(env.system_file) in (report.cause or "")


def test_cfg_48_rollback_in_reverse_order_nothing_published(env: Env, site: Site, process: Engine) -> None:
    """CFG-48: a failing activate() shuts down the already-activated components in reverse order and
    publishes none of their registrations; the state is FAILED."""
    module = site.module(COMPONENT_SOURCE.format(kind="first"))
    failing = site.module(COMPONENT_SOURCE.format(kind="second"))
    site.dist("roll-dist", {"first": f"{module}:Component", "second": f"{failing}:Component"})
    env.select(env.write("sel.toml", TWO + "[components.config]\nfail = true\n"))
    report = open_profile().activation
    assert report.state is ActivationState.FAILED and "activation refused by test" in (report.cause or "")
    assert [e[0] for e in sys.modules[module].EVENTS] == ["activate", "flush", "shutdown"]
    assert not process.has_middleware("llm_request") and process.plugins.names() == []


def test_cfg_47_registrations_published_atomically(env: Env, site: Site, process: Engine) -> None:
    """CFG-47 step 9: while later components activate, earlier registrations are not yet visible."""
    module = site.module(COMPONENT_SOURCE.format(kind="first"))
    probe = site.module("""\
from hermes_pipeline import get_engine
SEEN = []
class Component:
    kind = "second"
    def __init__(self, ctx):
        self.ctx = ctx
    def activate(self):
        SEEN.append(get_engine().has_middleware("llm_request"))
""")
    site.dist("atomic-dist", {"first": f"{module}:Component", "second": f"{probe}:Component"})
    env.select(env.write("sel.toml", TWO))
    assert open_profile().activation.state is ActivationState.ACTIVE
    assert sys.modules[probe].SEEN == [False] and process.has_middleware("llm_request")
    assert process.plugins.names() == ["component:first", "component:second"]


def test_cfg_55_last_release_flushes_and_shuts_down_in_reverse(env: Env, site: Site, process: Engine) -> None:
    """CFG-55: the last profile to close flushes, shuts down in reverse order, removes middleware and
    returns to UNINITIALIZED; the next first profile decides again (CFG-10)."""
    first = site.module(COMPONENT_SOURCE.format(kind="first"))
    second = site.module(COMPONENT_SOURCE.format(kind="second"))
    site.dist("release-dist", {"first": f"{first}:Component", "second": f"{second}:Component"})
    env.select(env.write("sel.toml", TWO))
    a, b = open_profile(env.root / "a"), open_profile(env.root / "b")
    a.close()
    assert activation.PROCESS.state is ActivationState.ACTIVE and process.has_middleware("llm_request")
    events: list = []
    sys.modules[first].EVENTS.clear()
    sys.modules[second].EVENTS.clear()
    b.close()
    events = sys.modules[first].EVENTS + sys.modules[second].EVENTS
    assert ("shutdown", "first") in events and ("shutdown", "second") in events
    assert activation.PROCESS.state is ActivationState.UNINITIALIZED
    assert not process.has_middleware("llm_request") and process.plugins.names() == []
    env.monkeypatch.delenv("HERMES_NEMO_RELAY_PLUGINS_TOML")
    assert open_profile(env.root / "c").activation.state is ActivationState.DISABLED


def test_cfg_55_shutdown_order_is_reverse(env: Env, site: Site, process: Engine) -> None:
    shared = site.module("ORDER = []\n")
    source = f"""\
import {shared} as shared
class Component:
    kind = {{kind!r}}
    def __init__(self, ctx):
        pass
    def activate(self):
        shared.ORDER.append(("activate", self.kind))
    def shutdown(self):
        shared.ORDER.append(("shutdown", self.kind))
"""
    first, second = site.module(source.format(kind="first")), site.module(source.format(kind="second"))
    site.dist("order-dist", {"first": f"{first}:Component", "second": f"{second}:Component"})
    env.select(env.write("sel.toml", TWO))
    open_profile().close()
    assert sys.modules[shared].ORDER == [("activate", "first"), ("activate", "second"),
                                         ("shutdown", "second"), ("shutdown", "first")]


def test_cfg_55_failed_cleanup_keeps_failed_until_retried(env: Env, site: Site, process: Engine) -> None:
    """CFG-55: a failing shutdown keeps the state FAILED; a new first host gets FAILED until cleanup works."""
    module = site.module("""\
CALLS = []
class Component:
    kind = "sticky"
    fail = True
    def __init__(self, ctx):
        pass
    def activate(self):
        pass
    def shutdown(self):
        CALLS.append("shutdown")
        if Component.fail:
            raise RuntimeError("stuck")
""")
    site.dist("sticky-dist", {"sticky": f"{module}:Component"})
    env.select(env.write("sel.toml", 'version = 1\n[[components]]\nkind = "sticky"\n'))
    open_profile(env.root / "a").close()
    assert activation.PROCESS.state is ActivationState.FAILED
    assert open_profile(env.root / "b").activation.state is ActivationState.FAILED
    activation.PROCESS.release(str((env.root / "b").resolve()))
    sys.modules[module].Component.fail = False
    report = open_profile(env.root / "c").activation
    # retried at every release opportunity: close a, first host b, release b, first host c (succeeds)
    assert report.state is ActivationState.ACTIVE and sys.modules[module].CALLS == ["shutdown"] * 4


def test_cfg_8_legacy_variables_warn_once_per_process_names_only(env: Env, process: Engine,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """CFG-8: legacy ATOF/ATIF variables never activate anything; one WARNING per process, names only."""
    env.monkeypatch.setenv("HERMES_NEMO_RELAY_ATOF_ENDPOINT", "https://secret.example/ingest")
    env.monkeypatch.setenv("HERMES_NEMO_RELAY_ATIF_DIR", "/secret/dir")
    proc = ProcessActivation()
    with caplog.at_level(logging.WARNING, logger="hermes_pipeline.config"):
        report = proc.acquire("a", Engine())
        proc.release("a")
        again = proc.acquire("b", Engine())
    assert report.state is ActivationState.DISABLED
    diag = report.diagnostics[0]
    assert diag.code == "pipeline.legacy_env_ignored"
    assert "HERMES_NEMO_RELAY_ATIF_DIR" in diag.message and "HERMES_NEMO_RELAY_ATOF_ENDPOINT" in diag.message
    assert "secret" not in diag.message and "HERMES_NEMO_RELAY_PLUGINS_TOML" in diag.message
    logged = [r for r in caplog.records if "legacy_env_ignored" in r.getMessage()]
    assert len(logged) == 1 and again.diagnostics[0].code == "pipeline.legacy_env_ignored"


def test_cfg_8_legacy_variables_with_selector_set_say_ignored(env: Env, process: Engine) -> None:
    env.monkeypatch.setenv("HERMES_NEMO_RELAY_ATOF_ENABLED", "1")
    env.select(env.write("sel.toml", OBS_MINIMAL))
    report = open_profile().activation
    assert report.state is ActivationState.ACTIVE
    assert "ignored" in next(d for d in report.diagnostics if d.code == "pipeline.legacy_env_ignored").message


def test_cfg_10_selector_read_once(env: Env, process: Engine) -> None:
    """CFG-10: changing the variable has no effect until the activation is released and decided again."""
    env.select(env.write("sel.toml", OBS_MINIMAL))
    a = open_profile(env.root / "a")
    env.monkeypatch.delenv("HERMES_NEMO_RELAY_PLUGINS_TOML")
    assert open_profile(env.root / "b").activation.state is ActivationState.ACTIVE
    assert a.activation.state is ActivationState.ACTIVE


def test_cfg_87_report_fields(env: Env, process: Engine) -> None:
    """CFG-87 / CFG-61: the report carries state, layered sources, diagnostics and the degraded reason."""
    env.write(env.user_file, "version = 1\n")
    selected = env.write("sel.toml", OBS_MINIMAL)
    env.select(selected)
    data = open_profile().activation.to_dict()
    assert data["state"] == "ACTIVE" and data["sources"] == [str(env.user_file), str(selected)]
    assert data["degraded_reason"] and {d["code"] for d in data["diagnostics"]} >= {
        "pipeline.degraded", "plugin.configuration_inherited"}
    assert set(data["diagnostics"][0]) >= {"level", "code", "component", "field", "message"}


def test_cfg_9_programmatic_hooks_unaffected(env: Env, process: Engine) -> None:
    """CFG-9: host-registered hooks and middleware work with the selector unset or failing."""
    process.register_hook("on_session_start", lambda **kw: None)
    env.select(env.root / "absent.toml")
    open_profile().close()
    assert process.has_hook("on_session_start")


_broken = st.one_of(
    st.text(max_size=120),
    st.sampled_from([
        "version = 2\n", "[[components]]\nenabled = true\n", 'dynamic_plugins = []\n',
        OBS_MINIMAL + "enable_full_payloads = 3\n",
        OBS_MINIMAL + '[[plugins.dynamic]]\nmanifest = "nope/relay-plugin.toml"\n',
        '[[components]]\nkind = "observability"\n[components.config]\nversion = 9\n',
    ]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_broken, yaml=st.booleans())
def test_property_host_keeps_running_when_activation_fails(env: Env, process: Engine, text: str,
                                                          yaml: bool) -> None:
    """CFG-7 / CFG-49: whatever the selected file contains, the host's agent loop runs; on FAILED it
    runs without any pipeline registration."""
    path = env.root / ("any.yaml" if yaml else "any.toml")
    path.write_text(text, encoding="utf-8")
    env.select(path)
    profile = open_profile(env.root / "profile")
    try:
        state = profile.activation.state
        assert state in (ActivationState.ACTIVE, ActivationState.FAILED)
        if state is ActivationState.FAILED:
            assert get_engine().plugins.names() == []
            assert profile.activation.diagnostics[-1].code == "pipeline.load_failed"
        host = profile.host(model="m", provider="p")
        with host.session() as session, session.turn("hello") as turn:
            response = turn.call_llm({"model": "m", "messages": []}, lambda request: {"choices": [], "id": "r"})
            result = turn.call_tool("echo", {"text": "hi"}, lambda text: text)
            turn.complete("done")
        assert response["id"] == "r" and result == "hi"
    finally:
        profile.close()
    assert activation.PROCESS.state is ActivationState.UNINITIALIZED


def test_cfg_59_cfg_15_2_component_context_fields(env: Env, site: Site, process: Engine) -> None:
    """§15.2 / CFG-59: the context carries kind, read-only config, effective policy, a named logger,
    diagnostics and the no-op native host (with a reason), and no profile identity."""
    module = site.module("""\
SEEN = {}
class Component:
    kind = "ctx_probe"
    def __init__(self, ctx):
        SEEN["ctx"] = ctx
    def activate(self):
        SEEN["ctx"].diagnostics.info("probe", "hello", field="x")
""")
    site.dist("ctx-dist", {"ctx_probe": f"{module}:Component"})
    env.select(env.write("sel.toml", 'version = 1\n[policy]\nunknown_field = "error"\n'
                                     '[[components]]\nkind = "ctx_probe"\nconfig = {a = 1}\n'))
    report = open_profile().activation
    ctx = sys.modules[module].SEEN["ctx"]
    assert ctx.kind == "ctx_probe" and dict(ctx.config) == {"a": 1}
    with pytest.raises(TypeError):
        ctx.config["a"] = 2  # read-only mapping
    assert ctx.policy.unknown_field == "error" and ctx.logger.name == "hermes_pipeline.component.ctx_probe"
    assert ctx.native.available is False and ctx.native.reason
    assert not any(hasattr(ctx, attr) for attr in ("profile", "home", "hermes_home"))
    assert ("ctx_probe.probe", "ctx_probe", "x") in [(d.code, d.component, d.field) for d in report.diagnostics]


def test_cfg_84_component_callbacks_are_fail_open(env: Env, site: Site, process: Engine) -> None:
    """CFG-84 / CFG-49: after activation, a component's raising callback never breaks the host."""
    module = site.module("""\
class Component:
    kind = "raiser"
    def __init__(self, ctx):
        self.ctx = ctx
    def activate(self):
        def boom(**kw):
            raise RuntimeError("callback failure")
        self.ctx.register_hook("on_session_start", boom)
        self.ctx.register_middleware("llm_request", boom)
""")
    site.dist("raiser-dist", {"raiser": f"{module}:Component"})
    env.select(env.write("sel.toml", 'version = 1\n[[components]]\nkind = "raiser"\n'))
    profile = open_profile()
    assert profile.activation.state is ActivationState.ACTIVE
    with profile.host().session() as session, session.turn("hi") as turn:
        assert turn.call_llm({"model": "m"}, lambda request: {"id": "ok"}) == {"id": "ok"}


def test_cfg_83_relative_paths_resolve_against_activation_cwd(env: Env, process: Engine) -> None:
    """CFG-83: the observability component records the working directory at activation."""
    env.select(env.write("sel.toml", OBS_MINIMAL))
    open_profile()
    instance = process.plugins.get("component:observability").instance
    assert instance.working_directory == str(env.root)


def test_cfg_56_cfg_61_atexit_and_degraded_logged_once(env: Env, monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    """CFG-56: release is registered for interpreter exit; CFG-61: degraded mode is logged once per process
    (at DEBUG here, since nothing in the file needs the native runtime)."""
    registered: list = []
    monkeypatch.setattr(activation.atexit, "register", registered.append)
    env.select(env.write("sel.toml", OBS_MINIMAL))
    proc = ProcessActivation()
    with caplog.at_level(logging.DEBUG, logger="hermes_pipeline.config"):
        first = proc.acquire("a", Engine())
        proc.release("a")
        second = proc.acquire("b", Engine())
    assert registered == [proc._shutdown_at_exit] and second.degraded_reason == first.degraded_reason
    assert sum("pipeline.degraded" in r.getMessage() for r in caplog.records) == 1
    proc.shutdown()
    assert proc.state is ActivationState.UNINITIALIZED


def test_fmt_2_no_exporter_runs_without_a_selected_pipeline_file(env: Env, process: Engine) -> None:
    """FMT-2: an observability component exporting ATOF sits in a discoverable user file, but the selector is
    unset: activation is DISABLED, nothing is registered and a whole session writes no event anywhere."""
    from hermes_pipeline import Host

    out = env.root / "atof-out"
    env.write(env.user_file, OBS_MINIMAL + "[components.config.atof]\nenabled = true\n"
              f"[[components.config.atof.sinks]]\ntype = \"file\"\noutput_directory = {str(out)!r}\n")
    profile = open_profile()
    assert profile.activation.state is ActivationState.DISABLED
    host = Host(process, platform="cli", model="m", provider="openai")
    with host.session() as session:
        with session.turn("hi") as turn:
            assert turn.call_tool("read_file", {"path": "x"}, lambda path: "ok") == "ok"
            turn.complete("done")
    assert process.plugins.names() == [] and not process.has_hook("post_tool_call")
    assert not out.exists()  # (test_cfg_4: the same component activates once a file is selected)
