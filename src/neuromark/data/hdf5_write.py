"""Writing spike data sets in the Heidelberg (SHD/SSC) HDF5 layout (the readers are in
:mod:`neuromark.data.hdf5_spikes`, which re-exports :func:`write_shd_file`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from neuromark.errors import DataError
from neuromark.io_atomic import atomic_path

#: Number of cochlea channels in SHD/SSC.
SHD_CHANNELS = 700
#: Largest finite float16 value; spike times (s) must stay below it.
_FLOAT16_MAX = float(np.finfo(np.float16).max)
#: Largest label / speaker id the uint16 datasets hold.
_UINT16_MAX = int(np.iinfo(np.uint16).max)


def _as_h5_array(values: Any) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.kind == "U":
        arr = np.char.encode(arr, "utf-8")
    return arr


def write_shd_file(
    path: str | os.PathLike[str],
    times: Sequence[ArrayLike],
    units: Sequence[ArrayLike],
    labels: ArrayLike,
    speakers: ArrayLike | None = None,
    keys: Sequence[str] | None = None,
    meta_info: Mapping[str, ArrayLike] | None = None,
    *,
    channels: int = SHD_CHANNELS,
    attrs: Mapping[str, Any] | None = None,
    compression: str | None = None,
) -> Path:
    """Write spike samples in the exact SHD layout (atomically, deterministically).

    Args:
        path: output ``.h5`` file.
        times: per sample, spike times in seconds (stored as float16, as in SHD).
        units: per sample, channel indices (stored as uint16), same lengths as ``times``.
        labels: (N,) class indices.
        speakers: (N,) speaker ids (default all 0).
        keys: class names, written to ``extra/keys`` as UTF-8 bytes (default: none).
        meta_info: per-speaker arrays for ``extra/meta_info`` (e.g. gender, age, body_height);
            strings are stored as UTF-8 bytes.
        channels: units must be below this.
        attrs: optional root attributes (e.g. provenance of a synthesised corpus).
        compression: optional h5py compression of the datasets (``"gzip"``); SHD uses none.

    Each sample is sorted by (time, unit) after rounding to float16, so readers that assume
    sorted times (tonic's ``ToFrame``) see every spike. Returns the path written.

    Raises:
        DataError: mismatched lengths, units out of range, negative/non-finite times or
            times beyond the float16 range, labels or speaker ids outside 0..65535 (uint16),
            naming the sample.
    """
    import h5py

    target = Path(path)
    n = len(times)
    label_arr = np.asarray(labels).reshape(-1)
    if len(units) != n or label_arr.shape[0] != n:
        raise DataError(f"{target}: {n} times arrays, {len(units)} units arrays and "
                        f"{label_arr.shape[0]} labels; all must be equal")
    speaker_arr = np.zeros(n, dtype=np.uint16) if speakers is None else np.asarray(speakers).reshape(-1)
    if speaker_arr.shape[0] != n:
        raise DataError(f"{target}: {speaker_arr.shape[0]} speakers for {n} samples")
    times16 = np.empty(n, dtype=object)
    units16 = np.empty(n, dtype=object)
    for i, (t, u) in enumerate(zip(times, units)):
        t64 = np.asarray(t, dtype=np.float64).reshape(-1)
        u64 = np.asarray(u).reshape(-1)
        if t64.shape != u64.shape:
            raise DataError(f"{target}: sample {i}: {t64.size} times but {u64.size} units")
        if t64.size and (not np.isfinite(t64).all() or t64.min() < 0 or t64.max() > _FLOAT16_MAX):
            raise DataError(f"{target}: sample {i}: spike times must be finite, >= 0 and "
                            f"<= {_FLOAT16_MAX} s (float16)")
        if u64.size and (u64.min() < 0 or u64.max() >= channels):
            raise DataError(f"{target}: sample {i}: units must be in 0..{channels - 1}, got "
                            f"{u64.min()}..{u64.max()}")
        t16 = t64.astype(np.float16)
        u16 = u64.astype(np.uint16)
        order = np.lexsort((u16, t16))
        times16[i], units16[i] = t16[order], u16[order]
    if n and (label_arr < 0).any():
        raise DataError(f"{target}: sample {int(np.flatnonzero(label_arr < 0)[0])}: negative label")
    _check_uint16(label_arr, "label", target)
    _check_uint16(speaker_arr, "speaker id", target)

    opts: dict[str, Any] = {"track_times": False}
    if compression:
        opts["compression"] = compression
    with atomic_path(target) as tmp:
        with h5py.File(tmp, "w", track_order=False) as handle:
            spikes = handle.create_group("spikes")
            spikes.create_dataset("times", data=times16, dtype=h5py.vlen_dtype(np.float16), **opts)
            spikes.create_dataset("units", data=units16, dtype=h5py.vlen_dtype(np.uint16), **opts)
            handle.create_dataset("labels", data=label_arr.astype(np.uint16), **opts)
            extra = handle.create_group("extra")
            extra.create_dataset("speaker", data=speaker_arr.astype(np.uint16), **opts)
            extra.create_dataset("keys", data=_as_h5_array(list(keys or [])).astype("S")
                                 if keys else np.zeros(0, dtype="S1"), track_times=False)
            meta = extra.create_group("meta_info")
            for name in sorted(meta_info or {}):
                meta.create_dataset(name, data=_as_h5_array(meta_info[name]), track_times=False)
            for key, value in (attrs or {}).items():
                handle.attrs[key] = value
    return target


def _check_uint16(values: np.ndarray, what: str, target: Path) -> None:
    """Labels and speaker ids are stored as uint16: anything else would wrap around silently."""
    if not values.size:
        return
    wrong = (values < 0) | (values > _UINT16_MAX)
    if values.dtype.kind == "f":
        wrong |= values != np.floor(values)  # fractions and NaN would be truncated silently
    bad = np.flatnonzero(wrong)
    if bad.size:
        i = int(bad[0])
        raise DataError(f"{target}: sample {i}: {what} {values[i]} is not an integer in "
                        f"0..{_UINT16_MAX} (stored as uint16; {bad.size} sample(s) out of range)")
