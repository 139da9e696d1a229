"""The table conformance suite over every registered table, and docs/schemas.md current."""

from dataclasses import replace

import pytest

from rulegauge.store.schema import Kept
from rulegauge.store.tables import TABLES
from rulegauge.testing.tables import check_table, schema_doc_problems


@pytest.mark.parametrize("name", TABLES.names())
def test_every_registered_table_declaration_holds_together(name):
    assert check_table(name) == ()


def test_schema_doc_is_current():
    problems, skipped = schema_doc_problems()
    assert problems == () and skipped is None


def test_broken_declarations_are_named():
    spec = TABLES.get("metrics")
    bad = replace(spec, key=(*spec.key, "nope"), kept=Kept(("nope2",), only="value"), carried="sometimes",
                  record="rulegauge.nowhere.Thing")
    problems = "\n".join(check_table(bad))
    for want in ("key column 'nope'", "names column 'nope2'", "kept.only column 'value' is double",
                 "carried is 'sometimes'", "does not name an importable class"):
        assert want in problems, want
