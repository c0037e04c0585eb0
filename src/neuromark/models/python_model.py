"""The ``python`` model entry: a model built by a function in a Python file of your own.

A config names it as::

    model:
      name: python
      options: {factory: "my_net.py:build", kwargs: {hidden: 64}}
      checkpoint: weights.pt          # optional: a state_dict, read with weights_only=True

**This runs your own code**: the file is executed as Python, with your rights, when the
config is planned (``neuromark validate`` included). Name only files you trust.

- ``factory`` is ``FILE.py:FUNCTION``; ``FILE`` resolves from the config file's folder
  (never the working directory; ``cache:REL`` lies in the cache folder), ``FUNCTION`` is a
  function or class of that file (``Outer.build`` reaches an attribute).
- The file is loaded as a fresh module under a private, unique name (from its absolute
  path and sha256), so two configs with a ``my_net.py`` each never share one; its source is
  compiled and executed in memory, with ``sys.dont_write_bytecode`` set, so nothing is
  written beside it (no ``__pycache__``). Other files beside it are not importable from it:
  keep the model in one file, or make a package and register it (docs/extending.md).
- ``kwargs`` are checked against the function's signature like any component's options
  (:func:`neuromark.components.check_options`: unknown, missing and ill-typed keys fail
  with the config's ``file:line``).
- At plan time the function is called once (torch's global random state is restored
  afterwards) to check that it returns a ``torch.nn.Module`` or a
  :class:`~neuromark.models.adapter.ModelAdapter`; the run builds the model again.

The results' ``model`` block records the name ``python`` and the digest of ``{factory,
kwargs}`` as written; ``provenance.model_file`` records the file, its sha256 and the
function (:meth:`PythonModelEntry.source`).
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import re
import sys
import traceback
import types
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from neuromark._threads import default_dtype_kept
from neuromark.components import options_model
from neuromark.config import ConfigFile, StrictModel, resolve_path, validate
from neuromark.errors import ConfigError
from neuromark.io_atomic import sha256_file
from neuromark.models.adapter import ModelAdapter

#: The registry name of this entry.
NAME = "python"
#: Prefix of the private module names user files are loaded under.
MODULE_PREFIX = "_neuromark_user_model_"
_FACTORY = re.compile(r"^(?P<file>.+):(?P<attr>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)$")


class PythonModelOptions(StrictModel):
    """``model.options`` of the ``python`` entry."""

    factory: str  # "FILE.py:FUNCTION", FILE relative to the config's folder
    kwargs: dict[str, Any] = {}


@dataclass(frozen=True)
class Factory:
    """A loaded factory: the file (absolute), its sha256, the function's dotted name, the
    private module it lives in and the function itself."""

    path: Path
    sha256: str
    attr: str
    module: str
    function: Any

    def provenance(self) -> dict[str, str]:
        return {"file": str(self.path), "sha256": self.sha256, "function": self.attr,
                "module": self.module}


def _where(config: ConfigFile | None, loc: Sequence[str | int], *keys: str) -> str:
    key = (*loc, *keys)
    return f"{(config or ConfigFile(data={})).where(key)}: {'.'.join(map(str, key))}"


def load_factory(given: str, config: ConfigFile | None, loc: Sequence[str | int] = ("model",)
                 ) -> Factory:
    """The function ``given`` (``FILE.py:FUNCTION``) names, its file resolved from the
    config's folder and loaded as a private module. :class:`ConfigError` at
    ``loc.options.factory`` (file:line) for a malformed value, a missing file, a file that
    fails to load, a missing attribute or one that is not callable."""
    where = _where(config, loc, "options", "factory")
    match = _FACTORY.match(given.strip())
    if match is None:
        raise ConfigError(f"{where}: expected 'FILE.py:FUNCTION' (a Python file, relative to "
                          f"the config's folder, and a function in it), got {given!r}")
    try:
        path = resolve_path(match["file"], config)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    if path.suffix != ".py":
        raise ConfigError(f"{where}: {path} is not a Python source file (expected FILE.py)")
    if not path.is_file():
        raise ConfigError(f"{where}: {path}: no such file (relative paths lie in the config's "
                          "folder)")
    module = _load_module(path, where)
    target: Any = module
    for i, part in enumerate(match["attr"].split(".")):
        if not hasattr(target, part):
            names = [n for n in vars(target) if not n.startswith("_")] if i == 0 else dir(target)
            close = difflib.get_close_matches(part, names, n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            defined = ", ".join(n for n in names if callable(getattr(target, n, None))) or "none"
            raise ConfigError(f"{where}: {path.name} has no {match['attr']!r}{hint} (callables "
                              f"in it: {defined})")
        target = getattr(target, part)
    if not callable(target):
        raise ConfigError(f"{where}: {path.name}:{match['attr']} is a {type(target).__name__}, "
                          "not callable: expected a function (or class) returning a "
                          "torch.nn.Module or a neuromark ModelAdapter")
    return Factory(path, module.__file_sha256__, match["attr"], module.__name__, target)


def _load_module(path: Path, where: str) -> types.ModuleType:
    """``path`` executed as a fresh module named from its absolute path and sha256 (the
    same file loads once per process); no bytecode is written anywhere."""
    digest = sha256_file(path)
    key = hashlib.sha256(f"{path}\0{digest}".encode()).hexdigest()[:16]
    name = f"{MODULE_PREFIX}{key}_{re.sub(r'[^A-Za-z0-9_]', '_', path.stem)}"
    if name in sys.modules:
        return sys.modules[name]
    module = types.ModuleType(name, f"model factory file {path}")
    module.__file__ = str(path)
    module.__file_sha256__ = digest  # type: ignore[attr-defined]
    sys.modules[name] = module  # as importlib does: dataclasses and pickling look it up
    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # nor for what the file imports
    try:
        with keeps_default_dtype(f"loading {path}", where):
            exec(compile(path.read_bytes(), str(path), "exec"), module.__dict__)
    except ConfigError:
        del sys.modules[name]
        raise
    except Exception as exc:
        del sys.modules[name]
        raise ConfigError(f"{where}: loading {path} failed: {_describe(exc, path)}") from exc
    except (SystemExit, KeyboardInterrupt) as exc:
        del sys.modules[name]
        if type(exc) not in (SystemExit, KeyboardInterrupt):  # SIGTERM's: the CLI's to report
            raise
        raise ConfigError(f"{where}: loading {path} {_exit_text(exc, path)}") from exc
    finally:
        sys.dont_write_bytecode = before
    return module


def _describe(exc: BaseException, path: Path) -> str:
    """``Type: message`` of ``exc``, with the deepest line of ``path`` it passed through."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, SyntaxError):
        return text
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
    return f"{text} (at {path.name}:{lines[-1]})" if lines else text


def keeps_default_dtype(what: str, where: str) -> contextlib.AbstractContextManager[None]:
    """Run the block; when it changed torch's default dtype (``torch.set_default_dtype``, a
    process-wide setting every later suite entry would inherit), restore it and raise
    :class:`ConfigError` naming ``what`` at ``where``."""
    return default_dtype_kept(
        lambda before, after: f"{where}: {what} changed torch's default dtype from {before} to "
                              f"{after} (torch.set_default_dtype), a setting of the whole process "
                              f"that every later suite entry would inherit; it was restored. Give "
                              f"the model its own dtype instead (e.g. return net.double())")


def _exit_text(exc: SystemExit | KeyboardInterrupt, path: Path) -> str:
    """How a user file's ``sys.exit(code)`` or ``KeyboardInterrupt`` is reported: the call,
    the line of ``path`` it came from, and that nothing was evaluated."""
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
    at = f" (at {path.name}:{lines[-1]})" if lines else ""
    if isinstance(exc, KeyboardInterrupt):
        return (f"raised KeyboardInterrupt{at}: interrupted (Ctrl+C) while it ran, or it "
                f"raised the interrupt itself; nothing was evaluated")
    return (f"called sys.exit({exc.code!r}){at}: a model file must return a model, not end "
            f"the program; nothing was evaluated")


def lazy_parameters(model: Any) -> list[str]:
    """Names of ``model``'s parameters (or its adapter's ``module``'s) that are still lazy
    (``nn.LazyLinear`` and kin before their first forward): their shapes are unknown."""
    from torch.nn.parameter import is_lazy

    module = model if isinstance(model, torch.nn.Module) else getattr(model, "module", None)
    if not isinstance(module, torch.nn.Module):
        return []
    return [name for name, p in module.named_parameters() if is_lazy(p)]


def check_kwargs(factory: Factory, kwargs: dict[str, Any], config: ConfigFile | None,
                 loc: Sequence[str | int] = ("model",)) -> dict[str, Any]:
    """``kwargs`` checked against the factory's signature (defaults filled in), as
    :func:`~neuromark.components.check_options` checks a component's options."""
    return dict(validate(options_model(factory.function), kwargs, config,
                         (*loc, "options", "kwargs")))


def call_factory(factory: Factory, kwargs: dict[str, Any], config: ConfigFile | None,
                 loc: Sequence[str | int] = ("model",)) -> Any:
    """``factory(**kwargs)``, which must return a torch module or a model adapter; an
    exception it raises, or anything else it returns, is a :class:`ConfigError`."""
    where = _where(config, loc, "options", "factory")
    call = f"{factory.path.name}:{factory.attr}(**kwargs)"
    try:
        with keeps_default_dtype(f"the model factory {call}", where):
            model = factory.function(**kwargs)
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(f"{where}: {call} raised {_describe(exc, factory.path)}") from exc
    except (SystemExit, KeyboardInterrupt) as exc:
        if type(exc) not in (SystemExit, KeyboardInterrupt):  # SIGTERM's: the CLI's to report
            raise
        raise ConfigError(f"{where}: the model factory {call} "
                          f"{_exit_text(exc, factory.path)}") from exc
    if not isinstance(model, (torch.nn.Module, ModelAdapter)):
        raise ConfigError(f"{where}: {call} returned a {type(model).__module__}."
                          f"{type(model).__qualname__}; expected a torch.nn.Module or a "
                          "neuromark ModelAdapter")
    lazy = lazy_parameters(model)
    if lazy:
        shown = ", ".join(lazy[:4]) + (f" (+{len(lazy) - 4} more)" if len(lazy) > 4 else "")
        raise ConfigError(f"{where}: {call} returned a model with uninitialised lazy parameters "
                          f"({shown}: nn.LazyLinear or kin before its first forward), whose "
                          f"shapes, footprint and operations are unknown; give the layer its "
                          f"input size (nn.Linear(in, out)) or run one forward pass on an "
                          f"example input inside the factory")
    return model


class PythonModelEntry:
    """The ``python`` entry of :data:`neuromark.registry.models` (see the module docstring).
    Config-aware: :func:`~neuromark.components.check_options` and
    :func:`~neuromark.components.build_component` call :meth:`check_config` and
    :meth:`from_config`, which resolve the file from the config's folder."""

    def __call__(self, factory: str, kwargs: dict[str, Any] | None = None) -> Any:
        """The model ``factory`` (``FILE.py:FUNCTION``, FILE absolute or relative to the
        working directory: the Python API) builds with ``kwargs``."""
        return self.from_config({"factory": factory, "kwargs": kwargs or {}}, None)

    def _load(self, options: Any, config: ConfigFile | None, loc: Sequence[str | int]
              ) -> tuple[Factory, dict[str, Any]]:
        spec = validate(PythonModelOptions, options, config, (*loc, "options"))
        factory = load_factory(spec.factory, config, loc)
        return factory, check_kwargs(factory, spec.kwargs, config, loc)

    def check_config(self, options: Any, config: ConfigFile | None,
                     loc: Sequence[str | int] = ("model",)) -> dict[str, Any]:
        """Check everything before any work: the options, the file, the function, the
        kwargs, and (one trial call) what it returns. Returns ``{factory, kwargs}``."""
        factory, kwargs = self._load(options, config, loc)
        with torch.random.fork_rng(devices=[]):  # the trial leaves the global stream as it was
            call_factory(factory, kwargs, config, loc)
        return {"factory": str(options["factory"]), "kwargs": kwargs}

    def from_config(self, options: Any, config: ConfigFile | None,
                    loc: Sequence[str | int] = ("model",), **run_arguments: Any) -> Any:
        """The model, built by the factory the config names."""
        factory, kwargs = self._load(options, config, loc)
        return call_factory(factory, {**kwargs, **run_arguments}, config, loc)

    def source(self, options: Any, config: ConfigFile | None,
               loc: Sequence[str | int] = ("model",)) -> dict[str, str]:
        """Provenance of the factory: ``{file, sha256, function, module}``."""
        return self._load(options, config, loc)[0].provenance()


#: The registered entry.
PYTHON_MODEL = PythonModelEntry()
