"""Intel RAPL energy counters through the Linux powercap interface.

Reads ``/sys/class/powercap/intel-rapl:<pkg>[:<sub>]/energy_uj`` (µJ, wrapping at
``max_energy_range_uj``), see https://www.kernel.org/doc/html/latest/power/powercap/powercap.html.
Package and DRAM domains by default. Since Linux 5.10 ``energy_uj`` is readable by root only
(CVE-2020-8694, the PLATYPUS attack); the error says how to grant access.
"""

from __future__ import annotations

from pathlib import Path

from neuromark.errors import DataError
from neuromark.system.power.counter import CounterMeter

POWERCAP = Path("/sys/class/powercap")


class RaplDomain:
    """One powercap zone: unwraps its µJ counter into cumulative joules."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.label = (path / "name").read_text().strip()
        self.max_range_uj = int(_read(path / "max_energy_range_uj"))
        self._last: int | None = None
        self._total_uj = 0

    def read_j(self) -> float:
        raw = int(_read(self.path / "energy_uj"))
        if self._last is not None:
            delta = raw - self._last
            if delta < 0:  # the counter wrapped
                delta += self.max_range_uj
            self._total_uj += delta
        self._last = raw
        return self._total_uj * 1e-6


def _read(file: Path) -> str:
    try:
        return file.read_text()
    except PermissionError:
        raise DataError(
            f"cannot read {file}: permission denied. Since Linux 5.10 RAPL energy counters are "
            f"readable by root only (CVE-2020-8694). Fix: run as root, or grant read access with "
            f"'sudo chmod a+r {file.parent.parent}/intel-rapl:*/energy_uj "
            f"{file.parent.parent}/intel-rapl:*/intel-rapl:*/energy_uj' (until reboot)") from None
    except OSError as exc:
        raise DataError(f"cannot read {file}: {exc}") from None


def find_domains(root: Path = POWERCAP, names: tuple[str, ...] = ("package", "dram")) -> list[Path]:
    """Zones under ``root`` whose ``name`` starts with one of ``names`` (package-0, dram, ...).

    Sub-zones appear both nested and as top-level links; each real zone is returned once.
    """
    seen: set[Path] = set()
    out = []
    for zone in sorted(root.glob("intel-rapl:*")) + sorted(root.glob("intel-rapl:*/intel-rapl:*")):
        real = zone.resolve()
        if real in seen or not (zone / "name").is_file():
            continue
        seen.add(real)
        label = (zone / "name").read_text().strip()
        if any(label.startswith(n) for n in names):
            out.append(zone)
    return out


class RaplMeter(CounterMeter):
    """RAPL package (+ DRAM) energy, polled every ``interval_s`` (RAPL updates at ~1 kHz).

    Components: the CPU package(s) (cores, caches, uncore, integrated GPU) and DRAM where
    the platform exposes it; not the rest of the board, disks or the power supply.
    """

    name = "rapl"
    point = "package"

    def __init__(self, root: str | Path = POWERCAP, domains: tuple[str, ...] = ("package", "dram"),
                 interval_s: float = 0.01) -> None:
        super().__init__(interval_s)
        root = Path(root)
        zones = find_domains(root, domains)
        if not zones:
            raise DataError(f"no RAPL domains {list(domains)} under {root}: this machine has no "
                            "Intel RAPL powercap interface (or the intel_rapl module is not "
                            "loaded); use meter 'null' or a CSV trace from an external instrument")
        self.zones = [RaplDomain(z) for z in zones]
        self.domains = [f"{z.path.name}:{z.label}" for z in self.zones]
        self.components = [z.label for z in self.zones]
        self.read_j()  # fail now on unreadable counters, not in the polling thread

    def read_j(self) -> dict[str, float]:
        return {d: z.read_j() for d, z in zip(self.domains, self.zones)}
