"""Reading one run: summary, per-language table, score bands, the HTML report, tuning.

Modules, in pipeline order:

* ``summary``    per-config summary
* ``languages``  metrics per question language
* ``anchors``    a config's score anchors: RRF's arms/(k+1), or another method's ceiling and axis
* ``band_checks`` the fused table checked against its configs before bands are read
* ``bands``      score bands of relevant and non-relevant chunks
* ``headline``   best config against the service config; per-config intervals
* ``figures``    the report's charts
* ``selection``  which configs the report charts (top N, service, arms alone, -c)
* ``sweeps``     metric against k or an arm's weight, one line per arm subset
* ``band_panels`` score bands as small multiples, one panel per charted config
* ``report_html`` the report's HTML blocks: CSS, script, images, tables, headline
* ``report_sections`` the report's grid sections: sweeps and band small multiples
* ``report``     one self-contained HTML report
* ``trend_chart`` the report's trend section: this run among earlier runs of its gold set
* ``serve_report`` the report served on 127.0.0.1, re-rendered when a run lands
* ``tune``       config selection by k-fold cross-validation over questions
"""

__all__ = ["anchors", "band_checks", "band_panels", "bands", "figures", "headline", "languages", "report",
           "report_html", "report_sections", "selection", "serve_report", "summary", "sweeps", "trend",
           "trend_chart", "trend_series", "tune"]
