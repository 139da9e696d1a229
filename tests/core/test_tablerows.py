"""Table rows for plain loops: named fields and string-keyed records."""

import pandas as pd

from rulegauge.core.tablerows import records, rows


def test_rows_and_records_keep_values_and_order() -> None:
    df = pd.DataFrame({"question_id": ["q2", "q1"], "rank": [3, 1]})
    assert [(r.question_id, r.rank) for r in rows(df)] == [("q2", 3), ("q1", 1)]
    assert [r.Index for r in rows(df, index=True)] == [0, 1]
    assert records(df) == [{"question_id": "q2", "rank": 3}, {"question_id": "q1", "rank": 1}]


def test_codes_are_known_only_for_the_table_they_were_recorded_for() -> None:
    import gc

    import numpy as np
    import pyarrow as pa

    from rulegauge.core.tablerows import known_codes, known_runs, remember_codes

    t = pa.table({"c": ["x", "x", "y"]})
    remember_codes(t, "c", np.array([0, 2]), np.array([0, 1], np.int32), ("x", "y"))  # runs: rows 0-1, row 2
    got = known_codes(t, "c")
    assert got is not None and got[0].tolist() == [0, 0, 1] and got[0].dtype == np.int64 and got[1] == ["x", "y"]
    runs = known_runs(t, "c")
    assert runs is not None and runs[0].tolist() == [0, 2] and runs[1].tolist() == [0, 1] and runs[2] == ["x", "y"]
    assert known_codes(t, "other") is None and known_runs(t, "other") is None
    assert known_codes(pa.table({"c": ["x", "x", "y"]}), "c") is None  # an equal table is another table
    del t, got
    gc.collect()
    from rulegauge.core import tablerows

    assert not [k for k in tablerows.__dict__["_CODES"] if k[1] == "c"]  # forgotten with the table
