"""Gold sets: the v1 records, the YAML parser and writer, and sets derived from structure.

Modules, in pipeline order:

* ``records``   GoldSet, Question, PageRef (optional grade) records
* ``parse``     load_goldset / validate_goldset: every problem with file:line
* ``write``     write v1 gold-set YAML
* ``derive``    gold sets derived from PDF outlines (and the helpers derivations share)
* ``parallel``  gold sets derived from parallel corpora (ask in one language, answer in another)
"""

__all__ = ["derive", "parallel", "parse", "records", "write"]
