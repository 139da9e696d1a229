"""Facts about tables are declared on the tables: kept in baselines, carried by --from,
read back into records; the stages that act on them read the declarations."""

from __future__ import annotations

import pytest

from rulegauge.store.readback import READERS
from rulegauge.store.schema import IF_PRESENT, REQUIRED, Column, S, carried_tables, kept_tables, table
from rulegauge.store.tables import TABLES


def test_baselines_keep_the_declared_tables_with_their_sort_keys():
    kept = kept_tables()
    assert set(kept) == {"metrics", "answer_metrics", "answers", "questions", "configs", "fused",
                         "search_latency"}
    assert kept["fused"].only == "relevant" and kept["answers"].blank == ("text",)
    for name, k in kept.items():  # every sort column is a column of the table
        assert set(k.sort) <= {c.name for c in TABLES.get(name).columns}, name


def test_from_carries_the_declared_tables():
    assert carried_tables() == {"questions": REQUIRED, "documents": REQUIRED, "chunks": REQUIRED,
                                "arm_ranks": REQUIRED, "question_facts": IF_PRESENT,
                                "question_judgments": IF_PRESENT, "search_latency": IF_PRESENT}


def test_tables_that_read_back_into_records_have_a_reader():
    declared = {n for n, s in TABLES.items() if s.record}
    # facts and judgments come back with the questions
    assert set(READERS) == declared - {"question_facts", "question_judgments"}
    assert "Question" in TABLES.get("question_facts").record
    assert "Question" in TABLES.get("question_judgments").record


def test_a_table_declares_only_known_carry_rules():
    with pytest.raises(ValueError, match="carried must be"):
        table("bogus_carry", "doc", ("x",), Column("x", S, "x"), carried="sometimes")
    assert "bogus_carry" not in TABLES
