"""Where a sweep's rows go: a list (a DataFrame at the end) or a CSV / Parquet file written as they come.

A file is written to a temporary name beside it and renamed when the sweep ends
(``_files.AtomicOutput``, the package's one atomic writer), so a sweep that fails leaves no
half-written file; a sweep with no rows still writes a valid, empty one with every column. Only
onto a new name or a regular file that is none of the sweep's inputs (checked when the sink
opens and again before the rename): a FIFO, a device node or a transcript being swept is never
replaced.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._files import AtomicOutput
from .columns import dtype_of

__all__ = ["Sink", "SweepReport"]


@dataclass(frozen=True)
class SweepReport:
    """What a sweep streamed to a file: where, how many rows, and what was skipped."""

    path: str
    rows: int
    transcripts: int
    skipped: list = field(default_factory=list)


class Sink:
    """Where rows go: a list (a DataFrame at the end) or a CSV / Parquet file written as they come."""

    def __init__(self, out: str | os.PathLike | None, columns: list[str],
                 inputs: list[str] | None = None) -> None:
        self.columns, self.count = columns, 0
        self.rows: list[dict] = []
        self.inputs = list(inputs or [])
        self._writer: Any = None  # a csv.DictWriter or a pyarrow ParquetWriter, opened with the first rows
        self.path = None if out is None else Path(out)
        if self.path is not None:
            suffix = self.path.suffix.lower()
            if suffix not in (".csv", ".parquet"):
                raise ValueError(f"out must end in .csv or .parquet, got {self.path.name!r}")
            self.output = AtomicOutput(self.path, self.inputs)
            self.path, self.tmp = self.output.target, self.output.tmp  # a link: the file it names is written
            self.kind = suffix[1:]

    def add(self, rows: list[dict]) -> None:
        self.count += len(rows)
        if self.path is None:
            self.rows.extend(rows)
        elif rows:
            self._write(rows)

    def _write(self, rows: list[dict]) -> None:
        if self.kind == "csv":
            import csv

            new = self._writer is None
            if new:
                self._file = self.tmp.open("w", newline="", encoding="utf-8")
                self._writer = csv.DictWriter(self._file, fieldnames=self.columns, extrasaction="ignore")
                self._writer.writeheader()
            self._writer.writerows(rows)
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist(rows, schema=_arrow_schema(self.columns))
        if self._writer is None:
            self._writer = pq.ParquetWriter(self.tmp, table.schema)
        self._writer.write_table(table)

    def close(self, ok: bool) -> None:
        if self.path is None:
            return
        if self._writer is None and ok:  # no rows at all: still a valid, empty file
            if self.kind == "csv":
                self.tmp.write_text(",".join(self.columns) + "\n", encoding="utf-8")
            else:
                import pyarrow.parquet as pq

                pq.write_table(_arrow_schema(self.columns).empty_table(), self.tmp)
        elif self._writer is not None:
            (self._file if self.kind == "csv" else self._writer).close()
        if ok:
            self.output.commit()  # what is there now is checked again, then replaced
        else:
            self.output.discard()


def _arrow_schema(columns: list[str]):
    import pyarrow as pa

    types = {"str": pa.string(), "float": pa.float64(), "int": pa.int64(), "bool": pa.bool_()}
    text = {"transcript", "policy", "options", "unit"}  # the sweep's own columns that are text
    return pa.schema([(c, pa.string() if c in text else types[dtype_of(c)]) for c in columns])
