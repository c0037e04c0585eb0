"""Sequential streaming of event files for detection, as metavision's ``SequentialDataLoader``
feeds NeuroBench's Gen4 task, with its known faults fixed.

``batch_size`` slots each stream one file at a time, in sorted file order; a slot takes the
next file when its file ends. One batch is ``num_tbins`` bins of ``delta_t_us`` per slot:

- data: ``(tensor (B, T, C, H, W) float32, keep (B,) float32)``; ``keep[b] = 0`` when slot
  ``b`` starts a new file (or is padding), so the model resets that slot's recurrent state
  (the peer computes this mask but never applies it);
- targets: a list of ``B`` entries ``(stream, boxes)``: the file's stem and its ground truth
  of these bins (:func:`~neuromark.benchmarks.event_detection.boxes.bin_labels`, stamped at
  each bin's end), ``(None, empty)`` for padding slots once the files run out
  (``padding=True`` as the peer);
- :attr:`SequentialStream.stamps` ``(B, T)``: the stamp (µs) of each bin of the last batch, for
  decoders that stamp detections.

Events are read window by window from the memory map; nothing holds a whole file.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.benchmarks.event_detection.boxes import LabelPipeline, bin_labels
from neuromark.benchmarks.event_detection.encoder_cost import event_tensor_cost
from neuromark.data.event_contract import check_boxes, check_dat
from neuromark.data.prophesee import BOX_DTYPE, dat_records, load_boxes, read_boxes, read_dat, read_dat_header
from neuromark.processors.event_frames import EventTensor


@dataclass(frozen=True)
class EventFile:
    """One recording: its events file, labels file and length (µs, last event + 1); with
    ``on_invalid="drop"``, the records dropped and the count per rule (events and boxes)."""

    dat: Path
    boxes: Path
    duration_us: int
    on_invalid: str = "error"
    dropped: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64), compare=False, repr=False)
    invalid: dict[str, int] = field(default_factory=dict, compare=False)

    @property
    def stream(self) -> str:
        return self.dat.name.removesuffix(".dat").removesuffix("_td")


def event_file(dat: Path, on_invalid: str = "error") -> EventFile:
    """The :class:`EventFile` of a ``<stem>_td.dat`` with its ``<stem>_bbox.npy``, its
    events checked against the input contract (:mod:`~neuromark.data.event_contract`)."""
    stem = dat.name.removesuffix(".dat").removesuffix("_td")
    header = read_dat_header(dat)
    records = dat_records(dat, header)
    dropped, invalid = check_dat(dat, records, header.width, header.height, on_invalid)
    n, tail = len(records), 0  # tail: records dropped at the end of the file
    if len(dropped):
        ends = dropped[::-1] == n - 1 - np.arange(len(dropped))
        tail = len(ends) if ends.all() else int(np.argmin(ends))
    last = int(records["t"][n - 1 - tail]) + 1 if n > tail else 0
    return EventFile(dat, dat.with_name(f"{stem}_bbox.npy"), last, on_invalid, dropped, invalid)


class SequentialStream:
    """Batches over ``files`` (see the module docstring); iterate it once per pass."""

    def __init__(self, files: Sequence[EventFile], tensor: EventTensor, labels: LabelPipeline,
                 batch_size: int = 1) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.files, self.tensor, self.labels, self.batch_size = list(files), tensor, labels, batch_size
        self.stamps = np.zeros((batch_size, tensor.num_tbins), np.int64)
        self.padded_samples = 0
        #: events turned into tensors and windows (samples) read in the last pass
        self.events_read = 0
        self.windows_read = 0

    def front_end_cost(self) -> Any:
        """The event tensor's cost (issue 47.4), with the mean events per window of the
        last pass (None before one)."""
        mean = self.events_read / self.windows_read if self.windows_read else None
        return event_tensor_cost(self.tensor, mean)

    @property
    def window_us(self) -> int:
        return self.tensor.delta_t_us * self.tensor.num_tbins

    def __len__(self) -> int:
        """Number of batches (slots take files greedily, shortest-queue first)."""
        loads = [0] * self.batch_size
        for f in self.files:
            i = loads.index(min(loads))
            loads[i] += -(-max(f.duration_us, 1) // self.window_us)
        return max(loads, default=0)

    def __iter__(self) -> Iterator[tuple[Any, list[tuple[str | None, np.ndarray]]]]:
        import torch

        queue = list(self.files)
        slots: list[list[Any] | None] = [None] * self.batch_size  # [file, position, boxes]
        self.padded_samples = 0
        self.events_read = self.windows_read = 0
        t, dt = self.tensor.num_tbins, self.tensor.delta_t_us
        while True:
            keep = np.ones(self.batch_size, np.float32)
            for b in range(self.batch_size):
                slot = slots[b]
                if slot is None or slot[1] >= slot[0].duration_us:
                    slots[b] = [queue.pop(0), 0, None] if queue else None
                    keep[b] = 0.0
                    if slots[b] is not None:
                        slots[b][2] = self.labels(read_boxes(slots[b][0].boxes, slots[b][0].on_invalid))
            if all(s is None for s in slots):
                return
            data = np.zeros((self.batch_size, t, self.tensor.channels, self.tensor.height,
                             self.tensor.width), np.float32)
            targets: list[tuple[str | None, np.ndarray]] = []
            for b, slot in enumerate(slots):
                if slot is None:
                    targets.append((None, np.zeros(0, BOX_DTYPE)))
                    self.stamps[b] = 0
                    self.padded_samples += 1
                    continue
                file, pos, boxes = slot
                events = read_dat(file.dat, start_us=pos, end_us=pos + self.window_us, backend="numpy",
                                  dropped=file.dropped)
                data[b] = self.tensor(events, start_us=pos)
                self.events_read += len(events)
                self.windows_read += 1
                frames = bin_labels(boxes, pos, dt, t)
                targets.append((file.stream, np.concatenate(frames)))
                self.stamps[b] = pos + dt * np.arange(1, t + 1)
                slot[1] = pos + self.window_us
            yield (torch.from_numpy(data), torch.from_numpy(keep)), targets


def list_files(folder: str | Path, on_invalid: str = "error") -> tuple[list[EventFile], list[Path]]:
    """(files with labels, sorted; ``.dat`` files skipped because their labels are missing
    or empty, as the peer skips unlabelled test files); events and boxes checked first."""
    kept, skipped = [], []
    for dat in sorted(Path(folder).glob("*_td.dat")):
        f = event_file(dat, on_invalid)
        boxes, invalid = (check_boxes(f.boxes, load_boxes(f.boxes), on_invalid) if f.boxes.is_file()
                          else (np.zeros(0, BOX_DTYPE), {}))
        f.invalid.update({f"boxes: {k}": v for k, v in invalid.items()})
        if len(boxes) == 0:
            skipped.append(dat)
        else:
            kept.append(f)
    return kept, skipped


def invalid_records(files: Sequence[EventFile]) -> dict[str, dict[str, int]]:
    """Records dropped per file and rule (``on_invalid: drop``), for the results' details."""
    return {f"{f.dat.parent.name}/{f.dat.name}": dict(f.invalid) for f in files if f.invalid}


