"""The small cases neuromark's central tests run for the keywords family:
:data:`TASK_CASES`, :data:`DATASET_CASES` and :data:`SUT_CASES`, found through
``neuromark.registry.families()`` (what each case holds: ``docs/extending.md``, "The
family's cases")."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def tiny_corpus(root: Path) -> None:
    """A tiny MSWC layout under ``root``: 2 base words (English, 6 training and 2 test clips
    each) and the 10 Persian words (4 evaluation clips each), one tone per class (1 s at
    48 kHz, 150 + 35 x class Hz, seeded jitter and noise). Needs soundfile."""
    import numpy as np
    import soundfile as sf

    from neuromark.benchmarks.keywords.mswc import KEYWORD_LANGUAGE, KEYWORDS

    rng = np.random.default_rng(0)
    lists: dict[str, list[str]] = {"base_train": [], "base_val": [], "base_test": [], "fa/evaluation": []}
    words = [(0, "base_train", 6), (1, "base_train", 6), (0, "base_test", 2), (1, "base_test", 2)]
    words += [(c, "fa/evaluation", 4) for c in range(100, 110)]
    for label, split, n in words:
        word, lang = KEYWORDS[label], KEYWORD_LANGUAGE[label]
        for j in range(n):
            rel = f"{word}/{split.replace('/', '_')}_{j}.wav"
            path = root / "MSWC" / lang / "clips" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            t = np.arange(48_000) / 48_000
            f0 = 150 + 35 * (label % 100)
            clip = 0.3 * np.sin(2 * np.pi * f0 * t * rng.uniform(0.98, 1.02))
            clip += 0.01 * rng.standard_normal(48_000)
            sf.write(path, clip.astype(np.float32), 48_000)
            lists[split].append(f"{rel},{word},{lang}")
    for split, rows in lists.items():
        (root / "MSWC" / f"{split}.csv").parent.mkdir(parents=True, exist_ok=True)
        (root / "MSWC" / f"{split}.csv").write_text("LINK,WORD,LANGUAGE\n" + "".join(r + "\n" for r in rows),
                                                    encoding="utf-8")


def fscil_case(tmp_path: Path, cache: Path, monkeypatch: Any) -> dict[str, Any]:
    """FSCIL on :func:`tiny_corpus` (written into ``cache`` once soundfile is known to be
    there): a small M5 trained one epoch, 2-shot sessions of the Persian words, 2 repeats
    (one session order per unit)."""
    return {"config": {"task": "fscil", "benchmark": {"id": "fscil-tiny", "version": "1.0"},
                       "data": {"root": "cache:keywords/tiny", "languages": ["fa"]},
                       "model": {"name": "keyword_m5",
                                 "options": {"n_input": 20, "n_output": 200, "stride": 2, "n_channel": 8,
                                             "input_kernel": 4, "pool_kernel": 2},
                                 "checkpoint": "cache:checkpoints/m5.pt"},
                       "train": {"epochs": 1, "batch_size": 4, "lr": 0.01},
                       "fscil": {"shots": 2, "support_pool": 2, "query_pool": 2, "query_shots": 2,
                                 "repeats": 2, "seed": 1},
                       "eval": {"complexity": ["synaptic_operations"]}},
            "repeat": True,
            "needs": ("soundfile",),
            "prepare": lambda: tiny_corpus(cache / "keywords" / "tiny"),
            "flags": {"coverage": True, "units": 2, "caches": ["checkpoints/m5.pt", "decoded"]}}


def write_speech_commands(root: Path) -> None:
    """Two words (``yes``, ``zero``) by three speakers, 0.75 s of noise each at 16 kHz, with
    the validation and test lists. Needs soundfile."""
    import numpy as np
    import soundfile as sf

    rng = np.random.default_rng(6)
    for word in ("yes", "zero"):
        (root / word).mkdir()
        for speaker in ("s1", "s2", "s3"):
            sf.write(str(root / word / f"{speaker}_nohash_0.wav"),
                     (0.1 * rng.standard_normal(12_000)).astype(np.float32), 16_000, subtype="PCM_16")
    (root / "validation_list.txt").write_text("yes/s2_nohash_0.wav\nzero/s2_nohash_0.wav\n")
    (root / "testing_list.txt").write_text("yes/s3_nohash_0.wav\nzero/s3_nohash_0.wav\n")


def write_mswc(root: Path) -> None:
    """The MSWC lists with one noise clip (40,000 samples at 48 kHz) per listed word: two base
    training words, one validation, one test, and each incremental language's first word.
    Needs soundfile."""
    import numpy as np
    import soundfile as sf

    from neuromark.benchmarks.keywords.mswc import INCREMENTAL_LANGUAGES, KEYWORD_LANGUAGE, KEYWORDS

    rng = np.random.default_rng(8)
    folder = root / "MSWC"
    lists = {"base_train": [0, 1], "base_val": [2], "base_test": [3]}
    lists.update({f"{lang}/evaluation": [KEYWORD_LANGUAGE.index(lang)] for lang in INCREMENTAL_LANGUAGES})
    for name, labels in lists.items():
        rows = ["LINK,WORD,LANGUAGE"]
        for label in labels:
            lang, word = KEYWORD_LANGUAGE[label], KEYWORDS[label]
            clip = folder / lang / "clips" / word / f"{name.replace('/', '_')}.wav"
            clip.parent.mkdir(parents=True, exist_ok=True)
            sf.write(str(clip), (0.1 * rng.standard_normal(40_000)).astype(np.float32), 48_000,
                     subtype="PCM_16")
            rows.append(f"{word}/{clip.name},{word},{lang}")
        (folder / f"{name}.csv").parent.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


def mswc_entry() -> Any:
    """The MSWC entry: the FSCIL task reads it without registering it."""
    from neuromark.benchmarks.keywords.mswc import MSWC_ENTRY

    return MSWC_ENTRY


TASK_CASES = {"fscil": fscil_case}
DATASET_CASES: dict[str, dict[str, Any]] = {
    "speech_commands": {"write": write_speech_commands, "split": "testing", "shape": (16_000,),
                        "num_classes": 35, "damage": "zero/s3_nohash_0.wav", "needs": ("soundfile",),
                        "synth": {"speakers": 3, "words": ["yes", "zero"]}, "synth_programs": ("espeak-ng",)},
    "mswc": {"entry": mswc_entry, "write": write_mswc, "split": "base_test", "shape": (48_000,),
             "num_classes": 200, "damage": "MSWC/fa/evaluation.csv", "needs": ("soundfile",),
             "no_synth": "the keywords generator speaks 200 words: too slow for this case"},
}
SUT_CASES: dict[str, dict[str, Any]] = {}
