"""A table written part by part into one Parquet file, atomically: the sink
:meth:`rulegauge.store.rundir.RunWriter.stream` hands out."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from rulegauge.core.atomic import atomic_file


@dataclass
class PartSink:
    """``put(part)`` writes one part (one Parquet row group); ``rows``: rows written so far."""

    write: Callable[[pa.Table], object]
    rows: int = 0

    def __call__(self, part: pa.Table) -> None:
        self.write(part)
        self.rows += part.num_rows


@contextmanager
def parquet_parts(out: Path, within: Path, schema: pa.Schema, *, statistics: list[str],
                  cast: Callable[[pa.Table], pa.Table]) -> Iterator[PartSink]:
    """A :class:`PartSink` writing each part, ``cast`` and given ``schema``'s metadata, into
    the Parquet file ``out`` (statistics of the ``statistics`` columns), which appears when
    the block ends without error (:func:`rulegauge.core.atomic.atomic_file`; ``within``: the
    folder no link may lead out of)."""
    with atomic_file(out, within) as tmp, pq.ParquetWriter(tmp, schema, write_statistics=statistics) as w:
        yield PartSink(lambda part: w.write_table(cast(part).replace_schema_metadata(schema.metadata)))
