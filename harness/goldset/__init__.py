"""Gold sets: the v1 records, the YAML parser and writer, and sets derived from structure.

Modules, in pipeline order:

* ``records``  GoldSet, Question, PageRef (optional grade) records
* ``parse``    load_goldset / validate_goldset: every problem with file:line
* ``write``    write v1 gold-set YAML
* ``derive``   gold sets derived from PDF outlines and parallel corpora
"""

__all__ = ["derive", "parse", "records", "write"]
