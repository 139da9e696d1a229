"""Table rows for plain loops: named fields and string-keyed records."""

import pandas as pd

from harness.core.tablerows import records, rows


def test_rows_and_records_keep_values_and_order() -> None:
    df = pd.DataFrame({"question_id": ["q2", "q1"], "rank": [3, 1]})
    assert [(r.question_id, r.rank) for r in rows(df)] == [("q2", 3), ("q1", 1)]
    assert [r.Index for r in rows(df, index=True)] == [0, 1]
    assert records(df) == [{"question_id": "q2", "rank": 3}, {"question_id": "q1", "rank": 1}]
