"""Figure text is literal: user-given ids with ``$`` are not mathtext (rulegauge.analysis.figures)."""

from __future__ import annotations

import io

import pandas as pd

from rulegauge.analysis.figures import interval_figure


def test_dollar_signs_in_config_ids_draw_as_text() -> None:
    frame = pd.DataFrame({"metric": ["recall@5", "recall@5"], "config_id": ["a$b", "$x^2$"],
                          "value": [0.5, 0.6], "lo": [0.4, 0.5], "hi": [0.6, 0.7]})
    fig = interval_figure(frame, service="a$b")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")  # a lone "$" would be a mathtext ParseException here
    labels = [t.get_text() for ax in fig.axes for t in ax.get_yticklabels()]
    assert "a$b" in labels and "$x^2$" in labels
    assert all(not t.get_parse_math() for ax in fig.axes for t in ax.get_yticklabels())
