"""Gold sets: the v1 records, the YAML parser and writer, and sets derived from structure.

Modules, in pipeline order:

* ``records``   GoldSet, Question, PageRef (optional grade) records
* ``yamlsafe``  untrusted YAML: UTF-8 only, aliases bounded, no cycles
* ``judged``    a question's explicit judgments (``judged:``): checked, read, written
* ``source``    where problems are placed: the file, its YAML nodes, field readers
* ``documents`` the ``documents:`` entries: checked, paths confined, pages resolved
* ``questions`` the ``questions:`` entries: ids, requirements, games, facts
* ``parse``     load_goldset / validate_goldset: every problem with file:line
* ``write``     write v1 gold-set YAML
* ``judgments`` judgments files (JSON lines): read, checked against a gold set, appended
* ``labels``    label sets: one grade per (question, page), from a gold set or judgments
* ``merge``     ``rulegauge goldset merge``: judgments -> a new gold-set version with provenance
* ``derive``    gold sets derived from PDF outlines (and the helpers derivations share)
* ``beir``      ``rulegauge goldset import-beir``: a BEIR-format collection -> gold set + corpus files
* ``parallel``  gold sets derived from parallel corpora (ask in one language, answer in another)
"""

__all__ = ["beir", "derive", "documents", "judged", "judgments", "labels", "merge", "parallel", "parse",
           "questions", "records", "source", "write", "yamlsafe"]
