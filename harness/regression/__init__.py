"""Regression testing of runs: statistics, comparison, change rules, policy, gate, reports.

Modules, in pipeline order:

* ``stats``        paired permutation test, bootstrap CI, Holm, wins/ties/losses
* ``compare``      compare two sides question by question
* ``changes``      per-question change rules
* ``policy``       gate policy TOML
* ``gate``         the gate: policy checks on a comparison
* ``gate_report``  terminal, Markdown, JUnit and JSON reports
"""

__all__ = ["changes", "compare", "gate", "gate_report", "policy", "stats"]
