"""Execution engines: the registry, the choice checks, the local session, and that the
`local` engine (every rulegauge module) never imports Ray."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.core import plugins
from rulegauge.core.engines import ENGINES, LOCAL, Engine, EngineChoice, EngineInfo, engine_help, engines, open_engine
from rulegauge.core.entry_points import Entry
from rulegauge.core.errors import ConfigError, RegistryError

IMPORT_ALL = """
import importlib, pkgutil, sys
{block}
import rulegauge
names = sorted(m.name for m in pkgutil.walk_packages(rulegauge.__path__, "rulegauge.")
               if not m.name.endswith("__main__"))  # scripts: they print when imported
for name in names:
    importlib.import_module(name)
print(len(names), "ray" in sys.modules and sys.modules["ray"] is not None)
"""


def test_registry_names_local_and_ray_and_refuses_duplicates() -> None:
    assert engines().names() == ["local", "ray"]  # ray: registered by rulegauge.core.cluster (a plug-in)
    assert not ENGINES.get("local").takes_address and ENGINES.get("ray").takes_address
    with pytest.raises(RegistryError, match="duplicate engine name 'ray'"):
        ENGINES.add("ray", Engine("ray", "again", ENGINES.get("ray").open))
    assert all(f"{n}:" in engine_help() for n in ENGINES.names())


def test_choice_checks_name_and_address() -> None:
    assert EngineChoice().check().name == LOCAL
    with pytest.raises(RegistryError, match="unknown engine 'spark'; choose one of: local, ray"):
        EngineChoice("spark").check()
    with pytest.raises(ConfigError, match="--address is for a cluster engine \\(ray\\)"):
        EngineChoice("local", "127.0.0.1:6379").check()


def test_local_session_is_this_process() -> None:
    with open_engine(EngineChoice()) as info:
        assert info.describe() == {"name": "local", "address": None, "nodes": 1,
                                   "cpus": info.cpus}
        assert info.cpus >= 1


@pytest.mark.parametrize("blocked", [False, True])
def test_no_rulegauge_module_imports_ray(blocked: bool) -> None:
    """Every module imports with Ray absent from sys.modules afterwards, and with Ray
    made unimportable (what a machine without the extra sees)."""
    block = "sys.modules['ray'] = None" if blocked else ""
    out = subprocess.run([sys.executable, "-c", IMPORT_ALL.format(block=block)],
                         capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    count, imported = out.stdout.split()
    assert int(count) > 100 and imported == "False"


@pytest.mark.parametrize(("args", "message"), [
    (["--engine", "spark"], "unknown engine 'spark'; choose one of: local, ray"),
    (["--address", "127.0.0.1:6379"], "--address is for a cluster engine (ray)"),
])
def test_cli_refuses_bad_engine_choices(tmp_path, args, message) -> None:
    result = CliRunner().invoke(app, ["run", "-o", str(tmp_path), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert list(tmp_path.iterdir()) == []


def _raises_on(when: str):  # type: ignore[no-untyped-def]
    @contextmanager
    def session(address: str | None) -> Iterator[EngineInfo]:
        if when == "start":
            raise ConnectionError("planted start")
        yield EngineInfo("t", 1, 1)
        if when == "stop":
            raise RuntimeError("planted stop")
    return session


@pytest.fixture
def plugin_engine(monkeypatch: pytest.MonkeyPatch):
    """An engine ``t`` registered as a package's (``acme==1``) whose start or stop raises."""
    def make(when: str, *, package: str = "acme==1") -> EngineChoice:
        monkeypatch.setitem(ENGINES._items, "t", Engine("t", "test", _raises_on(when)))
        monkeypatch.setitem(plugins._owners, ("rulegauge.engines", "t"),
                            None if package == "builtin" else Entry("rulegauge.engines", "t", "m:T", package, 9))
        return EngineChoice("t")
    return make


@pytest.mark.parametrize(("when", "message"), [
    ("start", "plug-in 't' (rulegauge.engines, from acme==1) failed starting engine t: ConnectionError: planted start"),
    ("stop", "plug-in 't' (rulegauge.engines, from acme==1) failed stopping engine t: RuntimeError: planted stop")])
def test_a_plugin_engine_that_raises_is_a_message_naming_it(plugin_engine, when: str, message: str) -> None:
    ran = []
    with pytest.raises(plugins.PluginFailed) as caught, open_engine(plugin_engine(when)):
        ran.append(1)
    assert str(caught.value) == message and ran == ([] if when == "start" else [1])


def test_the_blocks_own_error_wins_over_a_failing_stop_and_a_builtins_error_is_a_bug(plugin_engine) -> None:
    with pytest.raises(KeyError, match="the block's"), open_engine(plugin_engine("stop")):
        raise KeyError("the block's")
    with pytest.raises(ConnectionError, match="planted start"), open_engine(plugin_engine("start", package="builtin")):
        pass


def test_engine_names_come_from_metadata_without_importing_the_engine() -> None:
    out = subprocess.run([sys.executable, "-c", "import sys; from rulegauge.core.engines import ENGINES, engine_help;"
                          "print(ENGINES.names(), 'rulegauge.core.cluster' in sys.modules, 'ray:' in engine_help())"],
                         capture_output=True, text=True, timeout=300, check=False)
    assert out.stdout.split("\n")[0] == "['local', 'ray'] False True", out.stderr[-2000:]
