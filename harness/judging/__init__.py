"""Judging: pool what the gold set never judged, judge it in a browser, measure agreement.

Above ``analysis`` (it reads runs, gold sets and judgments; only the CLI imports it).

Modules:

* ``poolfile``   pool files (JSON lines with the gold set's hash): records, read, write
* ``pool``       ``harness pool``: depth-K pooling of configs and arms, minus judged pages
* ``highlight``  the question's terms marked in a page's text (HTML)
* ``session``    a judging session: what is left for each judge, judgments appended
* ``page``       the judging page (HTML, CSS and script; no external URLs)
* ``server``     ``harness judge``: the page and its JSON API on 127.0.0.1 (stdlib http.server)
* ``agreement``  Cohen's and Fleiss' kappa, bootstrap interval, confusion matrix
* ``compare_labels`` `harness judges agreement`: two label sets compared pair by pair
* ``rankings``   config rankings under two label sets, and Kendall's tau between them
"""

__all__ = ["agreement", "compare_labels", "endpoint", "highlight", "llm", "page", "pool", "poolfile", "rankings",
           "server", "session"]
