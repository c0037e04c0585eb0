"""numba, imported without the ``scipy.linalg`` import of its BLAS check.

numba's first compile or cache load in a process loads its numpy registries; one of
them (``numba.np.arraymath``) checks for BLAS by importing ``scipy.linalg.cython_blas``,
which imports all of ``scipy.linalg`` (~0.4 s of CPU in a fresh process here, see
docs/performance.md). neuromark's kernels are loops and call no BLAS. So, when
``scipy.linalg`` is not loaded yet, :data:`numba` is imported with that one module
marked missing while ``numba.np.arraymath`` loads: its check then answers "no BLAS",
which only makes numba's ``np.convolve``/``np.correlate`` sum in a loop; ``np.dot``
and ``np.linalg`` check for BLAS again when they are compiled, and find it then.
"""

from __future__ import annotations

import sys

import numba

_BLAS = "scipy.linalg.cython_blas"


def _arraymath_without_blas_check() -> None:
    """Import ``numba.np.arraymath`` with :data:`_BLAS` marked missing, unless either
    is loaded already (then nothing is skipped: the import costs nothing more)."""
    if "numba.np.arraymath" in sys.modules or _BLAS in sys.modules:
        return
    sys.modules[_BLAS] = None  # type: ignore[assignment]  # import raises, loads nothing
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        if _BLAS in sys.modules and sys.modules[_BLAS] is None:
            del sys.modules[_BLAS]


_arraymath_without_blas_check()

__all__ = ["numba"]
