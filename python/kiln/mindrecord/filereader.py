"""FileReader: reads the rows of MindRecord files as dicts (MindSpore's `mindspore.mindrecord.FileReader`)."""
import os

from . import _reader
from .errors import ParamTypeError, ParamValueError
from .filewriter import check_filename


class FileReader:
    """Reads MindRecord files row by row.

    Args:
        file_name (str | list[str]): one shard file (all shards of its data set are read, in the order its header
            lists them) or a list of files (exactly those, in that order).
        num_consumer (int): MindSpore's reader thread count, in [1, max(number of CPUs, 4)] (default 4); Kiln
            reads in the calling thread, so it is only checked.
        columns (list[str], optional): the fields to read (default: all).
        operator: reserved by MindSpore; ignored.

    Rows (get_next) are dicts: scalar fields first (sorted by name) as Python int/float/str, then bytes fields as
    bytes and array fields as NumPy arrays of the schema's dtype and shape (-1 resolved), as MindSpore.

    Raises:
        ParamValueError: a bad file name or num_consumer. ParamTypeError: columns not a list. ValueError: a file
        missing, a column not in the schema. RuntimeError: a missing or mismatched index file, a truncated or
        corrupt file, files of different schemas.
    """

    def __init__(self, file_name, num_consumer=4, columns=None, operator=None):
        if isinstance(file_name, list):
            for f in file_name:
                check_filename(f)
        else:
            check_filename(file_name)
        if num_consumer is None:
            raise ParamValueError("Parameter num_consumer is None.")
        if not isinstance(num_consumer, int) or isinstance(num_consumer, bool):
            raise ParamValueError("Parameter num_consumer is not int.")
        hi = max(os.cpu_count() or 1, 4)  # MindSpore checks only a value passed, so the default 4 always works
        if not 1 <= num_consumer <= hi:
            raise ParamValueError(f"Parameter num_consumer: {num_consumer} should between 1 and {hi}.")
        if columns:
            if not isinstance(columns, list):
                raise ParamTypeError("columns", "list")
        self._set = _reader.ShardSet("FileReader", _reader.expand_files("FileReader", file_name))
        schema = self._set.schema
        if columns:
            unknown = [c for c in columns if c not in schema.fields]
            if unknown:
                raise ValueError(f"FileReader: Invalid data, column name: {unknown[0]} can not found in schema "
                                 f"{sorted(schema.fields)}.")
            raw = [c for c in schema.raw_fields if c in columns]
            blob = [c for c in columns if c in schema.blob_fields]
            self._columns = raw + blob
        else:
            self._columns = list(schema.raw_fields) + list(schema.blob_fields)
        self._closed = False

    def get_next(self):
        """A generator of the rows (dicts, see the class docstring), in file order.

        Raises:
            RuntimeError: the reader is closed; a truncated or corrupt row."""
        if self._closed:
            raise RuntimeError("FileReader.get_next: the reader is closed.")
        s = self._set
        for i in range(len(s)):
            row = s.read(i, self._columns)
            yield {c: (_reader.raw_value("FileReader", s.schema, c, row[c], s.where(i))
                       if c in s.schema.raw_fields else row[c]) for c in self._columns}

    def close(self):
        """Closes the files (idempotent)."""
        if not self._closed:
            self._set.close()
            self._closed = True

    def schema(self):
        """dict: the schema, as given to FileWriter.add_schema."""
        return self._set.schema.content()

    def len(self):
        """int: the number of rows."""
        return len(self._set)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
