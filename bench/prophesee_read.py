"""Prophesee ``.dat`` reading: expelliarmus vs the numpy memory-map reader, same file.

Writes a seeded file of ``--events`` events (1280x720, 60 s), reads it whole with both
backends (interleaved rounds, median seconds), checks the arrays are equal, and times a
windowed read (50 ms at 30 s) on the memory map.

With ``--raw``: decodes Prophesee's EVT 2.0 and EVT 3.0 samples
(``tests/fixtures/realdata/prophesee``, their event words repeated ``--tile`` times) with
neuromark's own decoders and with expelliarmus (interleaved rounds, median seconds), checks
the pixels agree (EVT 2.0: times too; EVT 3.0 times differ by design, see
``neuromark.data.prophesee_evt``) and prints ours / expelliarmus.

Run: ``python bench/prophesee_read.py [--events 10000000] [--rounds 5]`` or
``python bench/prophesee_read.py --raw [--tile 20] [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from neuromark.data.event_dtypes import make_camera_events
from neuromark.data.prophesee import read_dat, write_dat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--raw", action="store_true", help="time the .raw decoders instead")
    parser.add_argument("--tile", type=int, default=20, help="copies of the samples' words")
    args = parser.parse_args()
    if args.raw:
        raw_main(args.tile, args.rounds)
        return
    rng = np.random.default_rng(0)
    n = args.events
    ev = make_camera_events(np.sort(rng.integers(0, 60_000_000, n)), rng.integers(0, 1280, n),
                            rng.integers(0, 720, n), rng.integers(0, 2, n))
    with tempfile.TemporaryDirectory() as tmp:
        path = write_dat(Path(tmp) / "bench_td.dat", ev, width=1280, height=720)
        times: dict[str, list[float]] = {"numpy": [], "expelliarmus": [], "window_50ms": []}
        for _ in range(args.rounds):
            for backend in ("numpy", "expelliarmus"):
                start = time.perf_counter()
                got = read_dat(path, backend=backend)
                times[backend].append(time.perf_counter() - start)
                assert np.array_equal(got, ev), backend
            start = time.perf_counter()
            read_dat(path, start_us=30_000_000, end_us=30_050_000, backend="numpy")
            times["window_50ms"].append(time.perf_counter() - start)
    for name, values in times.items():
        print(f"{name:14s} median {statistics.median(values):.4f} s over {len(values)} rounds ({n} events)")
    ratio = statistics.median(times["numpy"]) / statistics.median(times["expelliarmus"])
    print(f"numpy / expelliarmus: {ratio:.2f}")


def _tiled(words_bytes: bytes, encoding: str, tile: int) -> np.ndarray:
    """The sample's words ``tile`` times, each copy's TIME_HIGH values moved past the last
    copy's (a valid, time-ordered stream ``tile`` times as long)."""
    dtype, shift, mask = ("<u4", 28, 0x0FFFFFFF) if encoding == "evt2" else ("<u2", 12, 0xFFF)
    words = np.frombuffer(words_bytes, dtype)
    high = (words >> shift) == 0x8
    span = int((words[high] & mask).max()) - int((words[high] & mask).min()) + 1
    copies = []
    for k in range(tile):
        copy = words.copy()
        copy[high] = (copy[high] & ~np.array(mask, dtype)) | ((copy[high] & mask) + k * span)
        copies.append(copy)
    return np.concatenate(copies)


def raw_main(tile: int, rounds: int) -> None:
    """Time neuromark's .raw decoding against expelliarmus on the real samples, tiled."""
    import lzma

    import expelliarmus

    from neuromark.data.prophesee import read_raw_file
    from neuromark.data.prophesee_evt import DECODERS
    from neuromark.data.prophesee_raw import read_raw_header
    from neuromark.data.prophesee_raw_read import raw_words

    root = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "realdata" / "prophesee"
    with tempfile.TemporaryDirectory() as tmp:
        for encoding in ("evt2", "evt3"):
            data = lzma.decompress((root / f"{encoding}_sample.raw.xz").read_bytes())
            src = Path(tmp) / f"src_{encoding}.raw"
            src.write_bytes(data)
            offset = read_raw_header(src).offset
            path = Path(tmp) / f"{encoding}.raw"
            path.write_bytes(data[:offset] + _tiled(data[offset:], encoding, tile).tobytes())
            times: dict[str, list[float]] = {"neuromark": [], "decode only": [],
                                             "expelliarmus": []}
            header = read_raw_header(path)
            for _ in range(rounds):
                start = time.perf_counter()
                ours = read_raw_file(path).events
                times["neuromark"].append(time.perf_counter() - start)
                start = time.perf_counter()
                words, _ = raw_words(path, header, encoding)
                DECODERS[encoding](words)
                times["decode only"].append(time.perf_counter() - start)
                start = time.perf_counter()
                theirs = expelliarmus.Wizard(encoding=encoding).read(str(path))
                times["expelliarmus"].append(time.perf_counter() - start)
            same = ("x", "y", "p", "t") if encoding == "evt2" else ("x", "y", "p")
            if len(ours) == len(theirs):
                assert all(np.array_equal(ours[k], theirs[k]) for k in same), encoding
            med = {k: statistics.median(v) for k, v in times.items()}
            print(f"{encoding}: {len(ours)} events ({path.stat().st_size} bytes), medians over "
                  f"{rounds} rounds: neuromark read (header, decode, contract) "
                  f"{med['neuromark']:.4f} s, its decode only {med['decode only']:.4f} s, "
                  f"expelliarmus {med['expelliarmus']:.4f} s; neuromark / expelliarmus: read "
                  f"{med['neuromark'] / med['expelliarmus']:.2f}, decode "
                  f"{med['decode only'] / med['expelliarmus']:.2f}")


if __name__ == "__main__":
    main()
