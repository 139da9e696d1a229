"""The answering read and the answerers: read, re-rank, answer, cite, fence, score.

Modules, in pipeline order:

* ``read``            candidate pool, floors: the passages answered from
* ``rerankers``       re-rankers of the read (registry)
* ``requests``        what an answerer is asked and returns (passages, requests, responses)
* ``answerers``       answerer registry and the built-in answerers
* ``prompt``          the versioned answer prompt
* ``prompt_file``     a versioned prompt file: read, hashed and rendered once for every prompt
* ``citations``       citation markers -> passages read
* ``fence``           the answer fence (garbage check)
* ``tables``          the answering tables' declarations (reads, answers, citations, answer_metrics ...)
* ``stage``           answering's hooks into the kernel: run stage, metric facts, compared table
* ``metric_facts``    the answer metrics' facts (direction, scope, description)
* ``answer_metrics``  answer metric computations (facts in ``metric_facts``)
* ``answer_rows``     a run's answer-metric rows: the table plus the measured metrics (latency)
* ``specs``           which answerers a run asks (LABEL=NAME, suites), built and closed
* ``plan``            plan phase: options settled against the run (configs, read, labels)
* ``asking``          ask phase: what the journals lack, on the engine, journaled
* ``consolidate``     consolidate and judge phases: journals -> answers, verdicts
* ``runner``          answer a run: plan -> ask -> consolidate -> judge -> tables
* ``journal``         append-only answer journal (resumable answering)
* ``calls``           one answerer call (errors become rows) and the job types engines share
* ``fanout``          where an answerer's calls are made, per engine (registry)
* ``ray_ask``         the ray engine: calls to one threaded Ray actor per answerer
* ``frames``          run tables <-> answering records
* ``sidebyside``      answerers side by side with paired differences
* ``sidebyside_print`` the side-by-side figures as a table, Markdown or JSON
* ``answers_view``    the answers themselves, per question, side by side
* ``suite``           answerer suites (TOML)
* ``preflight``       endpoint checks before a run asks anything
* ``facts``           fact recall against a question's reference facts
* ``judge``           the optional fact judge
* ``gguf``            assemble the packaged GGUF model from its parts
"""

__all__ = [
    "answer_metrics", "answer_rows", "answerers", "answers_view", "asking", "breaker", "calls", "citations",
    "consolidate",
    "fact_labels", "fact_words", "facts", "fanout", "fence", "frames", "gguf", "journal", "judge",
    "metric_facts", "plan", "preflight", "prompt", "prompt_file", "ray_ask", "read", "requests", "rerankers",
    "runner", "sidebyside", "sidebyside_print", "specs", "stage", "suite", "tables",
]
