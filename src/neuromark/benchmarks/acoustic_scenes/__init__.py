"""Acoustic scene classification: DCASE 2020 Task 1A (TAU Urban Acoustic Scenes 2020
Mobile), the NeuroBench system-track ASC benchmark.

References: Heittola, Mesaros and Virtanen, DCASE 2020 Task 1 (Zenodo 3819968).

- :mod:`.dcase`: the published layout and its data set entry.
- :mod:`.model`: the CNN baseline; :mod:`.sut`: it as a system under test.
"""

#: What this family adds to the registries (lazy; relative to this package).
MANIFEST = {
    "datasets": {"dcase2020_asc": ".dcase:DCASE_ASC"},
    "suts": {"asc_cnn": ".sut:asc_cnn"},
}
