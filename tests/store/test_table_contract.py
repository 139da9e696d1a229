"""The table contract: values cast to the declared schema or an error naming table, column and row;
declared keys unique when written (whole tables and streamed parts) and when a run is opened;
a plug-in's table never makes older runs unreadable (carried if present, named where needed)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rulegauge.core import plugins
from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import ProvenanceError
from rulegauge.store.casting import to_arrow
from rulegauge.store.rundir import Run, RunWriter
from rulegauge.store.schema import IF_PRESENT, REQUIRED, TABLES, carried_tables, missing_note
from rulegauge.store.table_contract import KeyCheck, TableContractError, cast_error
from rulegauge.testing.tables import check_rows

HEAD = "table 'question_facts' (rulegauge.tables, from builtin) broke the table contract (docs/plugins.md): "


def facts(**columns: object) -> pd.DataFrame:
    base: dict[str, object] = {"question_id": ["q1", "q1", "q2"], "fact": [1, 2, 1],
                               "phrasings": [["a"], ["b"], ["c"]]}
    return pd.DataFrame({**base, **columns})


@pytest.mark.parametrize(("frame", "where"), [
    (facts(fact=[1, 2.5, 1]), "column fact, row 2 (question_id='q1', fact=2.5): 2.5 does not cast to the "
                              "declared int32 (Float value 2.500000 was truncated converting to int32)"),
    (facts(fact=[1, 2, 2**40]), "column fact, row 3 (question_id='q2', fact=1099511627776): 1099511627776 does "
                                "not cast to the declared int32 (Integer value 1099511627776 not in range"),
    (facts(fact=[1, "two", 1]), "column fact, row 2 (question_id='q1', fact='two'): 'two' does not cast"),
    (facts(question_id=["q1", None, "q2"]), "column question_id, row 2 (question_id=missing, fact=2): the value "
                                             "is missing, and the declared string column is not nullable"),
])
def test_a_value_that_does_not_cast_names_table_column_and_row(frame, where):
    with pytest.raises(TableContractError) as err:
        to_arrow("question_facts", frame, run_id="r")
    assert str(err.value).startswith(HEAD + where)


def test_arrow_parts_are_cast_the_same_way_and_nothing_is_written(tmp_path):
    w = RunWriter(tmp_path / "r")
    part = pa.table({"question_id": ["q1", "q2"], "fact": [1.0, 2.5], "phrasings": [["a"], ["b"]]})
    with pytest.raises(TableContractError, match=r"column fact, row 2 .*: 2\.5 does not cast to the declared int32"):
        w.write_arrow("question_facts", part)
    with pytest.raises(TableContractError, match="missing column\\(s\\) phrasings"):
        w.write_arrow("question_facts", part.drop_columns(["phrasings"]))
    assert not (tmp_path / "r" / "question_facts.parquet").exists() and not w.has_table("question_facts")
    w.close()


def test_a_repeated_key_is_refused_when_written_whole_or_in_parts(tmp_path):
    w = RunWriter(tmp_path / "r")
    with pytest.raises(TableContractError, match=HEAD.replace("(", r"\(").replace(")", r"\)")
                       + r"the key \(question_id, fact\) repeats: row 3 \(question_id='q1', fact=1\) repeats row 1"):
        w.write_table("question_facts", facts(question_id=["q1", "q2", "q1"], fact=[1, 1, 1]))
    assert not any((tmp_path / "r").glob("question_facts*")) and not w.has_table("question_facts")
    latency = pd.DataFrame({"question_id": ["q1", "q2"], "arm": ["bm25", "bm25"], "timing": ["batch"] * 2,
                            "latency_ms": [1.0, 2.0]})
    parts = [to_arrow("search_latency", latency, run_id="r"), to_arrow("search_latency", latency.tail(1), run_id="r")]
    with pytest.raises(TableContractError, match=r"row 3 \(question_id='q2', arm='bm25'\) repeats row 2"):
        w.write_parts("search_latency", iter(parts))  # streamed: the key over every part
    assert not any((tmp_path / "r").glob("*search_latency*")) and not w.has_table("search_latency")
    assert w.write_parts("search_latency", iter(parts[:1])) == 2  # unique: written
    w.close()


def test_a_table_planted_past_the_writer_is_refused_when_the_run_is_opened(tmp_path):
    w = RunWriter(tmp_path / "r")
    w.write_table("question_facts", facts())
    w.update_manifest({"status": "complete"})
    w.close()
    out = tmp_path / "r" / "question_facts.parquet"
    pq.write_table(to_arrow("question_facts", pd.concat([facts(), facts()]), run_id="r"), out)
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text(encoding="utf-8"))
    manifest["tables"]["question_facts"]["sha256"] = file_sha256(out)
    (tmp_path / "r" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ProvenanceError, match=r"the key \(question_id, fact\) repeats: row 4 "
                                              r"\(question_id='q1', fact=1\) repeats row 1"):
        Run(tmp_path / "r")


def test_the_key_check_codes_values_across_parts_nulls_and_wide_keys():
    keys = KeyCheck("t", ("a", "b"))
    keys.add(pa.table({"a": ["x", None], "b": [1, 2]}))
    keys.add(pa.table({"a": pa.array(["y", None]).dictionary_encode(), "b": [1, 2]}))
    assert keys.problem() is not None and "row 4 (a=missing, b=2) repeats row 2" in keys.problem()
    wide = KeyCheck("t", tuple("abcd"))  # 4 columns of 2^16 codes: beyond one int64, sorted per column
    n = 1 << 16
    wide.add(pa.table({c: np.arange(n) for c in "abcd"}))
    assert wide.problem() is None
    wide.add(pa.table({c: [5] for c in "abcd"}))
    assert "row 65537 (a=5, b=5, c=5, d=5) repeats row 6" in wide.problem()


def test_the_conformance_suite_runs_the_same_checks_on_rows():
    assert check_rows("question_facts", facts()) == ()
    assert "2.5 does not cast" in check_rows("question_facts", facts(fact=[1, 2.5, 1]))[0]
    assert "repeats row 1" in check_rows("question_facts", facts(fact=[1, 1, 1], question_id=["q"] * 3))[0]
    schema = TABLES.get("question_facts").schema()
    assert cast_error("question_facts", facts(run_id="r"), schema, ("question_id",)).args[0].startswith(
        HEAD + "the rows do not cast")  # nothing to name: said so, never a plausible row


def test_a_plugin_table_is_carried_if_present_and_named_where_missing(monkeypatch):
    spec = TABLES.get("question_facts")
    monkeypatch.setitem(TABLES._items, "acme_notes", spec.__class__(
        "acme_notes", "a team's table", spec.columns, spec.key, carried=REQUIRED))
    builtin_origin = plugins.origin
    monkeypatch.setattr(plugins, "origin", lambda group, name: "acme-rulegauge==0.1.0"
                        if (group, name) == ("rulegauge.tables", "acme_notes") else builtin_origin(group, name))
    assert carried_tables()["acme_notes"] == IF_PRESENT and carried_tables()["questions"] == REQUIRED
    assert missing_note("acme_notes") == ("; table 'acme_notes' is declared by a plug-in (rulegauge.tables, from "
                                          "acme-rulegauge==0.1.0), and this run was made without it")
    assert missing_note("questions") == ""
