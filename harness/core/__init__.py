"""Shared foundations every stage may use; imports nothing else of the harness.

Modules, in pipeline order:

* ``atomic``    atomic file and folder writes (unique temp name + rename)
* ``digest``    file SHA-256 (hashlib.file_digest)
* ``errors``    exception types; ValidationError carries every Problem
* ``jsonl``     the one JSON-lines reader (records with file:line, problems collected)
* ``ordering``  score desc, id asc: the only tie rule
* ``registry``  Registry[T]: name -> object, duplicates raise
* ``text``      text normalisation and tokenisation
"""

__all__ = ["atomic", "digest", "errors", "jsonl", "ordering", "registry", "text"]
