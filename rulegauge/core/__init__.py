"""Shared foundations every stage may use; imports nothing else of rulegauge.

Modules, in pipeline order:

* ``errors``     exception types; ValidationError carries every Problem
* ``registry``   Registry[T]: name -> object, duplicates raise
* ``ordering``   score desc, id asc: the only tie rule
* ``text``       text normalisation and tokenisation
* ``digest``     file SHA-256 (hashlib.file_digest)
* ``atomic``     atomic file and folder writes (unique temp name + rename)
* ``params``     keyword parameters checked against a constructor's signature
* ``httpcall``   one bounded HTTP call (one total deadline, body cap, same-origin
  redirects), retries with backoff, redaction of URLs, headers and echoed secrets
* ``journal``    append-only durable JSON-lines journals keyed by fields (answers, arm calls)
* ``jsonl``      the one JSON-lines reader (records with file:line, problems collected)
* ``tablerows``  rows of a DataFrame for plain loops, typed as dynamic; string-column codes a table's builder recorded
* ``engines``    execution engines (registry): local, ray; the run's engine session
* ``cluster``    the Ray cluster connection: reachability, join or start, size
* ``reaper``     a watchdog that ends what a block started once its owner dies (kill -9 too)
* ``names``      the one check of names that become paths; NFC ids, invisible characters
* ``limits``     upper bounds on input sizes and user-given counts
* ``redact``     credentials out of URLs, headers, parameters and text
* ``plugins``    built-in and entry-point components (arms, answerers, metrics, fusion): one discovery
* ``extras``     which extra (pip install 'rulegauge[NAME]') provides which import; missing ones as exit 2
"""

__all__ = ["atomic", "cluster", "config_order", "digest", "engines", "errors", "extras", "httpcall", "journal", "jsonl",
           "limits", "names", "ordering", "params", "plugins", "reaper", "redact", "registry", "tablerows", "text"]
