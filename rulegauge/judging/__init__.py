"""Judging: pool what the gold set never judged, judge it in a browser, measure agreement.

Above ``analysis`` (it reads runs, gold sets and judgments; only the CLI imports it).

Modules:

* ``poolfile``   pool files (JSON lines with the gold set's hash): records, read, write
* ``pool``       ``rulegauge pool``: depth-K pooling of configs and arms, minus judged pages
* ``highlight``  the question's terms marked in a page's text (HTML)
* ``session``    a judging session: what is left for each judge, judgments appended
* ``page``       the judging page (HTML, CSS and script; no external URLs)
* ``server``     ``rulegauge judge``: the page and its JSON API on 127.0.0.1 (stdlib http.server)
* ``agreement``  Cohen's and Fleiss' kappa, bootstrap interval, confusion matrix
* ``compare_labels`` `rulegauge judges agreement`: two label sets compared pair by pair
* ``rankings``   config rankings under two label sets, and Kendall's tau between them
* ``endpoint``   a chat answerer opened as a judge or generator (temperature 0, preflighted)
* ``llm``        an LLM relevance judge (after UMBRELA)
* ``answer_match`` where a proposed answer sentence occurs in its page (exact or fuzzy)
* ``dedup``      near-duplicate questions: token Jaccard at or above a threshold
* ``rulegen``    the rule-based question generator (``--answerer extractive``)
* ``llmgen``     the LLM question generator (prompt questions-v1, replies parsed, cached)
* ``proposals``  proposal files: generated questions with their pages (read, write)
* ``generate``   ``rulegauge goldset generate``: proposals per page, counts, manifest
* ``review``     reviewing proposals: accept / edit / reject, decisions appended as made
* ``review_page`` the review page (HTML; keys a e r s)
* ``accept``     ``rulegauge goldset accept``: accepted proposals -> a gold set with provenance
* ``migration_review`` the review file of ``goldset migrate``: flagged labels as a pool
"""
