"""The run store: table declarations and schemas, run directories, provenance, baselines, SQL.

Modules, in pipeline order:

* ``schema``         Column, TableSpec and the TABLES registry
* ``tables``         the kernel's table schemas (questions, arm_ranks, fused, metrics ...); a product's
                     tables are declared by the product (rulegauge.answering.tables, rulegauge.rulings.tables)
* ``casting``        frames and Arrow tables cast to a registered schema
* ``manifest``       manifest.json read without links, its shape and table columns checked
* ``runlock``        the one-writer-per-run lock (flock on .lock, O_NOFOLLOW)
* ``part_sink``      a table written part by part into one Parquet file, atomically
* ``rundir``         Run, RunWriter, open_run: runs/<id>/ with manifest.json
* ``readback``       run tables back to records (questions with facts, documents, chunks)
* ``provenance``     manifest contents: hashes, versions, git commit
* ``baseline``       sides of a comparison; compact committable baselines
* ``query``          DuckDB views over every run (`rulegauge query`)
"""

__all__ = ["baseline", "casting", "manifest", "part_sink", "provenance", "query", "readback",
           "rundir", "runlock", "schema", "tables"]
