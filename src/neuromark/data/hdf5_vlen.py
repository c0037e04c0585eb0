"""A fast read of SHD's variable-length spike datasets, straight from the file's bytes.

h5py reads a variable-length dataset element by element through HDF5's type conversion
(~14 us per sample and dataset for SHD, ~30-40 us per sample for times and units), which
is a tenth to a fifth of the reference network's inference per sample at large batches.
In the layout SHD and :func:`~neuromark.data.hdf5_write.write_shd_file` use (contiguous,
unfiltered datasets of little-endian float16 / uint16 sequences), an element is stored
as 16 bytes: the sequence length (uint32) and a global heap ID (the address of a global
heap collection, uint64, and the object's index in it, uint32); the values are that
object's bytes. So a chunk of samples is one ``pread`` of its heap IDs and one of the
range of collections they point into, then a compiled copy per sample.

Format: HDF5 File Format Specification 3.0, sections III.E "Global Heap" (collection:
``GCOL``, version 1, 3 reserved bytes, collection size; each object: heap object index
(2 bytes), reference count (2), reserved (4), object size, data padded to 8 bytes; index
0 is the free space) and IV.A.2.d "Datatype" (variable-length sequences stored as
length + global heap ID), https://docs.hdfgroup.org/hdf5/develop/_f_m_t3.html.

Anything else (chunked or filtered datasets, other dtypes, a user block, offsets or
lengths not 8 bytes, other drivers) is not read here: :meth:`VlenPairReader.open`
returns None and h5py reads it. Any inconsistency found while reading (a bad signature,
an index not in its collection, a size that does not match the length, a range over
:data:`MAX_RANGE_BYTES`, unequal lengths of times and units) makes :meth:`read` return
None and h5py reads that chunk, raising its own error when the file is corrupt: the
values returned here are the bytes h5py would return, never a guess.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from neuromark._numba import numba

#: Largest byte range of heap collections read for one chunk (larger: h5py reads it).
MAX_RANGE_BYTES = 64 << 20
#: An element of a variable-length dataset as stored (HDF5 with 8-byte offsets).
_REF = np.dtype([("length", "<u4"), ("address", "<u8"), ("index", "<u4")])
_SIGNATURE = b"GCOL"


@numba.njit(cache=True, nogil=True)
def _u64(buf, p):  # pragma: no cover - compiled
    value = np.uint64(0)
    for k in range(7, -1, -1):
        value = (value << np.uint64(8)) | np.uint64(buf[p + k])
    return np.int64(value)


@numba.njit(cache=True, nogil=True)
def _locate_objects(buf, base, lengths, addresses, indices, itemsize, found):  # pragma: no cover
    """Write to ``found`` where each element's heap object starts in ``buf`` (file bytes
    from offset ``base``). Returns -1, or the first element whose object is not where and
    what its heap ID and length say."""
    size = buf.shape[0]
    for e in range(lengths.shape[0]):
        nbytes = np.int64(lengths[e]) * itemsize
        if nbytes == 0:
            continue
        p = np.int64(addresses[e]) - base
        if p < 0 or p + 16 > size or buf[p] != 71 or buf[p + 1] != 67 or buf[p + 2] != 79 \
                or buf[p + 3] != 76 or buf[p + 4] != 1:
            return e
        end = p + _u64(buf, p + 8)
        if end > size or end < p + 16:
            return e
        q, start, object_size = p + 16, np.int64(-1), np.int64(-1)
        while q + 16 <= end:
            index = np.int64(buf[q]) | (np.int64(buf[q + 1]) << 8)
            object_size = _u64(buf, q + 8)
            if index == 0 or object_size < 0:
                break
            if index == indices[e]:
                start = q + 16
                break
            q += 16 + (object_size + 7) // 8 * 8
        if start < 0 or object_size != nbytes or start + nbytes > end:
            return e
        found[e] = start
    return -1


def _element_dtype(dataset: Any) -> np.dtype | None:
    """The little-endian base dtype of a contiguous, unfiltered 1-d vlen sequence dataset
    stored at a known offset, else None."""
    import h5py

    plist = dataset.id.get_create_plist()
    if dataset.ndim != 1 or plist.get_layout() != h5py.h5d.CONTIGUOUS or plist.get_nfilters():
        return None
    if dataset.shape[0] and (dataset.id.get_offset() is None
                             or dataset.id.get_storage_size() != _REF.itemsize * dataset.shape[0]):
        return None
    kind = dataset.id.get_type()
    if not isinstance(kind, h5py.h5t.TypeVlenID):
        return None
    base = kind.get_super().dtype
    return base if base.str in ("<f2", "<u2") else None


class VlenPairReader:
    """Reads ``spikes/times`` and ``spikes/units`` of samples ``first:last`` from the bytes
    of an open SHD-layout file (module docstring); :meth:`open` it from the h5py handle."""

    def __init__(self, file: Path, times: tuple[int, np.dtype], units: tuple[int, np.dtype]) -> None:
        self.fd = os.open(file, os.O_RDONLY)
        self.times, self.units = times, units  # (offset of the heap IDs, base dtype)
        self._buf = np.empty(0, np.uint8)  # reused: fresh memory is faulted in page by page

    @classmethod
    def open(cls, handle: Any, file: Path) -> VlenPairReader | None:
        """A reader when the file's layout is the one read here, else None (use h5py)."""
        if sys.byteorder != "little" or handle.driver != "sec2":
            return None
        fcpl = handle.id.get_create_plist()
        if fcpl.get_sizes() != (8, 8) or fcpl.get_userblock() != 0:
            return None
        times, units = handle["spikes/times"], handle["spikes/units"]
        if times.shape != units.shape or not times.shape or not times.shape[0]:
            return None
        t_dtype, u_dtype = _element_dtype(times), _element_dtype(units)
        if t_dtype is None or u_dtype is None:
            return None
        return cls(file, (times.id.get_offset(), t_dtype), (units.id.get_offset(), u_dtype))

    def close(self) -> None:
        os.close(self.fd)

    def _pread(self, nbytes: int, offset: int) -> np.ndarray | None:
        if self._buf.shape[0] < nbytes:
            self._buf = np.empty(max(nbytes, 2 * self._buf.shape[0]), np.uint8)
        view = self._buf[:nbytes]
        return view if os.preadv(self.fd, [view], offset) == nbytes else None

    def _refs(self, where: int, first: int, last: int) -> np.ndarray | None:
        count = (last - first) * _REF.itemsize
        raw = self._pread(count, where + first * _REF.itemsize)
        return None if raw is None else raw.view(_REF).copy()

    def read(self, first: int, last: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(times, units, offsets (n+1,) int64) of samples ``first:last`` as h5py and
        :func:`~neuromark.data.hdf5_spikes.iter_spike_chunks` give them, or None."""
        t_refs = self._refs(self.times[0], first, last)
        u_refs = self._refs(self.units[0], first, last)
        if t_refs is None or u_refs is None or not np.array_equal(t_refs["length"], u_refs["length"]):
            return None
        lengths = t_refs["length"].astype(np.int64)
        offsets = np.zeros(lengths.shape[0] + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        times, units = np.empty(offsets[-1], self.times[1]), np.empty(offsets[-1], self.units[1])
        if offsets[-1] == 0:
            return times, units, offsets
        used = lengths > 0
        addresses = np.concatenate([t_refs["address"][used], u_refs["address"][used]])
        lo, top = int(addresses.min()), int(addresses.max())
        head = self._pread(16, top)
        if head is None or head[:4].tobytes() != _SIGNATURE:
            return None
        hi = top + int(head[8:16].view("<u8")[0])
        if not lo < hi <= lo + MAX_RANGE_BYTES:
            return None
        buf = self._pread(hi - lo, lo)
        if buf is None:
            return None
        found = np.zeros(lengths.shape[0], np.int64)
        for refs, out in ((t_refs, times), (u_refs, units)):
            if _locate_objects(buf, lo, lengths, np.ascontiguousarray(refs["address"]),
                               np.ascontiguousarray(refs["index"]), out.itemsize, found) != -1:
                return None
            # numpy copies each object (~4 GB/s here; numba's byte loops ran at ~1 GB/s)
            flat, size = out.view(np.uint8), out.itemsize
            for start, a, b in zip(found.tolist(), offsets[:-1].tolist(), offsets[1:].tolist()):
                flat[a * size:b * size] = buf[start:start + (b - a) * size]
        return times, units, offsets
