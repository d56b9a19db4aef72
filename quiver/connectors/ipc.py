"""Arrow IPC files (Feather v2, `.arrow`): memory-mapped, so a read hands out batches whose
buffers point into the page cache with no copy; large files split by record batch."""
from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc

from quiver.connectors.base import ReadOptions
from quiver.connectors.files import FilePiece, FileReadError, project_file_batch
from quiver.connectors.object_store import open_input_file
from quiver.connectors.options import option_choice
from quiver.connectors.paths import DataFile, file_uri

CODECS = {"none": None, "uncompressed": None, "lz4": "lz4", "zstd": "zstd"}


def open_ipc(path: str) -> ipc.RecordBatchFileReader | ipc.RecordBatchStreamReader:
    """A reader over the memory-mapped file (ranged reads for an object): the random-access file
    format, else the stream format."""
    try:
        source = open_input_file(path)
    except OSError as e:
        raise FileReadError(f"could not open Arrow IPC file {file_uri(path)}: {e}") from e
    try:
        return ipc.open_file(source)
    except pa.ArrowInvalid:
        source.seek(0)
    try:
        return ipc.open_stream(source)
    except pa.ArrowInvalid as e:
        raise FileReadError(
            f"{file_uri(path)} is not an Arrow IPC file or stream (Feather v1 is not supported): {e}") from e


class IpcFormat:
    """The `FileFormat` for Arrow IPC / Feather v2."""

    name = "arrow"

    def check_options(self, options: ReadOptions) -> None:
        return None

    def infer_schema(self, files: Sequence[DataFile], options: ReadOptions) -> pa.Schema:
        return open_ipc(files[0].path).schema

    def pieces(self, file: DataFile, target_bytes: int) -> list[FilePiece]:
        """A file over 1.5x the target is cut into runs of record batches (file format only)."""
        if file.size <= target_bytes * 3 // 2:
            return [FilePiece(file, None, file.size)]
        reader = open_ipc(file.path)
        if not isinstance(reader, ipc.RecordBatchFileReader) or reader.num_record_batches < 2:
            return [FilePiece(file, None, file.size)]
        n = reader.num_record_batches
        chunks = min(n, -(-file.size // target_bytes))
        bounds = [n * i // chunks for i in range(chunks + 1)]
        return [FilePiece(file, tuple(range(lo, hi)), file.size * (hi - lo) // n)
                for lo, hi in zip(bounds, bounds[1:]) if hi > lo]

    def count_rows(self, files: Sequence[DataFile]) -> int | None:
        total = 0
        for f in files:
            reader = open_ipc(f.path)
            if not isinstance(reader, ipc.RecordBatchFileReader):
                return None
            total += sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches))
        return total

    def read_piece(
        self, piece: FilePiece, schema: pa.Schema, columns: list[str], predicate: pc.Expression | None,
        options: ReadOptions, partition: dict[str, pa.Scalar],
    ) -> Iterator[pa.RecordBatch]:
        reader = open_ipc(piece.file.path)
        try:
            if isinstance(reader, ipc.RecordBatchFileReader):
                ids = piece.row_groups if piece.row_groups is not None else range(reader.num_record_batches)
                batches = (reader.get_batch(i) for i in ids)
            else:
                batches = iter(reader)
            for batch in batches:
                yield project_file_batch(batch, schema, columns, partition)
        except pa.ArrowInvalid as e:
            raise FileReadError(f"could not read Arrow IPC file {file_uri(piece.file.path)}: {e}") from e

    def check_writable(self, schema: pa.Schema) -> None:
        return None

    def check_write_options(self, options: ReadOptions) -> None:
        self.extension(options)

    def extension(self, options: ReadOptions) -> str:
        codec = option_choice(options, "compression", list(CODECS), "none")
        return ".arrow" if CODECS[codec] is None else f".{codec}.arrow"

    def open_writer(self, path: str, schema: pa.Schema, options: ReadOptions) -> IpcFileWriter:
        codec = CODECS[option_choice(options, "compression", list(CODECS), "none")]
        return IpcFileWriter(path, schema, codec)


class IpcFileWriter:
    """One output Arrow IPC file (random-access format, readable as Feather v2)."""

    def __init__(self, path: str, schema: pa.Schema, codec: str | None):
        self.sink = pa.OSFile(path, "wb")
        self.writer = ipc.new_file(self.sink, schema, options=ipc.IpcWriteOptions(compression=codec))

    def write(self, batch: pa.RecordBatch) -> None:
        self.writer.write_batch(batch)

    def close(self) -> None:
        self.writer.close()
        self.sink.close()
