"""Plug-ins from a team's own package: a distribution with entry points in the four groups is
put on the path (tests/fixtures/plugins), then ``rulegauge list`` shows where each component
came from and ``rulegauge run`` runs its arm by name; broken plug-ins are reported by name,
never with a traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from rulegauge.core import plugins
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
    assert "acme-overlap" in data["arms"] and "acme-max" in data["fusion methods"]
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
