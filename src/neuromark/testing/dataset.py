"""The data set check: the :class:`~neuromark.data.entry.DatasetEntry` contract (tonic's
``DatasetTestCase`` is the model), on a tiny file set in the entry's real layout.

The checks, each a function (so that a test class can run them one per test) and all of
them together in :func:`check_dataset_entry`:

- :func:`check_declares_contract`: ``name``, a ``citation``, ``urls`` (a tuple of http(s)
  addresses), a ``manifest`` of ``sha256:<hex>``/``md5:<hex>`` digests, ``download`` and
  ``verify``;
- :func:`check_verify`: ``verify(root)`` passes on the fixture, and
  :func:`check_verify_names_damage` fails naming the file when it is missing, truncated or
  corrupted (a corrupted one: with the expected digest);
- :func:`check_reads_without_download`: building a split and reading a sample touches
  no network and never calls ``download``;
- :func:`check_sample`: a sample has the declared shape, dtype and label range;
- :func:`check_synthesize`: an entry with a generator writes a layout that verifies and
  reads, reuses a complete one, writes the same bytes for the same seed, and never writes
  into (or deletes) a folder holding a user's file.

A fixture is written by ``write(root)``; a ``SHA256SUMS`` record (as ``download`` and
``synthesize`` leave) is added when it writes none (:func:`fixture_root`).

How a plugin author uses it in their own test::

    from neuromark.testing.dataset import check_dataset_entry
    from my_plugin import MY_ENTRY, write_tiny_layout

    def test_my_data_set_keeps_the_contract(tmp_path):
        check_dataset_entry(MY_ENTRY, write_tiny_layout, tmp_path, split="test",
                            shape=(100, 2), dtype="float32", num_classes=5,
                            damage="test/recording_0.npy")
"""

from __future__ import annotations

import contextlib
import re
import socket
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.data.entry import SUMS, DatasetEntry, SynthesizingEntry, layout_files, read_sums, write_sums
from neuromark.errors import DataError
from neuromark.testing.guard import contract_check
from neuromark.testing.results import ContractError, raise_problems

#: A sample reader: ``(entry, root, split, options) -> (input, label)``.
SampleReader = Callable[[Any, Path, str, Mapping[str, Any]], tuple[Any, Any]]
DAMAGES = ("missing", "truncated", "corrupted")


def first_sample(entry: Any, root: Path, split: str, options: Mapping[str, Any]) -> tuple[Any, Any]:
    """Sample 0 of ``split`` read from ``root`` (``entry.load(root, split, **options)[0]``)."""
    return entry.load(root, split, **options)[0]


def fixture_root(write: Callable[[Path], Any], root: Path) -> Path:
    """``root`` made and filled by ``write``, with a ``SHA256SUMS`` of its files when
    ``write`` left none."""
    root.mkdir(parents=True)
    write(root)
    if not (root / SUMS).is_file():
        write_sums(root, layout_files(root))
    return root


@contract_check
def check_declares_contract(entry: Any) -> None:
    """``entry`` declares the contract (see the module docstring)."""
    problems = []
    if not isinstance(entry, DatasetEntry):
        missing = [a for a in ("name", "citation", "urls", "manifest", "download", "verify")
                   if not hasattr(entry, a)]
        raise ContractError(f"{entry!r} is not a DatasetEntry: missing {', '.join(missing)}")
    if not isinstance(entry.name, str) or not entry.name:
        problems.append(f"name is {entry.name!r}, not a non-empty string")
    if not isinstance(entry.citation, str) or not entry.citation:
        problems.append("no citation (a BibTeX entry or reference text)")
    if not isinstance(entry.urls, tuple) or not all(
            isinstance(u, str) and u.startswith(("https://", "http://")) for u in entry.urls):
        problems.append(f"urls is {entry.urls!r}, not a tuple of http(s) addresses")
    for file, digest in dict(entry.manifest).items():
        if not isinstance(digest, str) or not re.fullmatch(r"(sha256:[0-9a-f]{64}|md5:[0-9a-f]{32})",
                                                           digest):
            problems.append(f"manifest[{file!r}] = {digest!r}: not 'sha256:<hex>' or 'md5:<hex>'")
    if not callable(entry.download) or not callable(entry.verify):
        problems.append("download and verify must be methods")
    raise_problems(f"data set {getattr(entry, 'name', entry)!r}", problems)


@contract_check
def check_verify(entry: Any, root: Path) -> None:
    """``verify(root)`` passes on an intact fixture."""
    try:
        entry.verify(root)
    except DataError as exc:
        raise ContractError(f"data set {entry.name!r}: verify() refused the intact fixture at "
                            f"{root}: {exc}") from exc


def damage_file(path: Path, how: str) -> None:
    """Break ``path``: ``missing`` (deleted), ``truncated`` (half kept) or ``corrupted``
    (one byte in the middle flipped)."""
    if how == "missing":
        path.unlink()
    elif how == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[:len(data) // 2])
    elif how == "corrupted":
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    else:
        raise ValueError(f"damage {how!r}: one of {', '.join(DAMAGES)}")


@contract_check
def check_verify_names_damage(entry: Any, root: Path, damage: str, how: str) -> str:
    """Damage ``root/damage`` (:func:`damage_file`), then ``verify`` must raise
    :class:`DataError` naming the file (and, for a corrupted one, what was expected);
    returns the message. The fixture at ``root`` is left damaged."""
    damage_file(root / damage, how)
    try:
        entry.verify(root)
    except DataError as exc:
        message = str(exc)
    else:
        raise ContractError(f"data set {entry.name!r}: verify() passed with {damage} {how}")
    name = Path(damage).name
    if name not in message or (how == "corrupted" and "expected" not in message[message.index(name):]):
        raise ContractError(f"data set {entry.name!r}: verify() with {damage} {how} said "
                            f"{message!r}, without naming {name!r}"
                            + (" and the expected digest" if how == "corrupted" else ""))
    return message


@contextlib.contextmanager
def no_network(entry: Any = None) -> Iterator[None]:
    """While inside: any network use (``urllib.request``, a socket connecting) and, with
    ``entry``, its ``download`` raise :class:`ContractError`; restored afterwards."""
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise ContractError("a data set touched the network (or called download) while reading")

    saved = [(urllib.request, "urlopen"), (urllib.request, "urlretrieve"), (socket.socket, "connect")]
    if entry is not None:
        saved.append((type(entry), "download"))
    originals = [(owner, attr, owner.__dict__.get(attr)) for owner, attr in saved]
    try:
        for owner, attr in saved:
            setattr(owner, attr, refuse)
        yield
    finally:
        for owner, attr, original in originals:
            if original is None:
                delattr(owner, attr)
            else:
                setattr(owner, attr, original)


@contract_check
def check_reads_without_download(entry: Any, root: Path, split: str = "test",
                                 options: Mapping[str, Any] | None = None,
                                 sample: SampleReader = first_sample) -> tuple[Any, Any]:
    """Building ``split`` from ``root`` and reading a sample uses no network and never
    calls ``download``; the split is not empty. Returns the sample."""
    options = dict(options or {})
    with no_network(entry):
        data = entry.load(root, split, **options)
        if len(data) == 0:
            raise ContractError(f"data set {entry.name!r}: split {split!r} of the fixture is empty")
        return sample(entry, root, split, options)


@contract_check
def check_sample(entry: Any, root: Path, split: str = "test",
                 options: Mapping[str, Any] | None = None, *, shape: tuple[int, ...] | None = None,
                 dtype: str = "float32", num_classes: int | None = None,
                 sample: SampleReader = first_sample) -> tuple[Any, Any]:
    """A sample of ``split`` has the declared ``shape``, ``dtype`` and a label in
    ``[0, num_classes)``; returns it."""
    x, y = sample(entry, root, split, dict(options or {}))
    arr = np.asarray(x)
    problems = []
    if shape is not None and arr.shape != tuple(shape):
        problems.append(f"a sample has shape {arr.shape}, declared {tuple(shape)}")
    if arr.dtype != np.dtype(dtype):
        problems.append(f"a sample has dtype {arr.dtype}, declared {np.dtype(dtype)}")
    if num_classes is not None and not 0 <= int(y) < num_classes:
        problems.append(f"a label is {y!r}, outside [0, {num_classes})")
    raise_problems(f"data set {entry.name!r}", problems)
    return x, y


@contract_check
def check_synthesize(entry: Any, tmp: Path, synth: Mapping[str, Any], split: str = "test",
                     options: Mapping[str, Any] | None = None,
                     sample: SampleReader = first_sample) -> Path:
    """The generator's contract (see the module docstring), in folders under ``tmp``;
    returns the first layout written."""
    if not isinstance(entry, SynthesizingEntry):
        raise ContractError(f"data set {entry.name!r} has no synthesize(root, **options)")
    options = dict(options or {})
    with no_network():
        a = entry.synthesize(tmp / "a", **synth)
        check_verify(entry, a)
        sample(entry, a, split, options)
        stamp = (a / SUMS).stat().st_mtime_ns
        problems = []
        if entry.synthesize(a, **synth) != a or (a / SUMS).stat().st_mtime_ns != stamp:
            problems.append("a complete layout of the same options was written again, not reused")
        b = entry.synthesize(tmp / "b", **synth)
        if read_sums(a / SUMS) != read_sums(b / SUMS):
            problems.append("the same options (and seed) wrote different bytes")
        user = tmp / "user"
        user.mkdir()
        (user / "NOTES.txt").write_text("mine")
        try:
            entry.synthesize(user, **synth)
        except DataError as exc:
            if "NOTES.txt" not in str(exc):
                problems.append(f"refused a folder holding a user's file without naming it: {exc}")
        else:
            problems.append("wrote into a folder holding a user's file (NOTES.txt)")
        if (user / "NOTES.txt").read_text() != "mine" or len(list(user.iterdir())) != 1:
            problems.append("changed a folder holding a user's file")
        if "seed" in synth:  # another recipe into a synthesized folder holding a user's file
            (a / "NOTES.txt").write_text("mine")
            try:
                entry.synthesize(a, **{**synth, "seed": int(synth["seed"]) + 7})
            except DataError:
                pass
            else:
                problems.append("replaced a synthesized folder holding a user's file")
            if not (a / "NOTES.txt").is_file():
                problems.append("deleted a user's file in a synthesized folder")
    raise_problems(f"data set {entry.name!r}: synthesize", problems)
    return a


@contract_check
def check_dataset_entry(entry: Any, write: Callable[[Path], Any], tmp: str | Path, *,
                        damage: str, split: str = "test", options: Mapping[str, Any] | None = None,
                        shape: tuple[int, ...] | None = None, dtype: str = "float32",
                        num_classes: int | None = None, synth: Mapping[str, Any] | None = None,
                        sample: SampleReader = first_sample) -> None:
    """Every check of this module on ``entry``: ``write(root)`` writes the tiny fixture (a
    fresh one for each damage), ``damage`` names a file of it (relative) that ``verify``
    checks; ``synth``: options of a small ``synthesize`` (None: not checked)."""
    tmp = Path(tmp)
    check_declares_contract(entry)
    root = fixture_root(write, tmp / "intact")
    check_verify(entry, root)
    check_reads_without_download(entry, root, split, options, sample)
    check_sample(entry, root, split, options, shape=shape, dtype=dtype, num_classes=num_classes,
                 sample=sample)
    for how in DAMAGES:
        check_verify_names_damage(entry, fixture_root(write, tmp / how), damage, how)
    if synth is not None:
        check_synthesize(entry, tmp / "synth", synth, split, options, sample)
