"""One TensorBoard event file: TFRecord framing of `Event` protobufs (tensorboardX's copy of TensorBoard's
event.proto), appended as they come so that TensorBoard can read a file that is still growing.

Record layout (TensorFlow's TFRecord, which TensorBoard's reader expects):
    uint64 length | uint32 masked_crc32c(length) | byte data[length] | uint32 masked_crc32c(data)
all little-endian; masked_crc32c(x) = ((crc >> 15) | (crc << 17)) + 0xa282ead8 (mod 2**32), CRC-32C from Google's
`google-crc32c` (a Kiln dependency already; native, unlike tensorboardX's pure-Python fallback). The first record is
the `file_version: "brain.Event:2"` event TensorBoard's writers start with.
"""
import os
import struct
import time

_HEADER = 8 + 4 + 4  # length, its CRC, the data's CRC


def _masked_crc(data):
    import google_crc32c
    crc = google_crc32c.value(bytes(data))
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data):
    """`data` as one TFRecord record (bytes)."""
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", _masked_crc(header)) + data + struct.pack("<I", _masked_crc(data))


class FileFull(RuntimeWarning):
    """max_file_size would be passed by the next record (MindSpore logs a warning and stops writing the file)."""


class EventFile:
    """Appends framed events to `path`, created on the first write (as MindSpore creates its file lazily).

    Args:
        path (str): the file.
        max_file_size (int or None): the most bytes the file may hold; a record that would pass it raises FileFull
            and is not written.
    """

    def __init__(self, path, max_file_size=None):
        self.path, self._left, self._f = path, max_file_size, None

    def _write_record(self, data):
        rec = frame(data)
        if self._left is not None:
            if len(rec) > self._left:
                raise FileFull(f"'max_file_size' reached: there are {self._left} bytes left, but the file "
                               f"'{self.path}' needs {len(rec)} bytes for the next record.")
            self._left -= len(rec)
        self._f.write(rec)

    def write(self, event):
        """Appends the Event protobuf `event` (its file is created with the version event first)."""
        if self._f is None:
            from tensorboardX.proto import event_pb2
            f = open(self.path, "wb")
            try:
                os.chmod(self.path, 0o600)
            except OSError:
                pass
            self._f = f
            self._write_record(event_pb2.Event(wall_time=time.time(), file_version="brain.Event:2")
                               .SerializeToString())
        self._write_record(event.SerializeToString())

    def flush(self):
        """Writes the buffered records to the file."""
        if self._f is not None:
            self._f.flush()

    def close(self):
        """Flushes and closes the file (a file never written stays absent)."""
        if self._f is not None:
            f, self._f = self._f, None
            f.close()
