"""Reading one run: summary, per-language table, score bands, the HTML report.

Modules, in pipeline order:

* ``summary``    per-config summary
* ``languages``  metrics per question language
* ``bands``      score bands of relevant and non-relevant chunks
* ``report``     one self-contained HTML report
"""

__all__ = ["bands", "languages", "report", "summary"]
