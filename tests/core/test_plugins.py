"""Plug-ins from a team's own package: a distribution with entry points in the four groups is
put on the path (tests/fixtures/plugins), then ``rulegauge list`` shows where each component
came from and ``rulegauge run`` runs its arm by name; broken plug-ins are reported by name,
never with a traceback."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from rulegauge.core import entry_points as meta
from rulegauge.core import plugins
from rulegauge.core.errors import RegistryError
from rulegauge.core.registry import Registry
from tests.helpers.common import FIXTURES, REPO

PLUGIN = FIXTURES / "plugins"
PKG = "acme-rulegauge==0.1.0"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder that holds the package and its dist-info, as pip would install it."""
    root = tmp_path_factory.mktemp("site")
    shutil.copytree(PLUGIN / "acme_rulegauge", root / "acme_rulegauge")
    info = root / "acme_rulegauge-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-rulegauge\nVersion: 0.1.0\n", encoding="utf-8")
    shutil.copy(PLUGIN / "entry_points.txt", info / "entry_points.txt")
    return root


def rulegauge(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(site)]), "COLUMNS": "250"}
    return subprocess.run([sys.executable, "-c", "from rulegauge.cli import main; main()", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600, env=env)


def test_list_shows_each_plugin_and_where_it_came_from(site, tmp_path):
    res = rulegauge(site, "list", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    origins = data["plug-in origins"]
    assert origins["arms"]["acme-overlap"] == PKG and origins["arms"]["bm25"] == "builtin"
    assert origins["answerers"]["acme-echo"] == PKG
    assert origins["metrics"]["acme_hit"] == PKG and origins["fusion methods"]["acme-max"] == PKG
    assert "acme-overlap" in data["arms"] and "acme-max" in data["fusion methods"] and "acme_hit@k" in data["metrics"]
    broken = "\n".join(data["broken plug-ins"])
    assert "plug-in 'broken-arm' (rulegauge.arms, from acme-rulegauge==0.1.0) is broken: ModuleNotFoundError" in broken
    assert "plug-in 'bm25' (rulegauge.arms, from acme-rulegauge==0.1.0) is broken: the name 'bm25' is already" in broken
    text = rulegauge(site, "list", cwd=tmp_path)
    assert text.returncode == 0 and "acme-overlap: acme-rulegauge==0.1.0" in text.stdout
    assert "warning: plug-in 'broken-arm'" in text.stderr and "Traceback" not in text.stderr


def test_a_plugin_arm_metric_and_fusion_method_run_by_name(site, tmp_path):
    cfg = tmp_path / "acme.toml"
    cfg.write_text('[arms.bm25]\n[arms.mine]\nkind = "acme-overlap"\nmin_overlap = 2\n'
                   '[grid]\narms = [["bm25", "mine"]]\n'
                   '[[configs]]\nname = "acme"\nmethod = "acme-max"\narms = ["bm25", "mine"]\n', encoding="utf-8")
    res = rulegauge(site, "run", "-c", str(cfg), "--out", str(tmp_path / "runs"), "--run-id", "p",
                  "-m", "hit@5", "-m", "acme_hit@5", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    run = tmp_path / "runs" / "p"
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["arms"]["mine"]["kind"] == "acme-overlap" and manifest["arms"]["mine"]["min_overlap"] == 2
    ranks = pd.read_parquet(run / "arm_ranks.parquet")
    assert (ranks["arm"] == "mine").sum() > 0
    m = pd.read_parquet(run / "metrics.parquet").pivot_table(index=["config_id", "question_id"],
                                                            columns="metric", values="value")
    assert (m["acme_hit@5"] == m["hit@5"]).all()
    configs = pd.read_parquet(run / "configs.parquet").set_index("name")
    assert configs.loc["acme", "method"] == "acme-max"
    assert m.loc[configs.loc["acme", "config_id"]].notna().all().all()  # the plug-in fusion scored


def test_a_broken_or_unknown_arm_kind_is_exit_2_naming_it(site, tmp_path):
    for kind, expect in (("broken-arm", "plug-in 'broken-arm' (rulegauge.arms, from acme-rulegauge==0.1.0) is broken"),
                         ("nosuch", "unknown arm 'nosuch'; choose one of: bm25, boost")):
        cfg = tmp_path / f"{kind}.toml"
        cfg.write_text(f'[arms.x]\nkind = "{kind}"\n[grid]\narms = [["x"]]\n', encoding="utf-8")
        res = rulegauge(site, "run", "-c", str(cfg), "--out", str(tmp_path / "runs"), cwd=tmp_path)
        assert res.returncode == 2, res.stderr
        assert expect in res.stderr and "acme-overlap" in res.stderr and "Traceback" not in res.stderr
        assert not (tmp_path / "runs").exists()


def test_without_plugins_everything_is_builtin(tmp_path):
    plugins.load_all()
    for group in plugins.GROUPS:  # this process has no plug-in package on its path
        assert set(plugins.origins(group).values()) == {"builtin"}
    assert plugins.broken() == []
    assert "production" in plugins.origins("rulegauge.answerers")  # the hand-kept imports are gone


def test_unknown_names_of_a_broken_plugin_say_why(monkeypatch):
    reg = plugins.registry("rulegauge.arms")
    monkeypatch.setitem(plugins._broken, ("rulegauge.arms", "zzz"),
                        plugins.BrokenPlugin("rulegauge.arms", "zzz", "z==1", "ImportError: no"))
    with pytest.raises(Exception, match=r"unknown arm 'zzz'; choose one of: .*plug-in 'zzz' .* broken: ImportError"):
        reg.get("zzz")
    assert plugins.broken_hint(Registry[int]("other"), "zzz") == ""


CONFORMANCE = """
import json
from rulegauge.testing.arms import check_arm
from rulegauge.testing.fusion import check_fusion_method
from rulegauge.testing.metrics import check_metric
out = {}
for kind in ("acme-overlap", "acme-rank0"):
    r = check_arm(kind)
    out[kind] = [list(r.problems), r.skipped]
for name in ("acme-max", "acme-lowceiling"):
    r = check_fusion_method(name)
    out[name] = [list(r.problems), list(r.skipped)]
for name in ("acme_hit", "acme_wide"):
    r = check_metric(name)
    out[name] = [list(r.problems), list(r.skipped)]
print(json.dumps(out))
"""


def test_the_conformance_suites_pass_on_the_plugin_and_catch_each_planted_mistake(site, tmp_path):
    """The same suites rulegauge runs on its built-ins, run on an installed plug-in: its arm,
    fusion method and metric (one file each) conform; the planted mistakes (an arm ranking
    from 0, a ceiling below the fused scores, a fast path that differs from the full path) fail."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(site)])}
    res = subprocess.run([sys.executable, "-c", CONFORMANCE], cwd=tmp_path, capture_output=True, text=True,
                         timeout=900, env=env)
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    for good in ("acme-overlap", "acme-max", "acme_hit"):
        assert got[good][0] == [], (good, got[good])
    assert got["acme-overlap"][1] is None  # it ran, not skipped
    assert any("ranks must be 1.." in p and "has rank 0" in p for p in got["acme-rank0"][0]), got["acme-rank0"]
    assert any("exceeds the declared ceiling" in p for p in got["acme-lowceiling"][0]), got["acme-lowceiling"]
    assert any("the fast path gives" in p for p in got["acme_wide"][0]), got["acme_wide"]
    assert not any("fast path" in p for p in got["acme_hit"][0])


def test_an_arm_ranking_from_0_fails_the_run_with_exit_2_naming_arm_and_question(site, tmp_path):
    cfg = tmp_path / "rank0.toml"
    cfg.write_text('[arms.bm25]\n[arms.zero]\nkind = "acme-rank0"\n[grid]\narms = [["bm25", "zero"]]\n',
                   encoding="utf-8")
    res = rulegauge(site, "run", "-c", str(cfg), "--out", str(tmp_path / "runs"), "--run-id", "z", cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert "arm zero broke the arm contract" in res.stderr and "question " in res.stderr
    assert "has rank 0" in res.stderr and "Traceback" not in res.stderr
    manifest = json.loads((tmp_path / "runs" / "z" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "failed" and "arm zero" in manifest["error"]
    assert not (tmp_path / "runs" / "z" / "arm_ranks.parquet").exists()  # nothing of it stored


REG: Registry[object] = Registry("thing")  # the registry of the test group (replaced by the fixture below)


class Thing:
    pass


class Door:
    """A test group ``rulegauge.test`` whose entry points a test declares: rulegauge's own
    (``own``) and a package's (``others``: ``(name, value, package)``), over modules the test
    writes (:meth:`module`: named uniquely, so no earlier import stands in)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
        self.mp, self.folder, self.tag = monkeypatch, folder, f"door{id(self)}"

    def declare(self, own=(), others=()) -> Registry[object]:
        group = "rulegauge.test"
        self.mp.setattr(meta, "own_declared", lambda: tuple((group, n, v) for n, v in own))
        self.mp.setattr(meta, "_others", lambda: tuple((group, n, v, p) for n, v, p in others))
        meta.entries.cache_clear()
        return REG

    def module(self, name: str, body: str = "") -> str:
        full = f"{self.tag}_{name}"
        (self.folder / f"{full}.py").write_text(f"from {__name__} import REG, Thing\n{body}", encoding="utf-8")
        return full


@pytest.fixture
def door(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """Fresh door state, the group ``rulegauge.test`` (its registry: this module's ``REG``)."""
    for name in ("_loaded", "_tried", "_claims", "_owners", "_broken", "_failed"):
        monkeypatch.setattr(plugins, name, type(getattr(plugins, name))())
    monkeypatch.setitem(plugins.GROUPS, "rulegauge.test", plugins.Group("things", __name__, "REG"))
    monkeypatch.setattr(sys.modules[__name__], "REG", Registry("thing", group="rulegauge.test", door=plugins.DOOR))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield Door(monkeypatch, tmp_path)
    meta.entries.cache_clear()


def test_names_and_origins_come_from_metadata_and_a_lookup_imports_one_module(door):
    a, b, c = door.module("a", "class A(Thing): pass\n"), door.module("b", "class B(Thing): pass\n"), \
        door.module("c", "class C(Thing): pass\n")
    reg = door.declare(own=[("alpha", f"{a}:A"), ("beta", f"{b}:B")], others=[("gamma", f"{c}:C", "acme-x==1.0")])
    assert reg.names() == ["alpha", "beta", "gamma"]  # rulegauge's own by name, then the packages'
    assert plugins.origins("rulegauge.test") == {"alpha": "builtin", "beta": "builtin", "gamma": "acme-x==1.0"}
    assert not {a, b, c} & set(sys.modules)  # listed and placed, nothing imported
    assert reg.get("gamma").__name__ == "C" and c in sys.modules and not {a, b} & set(sys.modules)
    assert "beta" in reg and b in sys.modules and a not in sys.modules


def test_a_module_entry_point_is_imported_for_a_name_nothing_declares(door):
    a = door.module("a", "class A(Thing): pass\n")
    multi = door.module("multi", "REG.add('one', Thing())\nREG.add('two', Thing())\n")
    empty = door.module("empty")
    reg = door.declare(own=[("alpha", f"{a}:A")],
                       others=[("many", multi, "acme-x==1.0"), ("zilch", empty, "acme-x==1.0")])
    assert "one" in reg and multi in sys.modules and a not in sys.modules
    assert reg.names() == ["alpha", "one", "two"] and plugins.origin("rulegauge.test", "two") == "acme-x==1.0"
    [b] = plugins.broken()
    assert str(b) == ("plug-in 'zilch' (rulegauge.test, from acme-x==1.0) is broken: loading it registered nothing")
    with pytest.raises(RegistryError, match=r"unknown thing 'three'; choose one of: alpha, one, two$"):
        reg.get("three")


@pytest.mark.parametrize("first", ["get", "names", "steal"])
def test_a_name_belongs_to_one_entry_point_whatever_is_asked_first(door, first):
    own = door.module("own", "class X(Thing): pass\n")
    thief = door.module("thief", "REG.add('y', Thing())\nREG.add('x', Thing())\n")
    other = door.module("other", "class Y(Thing): pass\nclass Z(Thing): pass\n")
    reg = door.declare(own=[("x", f"{own}:X")], others=[
        ("a-steals", thief, "acme-a==1"),       # a module registering y, then x (declared by rulegauge)
        ("x", f"{other}:Y", "acme-b==1"),       # a second x: refused from the metadata
        ("y", f"{other}:Y", "acme-b==1"),
        ("z", f"{other}:Z", "acme-b==1")])
    {"get": lambda: reg.get("x"), "names": reg.names, "steal": lambda: reg.get("y")}[first]()
    assert reg.names() == ["x", "y", "z"] and reg.get("x").__name__ == "X"
    assert reg.get("y").__name__ == "Y"  # the refused module's y left with it
    assert plugins.origins("rulegauge.test") == {"x": "builtin", "y": "acme-b==1", "z": "acme-b==1"}
    why = {b.name: (b.package, b.error) for b in plugins.broken()}
    assert why == {"x": ("acme-b==1", "the name 'x' is already registered (builtin)"),
                   "a-steals": ("acme-a==1", "RegistryError: duplicate thing name 'x': entry point 'x' "
                                             "(rulegauge.test, from builtin) declares it")}


def test_origin_is_the_entry_point_that_registered_it_however_its_module_was_first_imported(door):
    metric = door.module("metric", "REG.add('acme_hit', Thing())\n")
    arm = door.module("arm", f"import {metric}\nclass Arm(Thing): pass\n")  # imports the metric module itself
    reg = door.declare(others=[("acme-arm", f"{arm}:Arm", "acme-x==1.0"), ("acme_hit", metric, "acme-x==1.0"),
                               ("zz", door.module("zz", "REG.add('zz-1', Thing())\n"), "acme-z==2.0")])
    importlib.import_module(arm)  # the metric module first imported through another module, not the door
    assert plugins.origin("rulegauge.test", "acme_hit") == "acme-x==1.0"
    plugins.load("rulegauge.test")
    assert plugins.broken() == [] and reg.names() == ["acme-arm", "acme_hit", "zz-1"]
    assert plugins.origins("rulegauge.test") == {"acme-arm": "acme-x==1.0", "acme_hit": "acme-x==1.0",
                                                 "zz-1": "acme-z==2.0"}


def test_load_order_is_the_declared_one_and_a_missing_optional_module_is_reported(door):
    reg = door.declare(own=[("zeta", f"{__name__}:Thing"), ("alpha", f"{__name__}:Thing"),
                            ("needs-extra", "rulegauge_no_such_optional_module:Thing")])
    plugins.load("rulegauge.test")
    assert reg.names() == ["zeta", "alpha"]  # as own_declared gives them (sorted by name: entry_points docstring)
    assert plugins.origins("rulegauge.test") == {"zeta": "builtin", "alpha": "builtin"}
    [b] = plugins.broken()
    assert (b.name, b.package) == ("needs-extra", "builtin") and "ModuleNotFoundError" in b.error


def test_a_builtin_that_fails_otherwise_raises_as_a_bug(door):
    reg = door.declare(own=[("bad", f"{__name__}:NoSuchName")])
    with pytest.raises(AttributeError):
        reg.get("bad")


@pytest.mark.parametrize("group", ["rulegauge.arms", "rulegauge.fusion", "rulegauge.answerers", "rulegauge.engines",
                                   "rulegauge.metrics", "rulegauge.tables", "rulegauge.stages"])
def test_every_builtin_is_registered_once_by_its_own_entry_point(group):
    """Each built-in name has one owner: the entry point of that name (``module:object``) or the
    module entry point whose module declares it; what no entry point of the group owns is
    registered by the registry's own package (``local``, the kernel's tables and search metrics,
    the answer metrics the ``answering`` stage declares)."""
    plugins.load(group)
    reg = plugins.registry(group)
    entries = {e.name: e for e in meta.entries(group)}
    owned = {n: plugins.owner(group, n) for n in reg.names()}
    for name, e in entries.items():
        assert e.package == "builtin" and (group, name) not in plugins._broken, name
        mine = [n for n, o in owned.items() if o == e]
        assert mine == [name] if e.attribute else len(mine) >= 1, (name, mine)
    unowned = sorted({str(reg.source(n)).rsplit(".", 1)[0] for n, o in owned.items() if o is None})
    assert unowned == {"rulegauge.engines": ["rulegauge.core"], "rulegauge.tables": ["rulegauge.store"],
                       "rulegauge.metrics": ["rulegauge.answering", "rulegauge.metrics"]}.get(group, []), unowned


def test_command_groups_are_entry_points_in_help_order():
    from rulegauge.cli import app

    names = [name for g, name, _ in plugins.declared() if g == "rulegauge.commands"]
    assert names == sorted(names) and len(names) == len(set(names)) >= 12
    assert {c.name for c in app.registered_commands} >= {"run", "list", "validate", "compare", "gate"}


def test_a_registry_holds_only_what_its_owner_accepts():
    from rulegauge.arms.base import ARMS
    from rulegauge.core.errors import RegistryError
    from rulegauge.core.registry import kind_check, shown
    from rulegauge.fusion.method import FUSION_METHODS

    assert ARMS.refusal(42) == "42 (an int) is not an arm class (docs/plugins.md)"
    assert ARMS.refusal(Thing) == (f"{Thing!r} (a class) is not an arm class: it lacks prepare, search, describe "
                                   "(docs/plugins.md)")
    assert ARMS.refusal(ARMS.get("bm25")) is None
    assert FUSION_METHODS.refusal(FUSION_METHODS.get("rrf")) is None and FUSION_METHODS.refusal(Thing) is not None
    reg: Registry[object] = Registry("thing", accepts=kind_check("a Thing", base=Thing, ref="here"))
    with pytest.raises(RegistryError, match=r"thing 'x': 'a' \(a str\) is not a Thing \(here\)"):
        reg.add("x", "a")
    assert reg.add("y", Thing()) is not None and "y" in reg and "x" not in reg
    assert shown("z" * 100).startswith("'" + "z" * 56 + "...")


CONSUMERS = """
import json, sys
from typer.testing import CliRunner
from rulegauge.cli import app
out = {}
for argv in json.loads(sys.argv[1]):
    r = CliRunner().invoke(app, argv)
    out[argv[0]] = [r.exit_code, r.output[-600:]]
print(json.dumps(out))
"""


def test_every_consumer_takes_a_plugin_fusion_method_from_the_registry(site, tmp_path):
    """A run whose config uses the plug-in method ``acme-max`` is read by every command that
    reads runs (each looks methods up in the registry: ceilings, score axes, config names), and
    without the plug-in installed, a command that needs the method says which one is missing."""
    cfg = tmp_path / "acme.toml"
    cfg.write_text('[arms.bm25]\n[arms.boost]\n[grid]\narms = [["bm25", "boost"]]\n'
                   '[[configs]]\nname = "acme"\nmethod = "acme-max"\narms = ["bm25", "boost"]\n', encoding="utf-8")
    runs = str(tmp_path / "runs")
    for rid in ("p", "p2"):
        res = rulegauge(site, "run", "-c", str(cfg), "--out", runs, "--run-id", rid, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
    configs = pd.read_parquet(tmp_path / "runs" / "p" / "configs.parquet").set_index("name")
    acme = str(configs.loc["acme", "config_id"])
    argvs = [["bands", "p", "--runs-dir", runs, "-c", acme, "--json"],
             ["report", "p", "--runs-dir", runs, "-o", str(tmp_path / "r.html"), "-c", acme],
             ["tune", "p", "--runs-dir", runs, "--json"],
             ["compare", "p", "p2", "--runs-dir", runs, "-c", acme, "--json"],
             ["export", "p", "--runs-dir", runs, "-o", str(tmp_path / "trec"), "-c", acme],
             ["pool", "p", "--runs-dir", runs, "-c", acme, "-o", str(tmp_path / "pool.jsonl")],
             ["trend", "--runs-dir", runs, "--min-history", "1", "--json"]]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(site)]), "COLUMNS": "250"}
    res = subprocess.run([sys.executable, "-c", CONSUMERS, json.dumps(argvs)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=600, env=env)
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout.strip().splitlines()[-1])
    for name, (code, output) in got.items():
        assert code == 0 and "Traceback" not in output, (name, output)
    assert f" {acme}\n" in (tmp_path / "trec" / f"{acme}.trec").read_text(encoding="utf-8")  # its run tag
    assert "acme-max" in (tmp_path / "r.html").read_text(encoding="utf-8")
    assert acme in (tmp_path / "pool.jsonl").read_text(encoding="utf-8")
    # the same run read where the plug-in is not installed: exit 2 naming the method, no traceback
    bare = subprocess.run([sys.executable, "-c", "from rulegauge.cli import main; main()", "bands", "p",
                           "--runs-dir", runs], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "250"})
    assert bare.returncode == 2 and "unknown fusion method 'acme-max'" in bare.stderr, bare.stderr
    assert "Traceback" not in bare.stderr
