"""Answer metrics declared: their facts (kind, direction, scope, default, description).

The facts of the answer metrics, known to the comparison, gate, policy and reports without
the answering code (this module imports only the metric registry); their computations bind
to the same families in :mod:`rulegauge.answering.answer_metrics`. Loaded with the answering
stage (:mod:`rulegauge.answering.stage`, plug-in group ``rulegauge.stages``), which
:func:`rulegauge.metrics.info.resolve` loads on a name it does not know.

References: Gao et al. 2023 (ALCE) for context recall and citation precision/recall, at page
level; Lin & Demner-Fushman 2006 for nugget (fact) recall.
"""

from __future__ import annotations

import math

from rulegauge.metrics.family import declare

UNIT = (0.0, 1.0)  # a share or a flag
COUNT = (0.0, math.inf)  # a count or a time

_ALCE = "Gao et al. 2023 (ALCE), at page level"
declare("context_recall", kind="answer", bounds=UNIT, direction="higher", scope="answerable",
        description="requirements with a page in the read / requirements", reference=_ALCE)
declare("citation_precision", kind="answer", bounds=UNIT, direction="higher", scope="answerable",
        default=float("nan"),
        description="relevant distinct cited pages / distinct cited pages, over answers that cite "
                    "(NaN when nothing resolvable is cited: abstentions left out of means)",
        reference=_ALCE)
declare("citation_recall", kind="answer", bounds=UNIT, direction="higher", scope="answerable",
        description="requirements with a cited page / requirements", reference=_ALCE)
declare("dangling_markers", kind="answer", bounds=COUNT, direction="lower", scope="all",
        description="distinct cited numbers with no passage read")
declare("no_citation", kind="answer", bounds=UNIT, direction="lower", scope="answered",
        description="1 if an answered answer cites no passage read")
declare("abstained", kind="answer", bounds=UNIT, direction="none", scope="all",
        description="1 if the answerer abstained (mean: the abstention rate)")
declare("abstention_correct", kind="answer", bounds=UNIT, direction="higher", scope="all",
        description="1 if abstained exactly when the question is unanswerable (error: 0; mean: "
                    "the abstention accuracy)")
declare("fence_pass", kind="answer", bounds=UNIT, direction="higher", scope="responded",
        description="1 if the answer fence passes the text (0.0 on error: empty)")
declare("letter_density", kind="answer", bounds=UNIT, direction="none", scope="responded",
        description="the fence's letters / non-space characters of the text (0.0 if empty)")
declare("latency_ms", kind="answer", bounds=COUNT, direction="lower", scope="all", measured=True,
        description="wall time of the call in ms (the answers table's column: measured, "
                    "not stored in answer_metrics)")
declare("error", kind="answer", bounds=UNIT, direction="lower", scope="all",
        description="1 if the call failed")
declare("fact_recall", kind="answer", bounds=UNIT, direction="higher", scope="responded", default=float("nan"),
        description="reference facts the answer states / facts (rulegauge.answering.facts: per "
                    "sentence, stemmed); undefined (NaN, left out of means) without facts",
        reference="Lin & Demner-Fushman 2006 (nugget recall)")
declare("judge_fact_recall", kind="answer", bounds=UNIT, direction="higher", scope="responded",
        default=float("nan"),
        description="facts the judge (rulegauge.answering.judge) says the answer states / facts; "
                    "only for judged answers, NaN when a verdict is missing")
