"""Regression testing of runs: statistics, comparison, change rules, policy, gate, reports.

Modules, in pipeline order:

* ``evidence``     the "why": how relevant pages moved, every arm's rank
* ``pairing``      which sides and configs a comparison pairs; provenance checks
* ``compare``      compare two sides question by question
* ``changes``      per-question change rules
* ``policy``       gate policy TOML
* ``completeness`` what a gate needs: two complete runs over the same questions
* ``unjudged``     does a regression rest on unjudged pages? (the condensed-list metric says)
* ``gate``         the gate: policy checks on a comparison
* ``gate_report``  terminal, Markdown, JUnit and JSON reports
* ``answerer_view`` one answerer of a side under a common label (answerer gates)
* ``gate_power``   the gate's MDE per gated metric, with its SD estimate
* ``power``        power and the minimum detectable effect (MDE) of the paired test
* ``stability``    how stable a chosen config is: bootstrap share at the top, its ties
"""

__all__ = ["answerer_view", "changes", "compare", "completeness", "evidence", "gate", "gate_power", "gate_report",
           "llm_admission", "pairing", "policy", "power", "stability", "unjudged"]
