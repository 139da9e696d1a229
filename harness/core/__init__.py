"""Shared foundations every stage may use; imports nothing else of the harness.

Modules, in pipeline order:

* ``errors``     exception types; ValidationError carries every Problem
* ``registry``   Registry[T]: name -> object, duplicates raise
* ``ordering``   score desc, id asc: the only tie rule
* ``text``       text normalisation and tokenisation
* ``digest``     file SHA-256 (hashlib.file_digest)
* ``atomic``     atomic file and folder writes (unique temp name + rename)
* ``jsonl``      the one JSON-lines reader (records with file:line, problems collected)
* ``tablerows``  rows of a DataFrame for plain loops, typed as dynamic
"""

__all__ = ["atomic", "digest", "errors", "jsonl", "ordering", "registry", "tablerows", "text"]
