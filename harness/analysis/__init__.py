"""Reading one run: summary, per-language table, score bands, the HTML report, tuning.

Modules, in pipeline order:

* ``summary``    per-config summary
* ``languages``  metrics per question language
* ``anchors``    a config's score anchors: RRF's arms/(k+1), or another method's ceiling and axis
* ``band_checks`` the fused table checked against its configs before bands are read
* ``bands``      score bands of relevant and non-relevant chunks
* ``headline``   best config against the service config; per-config intervals
* ``figures``    the report's charts
* ``report``     one self-contained HTML report
* ``tune``       config selection by k-fold cross-validation over questions
"""

__all__ = ["anchors", "band_checks", "bands", "figures", "headline", "languages", "report", "summary", "trend",
           "trend_series", "tune"]
