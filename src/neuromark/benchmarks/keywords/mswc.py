"""MSWC FSCIL subset (NeuroBench): 200 spoken keywords in 15 languages, 48-kHz Ogg/Opus clips.

Layout (``mswc_fscil.tar.gz`` from the NeuroBench Hugging Face repository, which unpacks
into ``<root>/MSWC/``)::

    MSWC/base_train.csv  base_val.csv  base_test.csv     rows "path,WORD,lang" (header row)
    MSWC/<lang>/evaluation.csv                          the 10 incremental words of <lang>
    MSWC/<lang>/clips/<path from the csv>               1-s, 48-kHz, mono Ogg/Opus

Rules of the published loader (``neurobench.datasets.MSWC``), kept here:

- each line is split on ``,`` with no quoting; a header is a row whose word is ``WORD``;
- the label is the index of the word in :data:`KEYWORDS`, an exact Unicode match (curly
  apostrophes ``’``, Persian, Cyrillic): 0-99 are the base classes (5 languages x 20
  words), 100-199 the incremental ones (10 languages x 10 words);
- a clip is read from ``MSWC/<lang>/clips/<path>`` at 48 kHz, zero-padded to 1 s.

Where the published loader fails obscurely we say what happened: a missing clip names its
path and csv row; a word outside the list names the line (and a straight apostrophe
where the list has a curly one); a clip longer than 1 s is an error naming it unless
``long_clips="truncate"`` (keep the first second); a rate other than 48 kHz is an error.

No checksum is published for the subset archive (nor can it be fetched here), so
:meth:`MSWC.download` accepts ``sha256=None`` with a printed note, records the archive's
sha256 beside it, and results rely on the checksums of the decoded arrays
(:meth:`MSWC.arrays`, :func:`neuromark.data.clips.decoded_cache`).

Citation: M. Mazumder et al., "Multilingual Spoken Words Corpus", NeurIPS Datasets and
Benchmarks 2021; the FSCIL subset and protocol: Yik et al., "NeuroBench", 2023/2025.
"""

from __future__ import annotations

import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.config import jobs_within
from neuromark.data.clips import (
    LongClips,
    check_list_or_audio,
    decode_clip,
    decoded_cache,
    file_list_digest,
    read_utf8,
    unpack_tar,
)
from neuromark.data.download import file_digest
from neuromark.data.entry import Entry, sums_owned, synthesize_into
from neuromark.errors import DataError
from neuromark.io_atomic import atomic_path
from neuromark.registry import generators

URL = "https://huggingface.co/datasets/NeuroBench/mswc_fscil_subset/resolve/main/mswc_fscil.tar.gz"
#: No checksum is published for the subset archive (NeuroBench gives none); see the module notes.
SHA256: str | None = None
SAMPLE_RATE = 48_000
CLIP_SAMPLES = 48_000
SUBSETS = ("base_train", "base_val", "base_test", "evaluation")

#: (code, language, its keywords in label order), in the label order of the published
#: loader (``FSCIL_KEYWORDS`` of ``neurobench.datasets.MSWC_dataset``, "ordered by
#: decreasing number of samples in the original dataset").
LANGUAGE_WORDS: tuple[tuple[str, str, str], ...] = (
    ("en", "English",
     "surrounding appearance collection subsequently experience previously "
     "professional immediately independent successful traditional development "
     "international established information instruments construction performance "
     "university significant"),
    ("fr", "French",
     "nombreuses l’amendement nationale défavorable toutefois professeur française "
     "commission actuellement politique territoire aujourd’hui gouvernement rapidement "
     "notamment troisième plusieurs maintenant personnes cinquante"),
    ("ca", "Catalan",
     "tanmateix superior catalunya finalment treballar qualsevol principalment "
     "rectangular important mitjançant president finestres caràcter diferents "
     "programari obertures posteriorment barcelona importants informació"),
    ("de", "German",
     "allerdings arbeitete deutschland schließlich verheiratet vielleicht verschiedene "
     "bezeichnet gleichzeitig parlament unternehmen entwicklung europäischen "
     "zahlreiche geschichte verwendet anschließend hauptstadt errichtet eigentlich"),
    ("rw", "Kinyarwanda",
     "amahirwe umutekano gukomeza amafaranga abanyarwanda urubyiruko n’abandi ashobora "
     "umuryango abayobozi w’umupira perezida umukinnyi gitaramo w’amaguru abaturage "
     "amashusho minisitiri indirimbo bitandukanye"),
    ("fa", "Persian",
     "میخواستم امیدوارم تلویزیون آپارتمان بینالمللی بنابراین اسفندیار پرسپولیس "
     "بفرمایید میتوانند"),
    ("eo", "Esperanto",
     "demandis respondis sinjorino rigardis fernando ankoraŭ beatrico troviĝas "
     "ekzistas esperanto"),
    ("pt", "Portuguese",
     "enquanto correndo olhando dinheiro vestindo segurando crianças mulheres trabalho "
     "cachorro"),
    ("eu", "Basque",
     "bakarrik ezagutzen hizkuntza horregatik bitartean erabiltzen horrelako gertatzen "
     "eskatzen batzuetan"),
    ("pl", "Polish",
     "podlasiak zupełnie odpowiedział dziwożona jednoręki widocznie powiedział "
     "spojrzał człowiek wszystkich"),
    ("cy", "Welsh",
     "gobeithio newyddion wybodaeth ddigwyddodd eisteddfod genedlaethol gwasanaeth "
     "gwahaniaeth ffrindiau gerddoriaeth"),
    ("nl", "Dutch",
     "gezien iedereen tussen kinderen tijdens worden hoeveel kunnen nieuwe gemaakt"),
    ("ru", "Russian",
     "приверженность действительно сотрудничества необходимость деятельности "
     "правительства поблагодарить представителю международного ответственность"),
    ("es", "Spanish",
     "comunicación arquitectura completamente continuación departamento internacional "
     "especialmente posteriormente investigación generalmente"),
    ("it", "Italian",
     "particolare territorio campionato importante capoluogo nonostante attraverso "
     "posizione soprattutto produzione"),
)
#: The 200 keywords; label = index.
KEYWORDS: tuple[str, ...] = tuple(w for _, _, words in LANGUAGE_WORDS for w in words.split())
#: Language of each label.
KEYWORD_LANGUAGE: tuple[str, ...] = tuple(code for code, _, words in LANGUAGE_WORDS for _ in words.split())
BASE_LANGUAGES = ("en", "fr", "ca", "de", "rw")
#: The incremental languages in the published default order (one session each).
INCREMENTAL_LANGUAGES = ("fa", "eo", "pt", "eu", "pl", "cy", "nl", "ru", "es", "it")
NUM_BASE_CLASSES = 100
_INDEX = {w: i for i, w in enumerate(KEYWORDS)}
CITATION = """@inproceedings{mazumder2021multilingual,
  title={Multilingual Spoken Words Corpus}, author={Mazumder, Mark and Chitlangia, Sharad and
  Banbury, Colby and Kang, Yiping and Ciro, Juan Manuel and Achorn, Keith and Galvez, Daniel
  and Sabini, Mark and Mattson, Peter and Kanter, David and others},
  booktitle={NeurIPS Datasets and Benchmarks Track}, year={2021}}"""


@dataclass(frozen=True)
class Row:
    """One csv row: clip path (relative to ``<lang>/clips``), word, language, label, line."""

    path: str
    word: str
    lang: str
    label: int
    line: int


def read_list(path: str | os.PathLike[str]) -> list[Row]:
    """Rows of an MSWC FSCIL csv (``path,WORD,lang``; header row skipped; no quoting)."""
    file = Path(path)
    if not file.is_file():
        raise DataError(f"{file}: MSWC list not found (expected the layout MSWC/base_*.csv, "
                        "MSWC/<lang>/evaluation.csv)")
    rows = []
    text_lines = read_utf8(file, "MSWC list").split("\n")
    for number, line in enumerate(text_lines, start=1):
        text = line.strip()
        if not text:
            continue
        parts = text.split(",")
        if len(parts) != 3:
            raise DataError(f"{file}:{number}: expected 3 comma-separated columns "
                            f"path,WORD,lang, got {len(parts)}: {text!r}")
        clip, word, lang = parts
        if word == "WORD":
            continue
        if word not in _INDEX:
            curly = word.replace("'", "\u2019")
            hint = (f" (the list spells it {curly!r}, with a curly apostrophe)"
                    if curly in _INDEX else "")
            raise DataError(f"{file}:{number}: word {word!r} is not one of the 200 MSWC FSCIL "
                            f"keywords{hint}")
        rows.append(Row(clip, word, lang, _INDEX[word], number))
    return rows


def dataset_folder(root: str | os.PathLike[str]) -> Path:
    """``root/MSWC`` when it exists (the archive's layout), else ``root`` itself."""
    root = Path(root)
    return root / "MSWC" if (root / "MSWC").is_dir() else root


class MSWC:
    """One subset of the MSWC FSCIL set: ``dataset[i] = (clip float32 (48000,), label)``.

    Args:
        root: the folder holding ``MSWC/`` (or ``MSWC/`` itself).
        subset: ``base_train``, ``base_val``, ``base_test`` or ``evaluation``.
        language: for ``evaluation``, the language code (one of
            :data:`INCREMENTAL_LANGUAGES`); not used otherwise.
        long_clips: rule for clips longer than 1 s ("error" or "truncate").

    Nothing is downloaded or decoded on construction; the list is read and checked.
    """

    url = URL
    citation = CITATION

    def __init__(self, root: str | os.PathLike[str], subset: str, *, language: str | None = None,
                 long_clips: LongClips = "error") -> None:
        if subset not in SUBSETS:
            raise DataError(f"MSWC subset must be one of {', '.join(SUBSETS)}, got {subset!r}")
        self.folder = dataset_folder(root)
        self.subset, self.language, self.long_clips = subset, language, long_clips
        if subset == "evaluation":
            if language is None:
                raise DataError("MSWC evaluation subset: give language= (one of "
                                f"{', '.join(INCREMENTAL_LANGUAGES)})")
            self.list_file = self.folder / language / "evaluation.csv"
        else:
            if language is not None:
                raise DataError(f"MSWC {subset}: language= applies to the evaluation subset only")
            self.list_file = self.folder / f"{subset}.csv"
        self.rows = read_list(self.list_file)
        if subset == "evaluation":
            wrong = [r for r in self.rows if r.lang != language]
            if wrong:
                raise DataError(f"{self.list_file}:{wrong[0].line}: row of language {wrong[0].lang!r} "
                                f"in the {language!r} evaluation list")
        self.labels = np.array([r.label for r in self.rows], dtype=np.int64)

    def __len__(self) -> int:
        return len(self.rows)

    def clip_path(self, i: int) -> Path:
        """``MSWC/<lang>/clips/<path>`` of sample ``i``."""
        row = self.rows[i]
        return self.folder / row.lang / "clips" / row.path

    def __getitem__(self, i: int) -> tuple[np.ndarray, int]:
        if not 0 <= i < len(self.rows):
            raise IndexError(f"MSWC {self.subset}: index {i} out of range 0..{len(self.rows) - 1}")
        row = self.rows[i]
        audio = decode_clip(self.clip_path(i), SAMPLE_RATE, CLIP_SAMPLES, self.long_clips,
                            where=f"{self.list_file.name}:{row.line}")
        return audio, row.label

    def recipe(self) -> dict[str, Any]:
        """What the decoded array depends on: list file, rows with clip sizes, length rule."""
        sizes = []
        for i, row in enumerate(self.rows):
            path = self.clip_path(i)
            if not path.is_file():
                raise DataError(f"{path}: clip not found ({self.list_file.name}:{row.line})")
            sizes.append(f"{row.lang}/{row.path}:{path.stat().st_size}")
        return {"dataset": "mswc_fscil", "subset": self.subset, "language": self.language,
                "list_sha256": file_digest(self.list_file), "clips_sha256": file_list_digest(sizes),
                "sample_rate": SAMPLE_RATE, "samples": CLIP_SAMPLES, "long_clips": self.long_clips}

    def arrays(self, cache_dir: str | os.PathLike[str]) -> np.ndarray:
        """All clips decoded once, ``(N, 48000)`` float32, cached in ``cache_dir`` with their
        sha256 (see :func:`neuromark.data.clips.decoded_cache`)."""
        name = self.subset + (f"_{self.language}" if self.language else "")
        return decoded_cache(cache_dir, name, self.recipe(), len(self), lambda i: self[i][0])

    def download(self, sha256: str | None = SHA256) -> Path:
        """Download and unpack the subset archive beside ``MSWC/`` (see :func:`fetch_subset`)."""
        return fetch_subset(self.folder.parent, sha256)


def fetch_subset(root: str | os.PathLike[str], sha256: str | None = SHA256) -> Path:
    """Download and unpack the subset archive into ``root`` (651 MB); returns ``root/MSWC``.

    No checksum is published for it: with ``sha256=None`` a note is printed and the
    archive's sha256 is written to ``mswc_fscil.tar.gz.sha256`` for the record."""
    target = Path(root) / "mswc_fscil.tar.gz"
    target.parent.mkdir(parents=True, exist_ok=True)
    if sha256 is None:
        print(f"note: {URL} has no published checksum; its sha256 is recorded in "
              f"{target}.sha256 and results rely on the decoded arrays' checksums")
    if not target.is_file():
        with atomic_path(target) as tmp:
            try:
                urllib.request.urlretrieve(URL, tmp)  # noqa: S310
            except OSError as exc:
                raise DataError(f"cannot download {URL}: {exc}") from exc
    actual = file_digest(target)
    if sha256 is not None and actual != sha256.lower():
        raise DataError(f"{target}: sha256 {actual}, expected {sha256}")
    (target.parent / (target.name + ".sha256")).write_text(f"{actual}  {target.name}\n")
    unpack_tar(target, target.parent)
    return target.parent / "MSWC"


# ---- data set entry (neuromark.data.entry.DatasetEntry) ----------------------------------------


class MSWCEntry(Entry):
    """Entry of the FSCIL data (``MSWC/`` lists and clips at ``root``); with ``synthesize``,
    the espeak-ng corpus of :mod:`neuromark.benchmarks.keywords.generator` in the same layout."""

    name = "mswc"
    citation = CITATION
    urls = (URL,)
    manifest: dict[str, str] = {}  # no checksum published for the archive (module notes)

    def layout(self, root: Path) -> list[Path]:
        folder = dataset_folder(root)
        lists = [folder / f"{s}.csv" for s in SUBSETS[:3]]
        lists += [folder / lang / "evaluation.csv" for lang in INCREMENTAL_LANGUAGES]
        clips = []
        for file in lists:
            try:
                clips += [folder / row.lang / "clips" / row.path for row in read_list(file)]
            except DataError:
                continue  # missing or malformed: verify names it (checksum, then the list itself)
        return lists + clips

    def check_file(self, path: Path) -> None:
        check_list_or_audio(path, ".csv", read_list, "audio clip")

    def download(self, root: str | os.PathLike[str]) -> Path:
        fetch_subset(root)
        return self.record(root)

    def synthesize(self, root: str | os.PathLike[str], *, base_train: int = 40, base_val: int = 0,
                   base_test: int = 10, evaluation: int = 40, clips_per_voice: int = 1,
                   format: str = "opus", jobs: int | None = None) -> Path:
        """Write the espeak-ng corpus (clips per word;
        :class:`~neuromark.benchmarks.keywords.generator.MSWCSize`)."""
        jobs_within(jobs, "synthesize.jobs")
        gen = generators.get("keywords")
        MSWCSize, build_mswc = gen.MSWCSize, gen.build_mswc  # noqa: N806
        corpus_recipe, reusable = gen.corpus_recipe, gen.reusable

        size = MSWCSize(base_train, base_val, base_test, evaluation, clips_per_voice)
        recipe = corpus_recipe("mswc_fscil", size, format)
        return synthesize_into(root, recipe, lambda tmp: build_mswc(tmp, size, fmt=format, jobs=jobs,
                                                                     force=True),
                               what="MSWC-layout keyword", complete=lambda r: reusable(r, recipe),
                               legacy=lambda r: sums_owned(r, "corpus.json"), scratch=("decoded",))

    def load(self, root: str | os.PathLike[str], split: str = "base_test", **options: Any) -> MSWC:
        return MSWC(root, split, **options)


MSWC_ENTRY = MSWCEntry()
