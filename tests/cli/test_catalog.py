"""`rulegauge list`'s components: each with its origin and the extra it declares (rulegauge.cli.catalog)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.cli.catalog import COMPONENT_REGISTRIES, components
from rulegauge.core.extras import EXTRAS

runner = CliRunner()


def test_each_component_has_its_origin_and_declared_extra() -> None:
    by_name = {(c.registry, c.name): c for c in components()}
    assert {c.registry for c in by_name.values()} <= set(COMPONENT_REGISTRIES)
    for core in (("arms", "bm25"), ("arms", "boost"), ("arms", "http"), ("arms", "external"),
                 ("fusion methods", "rrf"), ("answerers", "extractive"), ("engines", "local")):
        assert by_name[core].extra is None and by_name[core].install == "", core
        assert by_name[core].origin == "builtin"
    assert by_name[("arms", "dense")].extra == "dense"
    assert by_name[("arms", "dense")].install == "pip install 'rulegauge[dense]'"
    assert {by_name[("arms", a)].extra for a in ("tantivy", "postgres", "pgvector")} == {"engines"}
    assert by_name[("answerers", "llama-cpp")].extra == "llama"
    assert by_name[("engines", "ray")].extra == "ray"
    assert by_name[("embedding backends", "onnx-int8")].extra == "dense"
    assert all(c.extra is None or c.extra in EXTRAS for c in by_name.values())


def test_list_prints_the_components_table_and_json() -> None:
    res = runner.invoke(app, ["list", "--format", "tsv"])
    assert res.exit_code == 0, res.output
    rows = [line.split("\t") for line in res.output.splitlines()]
    assert ["arms", "dense", "builtin", "dense"] in rows and ["arms", "bm25", "builtin", "none (core)"] in rows
    data = json.loads(runner.invoke(app, ["list", "--json"]).output)
    dense = next(c for c in data["components"] if c["registry"] == "arms" and c["name"] == "dense")
    assert dense == {"registry": "arms", "name": "dense", "origin": "builtin", "extra": "dense",
                     "install": "pip install 'rulegauge[dense]'"}
