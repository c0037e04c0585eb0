"""The real files of ``tests/fixtures/realdata`` (provenance: its ``PROVENANCE.md``).

Large files are stored xz-compressed; :func:`real_file` unpacks one into a test's
``tmp_path`` and checks that the bytes are the original's (SHA-256 of the upstream file).
"""

from __future__ import annotations

import hashlib
import lzma
import shutil
from pathlib import Path

REALDATA = Path(__file__).parent / "fixtures" / "realdata"

#: SHA-256 of each upstream file (as published; a ``.xz`` copy unpacks to these bytes).
SHA256 = {
    "prophesee/evt2_sample.raw": "27ca511eb34f92d8a041152dd0bbe3ba9972e6fec820353937fe55a31eabbd60",
    "prophesee/evt3_sample.raw": "1c57e604b7f988a834bcf90f1be26d144fb5527aa15f9c61940f5916bff5b919",
    "prophesee/evt3_sample.npy": "8dbd3f60166612c5e3147a68542cba75507c5415ec028501e06fc229aaa6bb3d",
    "prophesee/sample_ncars.dat": "37c942280817be4615f995f28877c81f9391eee639d0584ddb9a8c6e6833b4db",
    "speech_commands/yes_1000ms.wav": "b40e137a9d25bbdf135e03fa0f6bff4696d0bfc203aef8bc73b27c9428ba5a92",
    "speech_commands/no_1000ms.wav": "21e2b640385e4a751d480a87ae5a1633a6ff00e838b0e2ad48b22f8034e946d8",
    "speech_commands/armkit/down.wav": "8f30991a68043a94ff55adcc0d322708ea722a3765e984639c6f8d24d36a651d",
    "speech_commands/armkit/yes.wav": "ea8b8f94e45ee9ced8beaddca92e708272eb4396001a6244a176cfc1164410da",
    "speech_commands/armkit/right_left_up.wav":
        "35ba10a1224b9eeb1674d98e7c1fe633e6b0f605cc4f8a864310ab9a53ffd52b",
    "speech_commands/armkit/yes_no_go_stop.wav":
        "9151fffc3b8927d374769b188f4a81bd8ac2921b9c2f41714e1c6cc144c0f659",
    "nir/cnn_sinabs.nir": "e2fa55bda7aab5a772485e1b690358bcb825b303eca7dc426e3973937fcb5bcb",
    "nir/braille_noDelay_bias_zero.nir": "f1aab3ce74024e7feac508a03b04c58d483ee3a01e293dba4b53d0b519b8650e",
    "nir/lif_norse.nir": "0dd9143ef624892d4a6461f474d93653a337b3490a62e23ec9ec5d18fde9b7b6",
    "nir/lif_rockpool.nir": "f493a2cd00e20be6305acd7808faa1d4558993c91f3af43454bf637371e543d6",
}


def real_file(name: str, tmp_path: Path) -> Path:
    """A copy of real file ``name`` (``"prophesee/evt2_sample.raw"``) under ``tmp_path``,
    unpacked when stored as ``name.xz``; its SHA-256 must be the upstream file's."""
    stored = REALDATA / name
    out = tmp_path / Path(name).name
    if stored.is_file():
        shutil.copyfile(stored, out)
    else:
        out.write_bytes(lzma.decompress((REALDATA / f"{name}.xz").read_bytes()))
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    assert digest == SHA256[name], f"{name}: the fixture is not the upstream file"
    return out
