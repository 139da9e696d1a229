"""Reading one run: summary, per-language table, score bands, the HTML report, tuning.

Modules, in pipeline order:

* ``summary``    per-config summary
* ``languages``  metrics per question language
* ``bands``      score bands of relevant and non-relevant chunks
* ``headline``   best config against the service config; per-config intervals
* ``figures``    the report's charts
* ``report``     one self-contained HTML report
* ``tune``       config selection by k-fold cross-validation over questions
"""

__all__ = ["bands", "figures", "headline", "languages", "report", "summary", "tune"]
