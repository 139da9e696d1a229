"""Extras: the declaration matches pyproject, messages name the extra and its pip command, and
the CLI turns a missing extra into exit 2 (rulegauge.core.extras)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from rulegauge.core import extras
from rulegauge.core.extras import EXTRAS, MissingExtra, explain, install_command, needs, require
from tests.helpers.blocked_imports import blocked_env
from tests.helpers.common import LEXICAL, REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _dist(requirement: str) -> str:
    return re.split(r"[\[<>=~!; ]", requirement, maxsplit=1)[0].lower()


def test_every_declared_extra_is_in_pyproject_and_all_gathers_them() -> None:
    optional = PYPROJECT["optional-dependencies"]
    assert set(EXTRAS) <= set(optional)
    (everything,) = optional["all"]
    named = set(re.fullmatch(r"rulegauge\[(.*)\]", everything).group(1).split(","))  # type: ignore[union-attr]
    assert named == set(EXTRAS) - {"llama"}  # llama builds from source: scripts/llama-wheel, RULEGAUGE_EXTRAS


def test_the_core_has_no_heavy_or_unused_dependency() -> None:
    core = {_dist(r) for r in PYPROJECT["dependencies"]}
    for heavy in ("torch", "sentence-transformers", "transformers", "onnx", "onnxruntime", "scikit-learn",
                  "matplotlib", "faiss-cpu", "httpx", "ray", "mlflow-skinny", "tantivy"):
        assert heavy not in core, heavy
    assert "torch" in {_dist(r) for r in PYPROJECT["optional-dependencies"]["dense"]}


def test_install_command_names_the_distribution_and_the_extra() -> None:
    assert install_command("dense") == "pip install 'rulegauge[dense]'"
    with pytest.raises(KeyError):
        install_command("no-such-extra")


def test_require_names_what_needs_the_extra_and_the_missing_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras, "_installed", lambda module: module not in {"tantivy", "psycopg"})
    with pytest.raises(MissingExtra) as caught:
        require("engines", "the tantivy arm")
    assert str(caught.value) == ("the tantivy arm needs the [engines] extra (tantivy, psycopg are not "
                                 "installed): pip install 'rulegauge[engines]'")
    monkeypatch.setattr(extras, "_installed", lambda module: False)
    more = len(extras.missing_modules("dense")) - 3  # the dense extra's modules, from its declaration
    with pytest.raises(MissingExtra, match=rf"\(torch, sentence_transformers, transformers and {more} more are not "
                                           r"installed\): pip install 'rulegauge\[dense\]'$"):
        require("dense", "the dense arm")
    monkeypatch.setattr(extras, "_installed", lambda module: True)
    require("dense", "the dense arm")  # all there: nothing raised


def test_explain_prefers_the_extra_given_and_ignores_modules_of_no_extra() -> None:
    sk = ModuleNotFoundError("No module named 'sklearn'", name="sklearn.metrics")
    assert str(explain(sk, "rulegauge judges", "judge")) == (
        "rulegauge judges needs the [judge] extra (sklearn is not installed): pip install 'rulegauge[judge]'")
    mpl = ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib.figure")
    assert explain(mpl, "rulegauge trend").extra == "report"  # type: ignore[union-attr]
    assert explain(mpl, "rulegauge x", "judge").extra == "report"  # type: ignore[union-attr]  # not judge's
    assert explain(ModuleNotFoundError("No module named 'yaml'", name="yaml"), "x") is None
    assert explain(ModuleNotFoundError("no name"), "x") is None


def test_needs_turns_only_the_extras_modules_into_missing_extra() -> None:
    with pytest.raises(MissingExtra, match=r"^the llama-cpp answerer needs the \[llama\] extra"), \
            needs("llama", "the llama-cpp answerer"):
        raise ModuleNotFoundError("No module named 'llama_cpp'", name="llama_cpp")
    with pytest.raises(ModuleNotFoundError, match="no_such_module"), needs("llama", "x"):
        import no_such_module  # type: ignore[import-not-found]  # noqa: F401


def test_a_real_module_is_found_without_being_imported() -> None:
    assert extras._installed("json") and not extras._installed("rulegauge_no_such_module")
    assert not extras._installed("json.no_such_submodule")


def _cli(tmp_path: Path, blocked: tuple[str, ...], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from rulegauge.cli import main; main()", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=blocked_env(tmp_path, blocked))


def test_a_command_whose_extra_is_missing_exits_2_with_the_pip_command(tmp_path: Path) -> None:
    res = _cli(tmp_path, ("matplotlib", "sklearn"), "report", "latest", "-o", str(tmp_path / "r.html"))
    assert res.returncode == 2, res.stderr
    assert "error: rulegauge report needs the [report] extra (" in res.stderr
    assert "pip install 'rulegauge[report]'" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "r.html").exists()


def test_an_arm_whose_extra_is_missing_is_refused_before_any_run_folder(tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text('[grid]\nk = [60]\narms = [["bm25", "dense"]]\n', encoding="utf-8")
    res = _cli(tmp_path, ("torch",), "run", "-c", str(grid), "--out", str(tmp_path / "runs"), "--run-id", "d")
    assert res.returncode == 2, res.stderr
    assert "arm dense (dense): the dense arm needs the [dense] extra (torch is not installed): " \
           "pip install 'rulegauge[dense]'" in res.stderr
    assert "Traceback" not in res.stderr and not (tmp_path / "runs" / "d").exists()


def test_the_lexical_grid_runs_with_every_extra_blocked(tmp_path: Path) -> None:
    every = tuple(sorted({m for e in EXTRAS.values() for m in e.modules}))
    res = _cli(tmp_path, every, "run", "-c", str(LEXICAL), "--out", str(tmp_path / "runs"), "--run-id", "lex")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "runs" / "lex" / "metrics.parquet").exists()
