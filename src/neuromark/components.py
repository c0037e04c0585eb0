"""Components a config names as ``{name, options}``: data sets, models, SUTs, meters, solvers.

:func:`check_options` looks the name up in its registry and validates the options against
a pydantic model made from the entry's signature (:func:`options_model`), so unknown,
missing and ill-typed options fail at ``validate`` time with the config's ``file:line``;
:func:`build_component` does the same, then calls the entry.

Example:
    >>> from neuromark.registry import suts
    >>> check_options(suts, ComponentSpec(name="sleep", options={"sleep_s": 0.001}))
    {'sleep_s': 0.001, 'samples': 64}
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePath
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model, field_validator

from neuromark.config import ConfigFile, StrictModel, check_jobs, resolve_path, validate
from neuromark.errors import ConfigError, UnknownNameError


class ComponentSpec(StrictModel):
    """``{name, options}``: a registry entry (dataset, SUT, meter, ...) and its keyword options."""

    name: str
    options: dict[str, Any] = {}


def parameters(factory: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    """``factory``'s parameters; one ``**options`` when it has no signature (a builtin)."""
    try:
        return dict(inspect.signature(factory).parameters)
    except (TypeError, ValueError):
        return {"options": inspect.Parameter("options", inspect.Parameter.VAR_KEYWORD)}


def accepted(factory: Callable[..., Any], **values: Any) -> dict[str, Any]:
    """Those of ``values`` that ``factory`` takes by keyword."""
    params = parameters(factory)
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return dict(values)
    return {k: v for k, v in values.items()
            if k in params and params[k].kind in (inspect.Parameter.KEYWORD_ONLY,
                                                  inspect.Parameter.POSITIONAL_OR_KEYWORD)}


def options_model(factory: Callable[..., Any], skip: Sequence[str] = ()) -> type[BaseModel]:
    """A pydantic model of ``factory``'s keyword options: one field per parameter not in
    ``skip`` (its annotation, or ``Any`` when it has none or it cannot be resolved; its
    default, or required); extra keys are errors unless the factory takes ``**kwargs``.
    Floats must be finite, and bounds come from the annotations: an option declared
    ``Annotated[int, Field(ge=1)]`` refuses ``0`` at validation, so the signature is the
    entry's schema."""
    params = parameters(factory)
    target = _signature_target(factory)
    hints = _hints(target)
    fields: dict[str, Any] = {}
    for name, p in params.items():
        if name in skip or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            continue
        fields[name] = (hints.get(name, Any), ... if p.default is p.empty else p.default)
    extra = "allow" if any(p.kind is p.VAR_KEYWORD for p in params.values()) else "forbid"
    config = ConfigDict(extra=extra, arbitrary_types_allowed=True, protected_namespaces=(),
                        allow_inf_nan=False)
    title = f"{getattr(factory, '__qualname__', 'component')}_options".replace(".", "_")
    try:
        return create_model(title, __config__=config, __validators__=_house_rules(fields), **fields)
    except Exception:  # a field pydantic cannot model (a name shadowing BaseModel): names only
        return create_model(title, __config__=config, **{k: (Any, d) for k, (_, d) in fields.items()})


#: Options checked by name whatever their annotation: seeds in ``[0, 2**32)``, worker
#: counts at most the machine's CPUs (:func:`neuromark.config.check_jobs`).
SEED_OPTIONS, WORKER_OPTIONS = ("seed", "seeds"), ("jobs", "workers", "processes")


def _check_seed(value: Any) -> Any:
    for v in value if isinstance(value, (list, tuple)) else [value]:
        if isinstance(v, int) and not 0 <= v < 2**32:
            raise ValueError(f"a seed must be in [0, 2**32), got {v}")
    return value


def _check_workers(value: Any) -> Any:
    return check_jobs(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _house_rules(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Validators of the options named in :data:`SEED_OPTIONS` / :data:`WORKER_OPTIONS`."""
    out: dict[str, Any] = {}
    for key, names, check in (("seed", SEED_OPTIONS, _check_seed),
                              ("workers", WORKER_OPTIONS, _check_workers)):
        present = [n for n in names if n in fields]
        if present:
            out[f"house_{key}"] = field_validator(*present)(classmethod(
                lambda cls, v, _check=check: _check(v)))
    return out


def _signature_target(factory: Any) -> Any:
    """Where ``factory``'s annotations live: a class's ``__init__``, a callable object's
    ``__call__`` (a data set entry), else the function itself."""
    if inspect.isclass(factory):
        return factory.__init__
    if not inspect.isroutine(factory) and callable(factory):
        return type(factory).__call__
    return factory


def _hints(target: Any) -> dict[str, Any]:
    """Resolved annotations of ``target``; one that does not resolve (a class local to a
    function) is left out, so its option is not type-checked."""
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception:
        pass
    namespace = getattr(target, "__globals__", {})
    out = {}
    for name, annotation in getattr(target, "__annotations__", {}).items():
        try:
            out[name] = eval(annotation, namespace) if isinstance(annotation, str) else annotation
        except Exception:
            continue
    return out


def check_options(registry: Any, spec: ComponentSpec, config: ConfigFile | None = None,
                  loc: Sequence[str | int] = (), *, run_arguments: Mapping[str, str] | None = None
                  ) -> dict[str, Any]:
    """Validate ``spec`` against its registry entry; returns the options with the entry's
    defaults filled in. ``run_arguments`` (name -> where it comes from) are given by the
    run, not by options.
    Raises :class:`ConfigError` with ``file:line`` and the key path."""
    run_arguments = run_arguments or {}
    where = (config or ConfigFile(data={})).where
    dotted = ".".join(map(str, loc))
    factory = resolve_entry(registry, spec.name, where((*loc, "name")), f"{dotted}.name")
    for key in run_arguments:
        if key in spec.options:
            raise ConfigError(f"{where((*loc, 'options', key))}: {dotted}.options.{key}: given by "
                              f"the run ({run_arguments[key]}), not an option")
    if callable(getattr(factory, "check_config", None)):  # an entry that reads its config file
        return dict(factory.check_config(spec.options, config, tuple(loc)))
    model = options_model(factory, skip=tuple(run_arguments))
    checked = validate(model, spec.options, config, (*loc, "options"))
    return dict(checked)


def resolve_entry(registry: Any, name: str, where: str, key: str) -> Any:
    """``registry.get(name)``, importing a plugin entry's module now (so ``validate`` finds
    a missing module before any work); any failure is a :class:`ConfigError` at ``where``."""
    try:
        return registry.get(name)
    except UnknownNameError as exc:
        raise ConfigError(f"{where}: {key}: {exc}") from None
    except Exception as exc:  # a plugin module that is missing or fails on import
        raise ConfigError(f"{where}: {key}: {name!r} cannot be loaded: "
                          f"{type(exc).__name__}: {exc}") from exc


def path_options(factory: Callable[..., Any]) -> tuple[str, ...]:
    """Names of ``factory``'s parameters annotated as paths (``Path``, ``Path | None``,
    ``str | Path``, ...): their values in a config are paths."""
    target = _signature_target(factory)
    hints = _hints(target)
    return tuple(name for name in parameters(factory) if _is_path(hints.get(name)))


def _is_path(annotation: Any) -> bool:
    if inspect.isclass(annotation):
        return issubclass(annotation, PurePath)
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _is_path(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return any(_is_path(arg) for arg in typing.get_args(annotation))
    return False


def resolve_path_options(factory: Callable[..., Any], given: Mapping[str, Any],
                         options: Mapping[str, Any], config: ConfigFile | None,
                         loc: Sequence[str | int] = ()) -> dict[str, Any]:
    """``options`` with each path option the config gave (a key of ``given``) made absolute
    by :func:`neuromark.config.resolve_path`: a relative path lies in the config file's
    folder (never the working directory), ``cache:REL`` in the cache folder. Defaults are
    left as the entry set them."""
    out = dict(options)
    for name in path_options(factory):
        value = out.get(name)
        if name in given and isinstance(value, (str, PurePath)):
            try:
                out[name] = resolve_path(value, config)
            except ConfigError as exc:
                key = (*loc, "options", name)
                raise ConfigError(f"{(config or ConfigFile(data={})).where(key)}: "
                                  f"{'.'.join(map(str, key))}: {exc}") from None
    return out


def build_component(registry: Any, spec: ComponentSpec, config: ConfigFile | None,
                    loc: Sequence[str | int], **run_arguments: Any) -> Any:
    """``registry.get(spec.name)(**options, **run_arguments)`` with the options checked by
    :func:`check_options` (file:line errors) and path options resolved from the config's
    folder (:func:`resolve_path_options`); ``run_arguments`` (e.g. ``split``, ``seed``)
    come from the run and are not options. An entry with ``check_config(options, config,
    loc)`` / ``from_config(options, config, loc, **run_arguments)`` (one that resolves what
    its options name from the config's folder) is checked and built by those instead."""
    factory = resolve_entry(registry, spec.name, (config or ConfigFile(data={})).where(
        (*loc, "name")), f"{'.'.join(map(str, loc))}.name")
    if callable(getattr(factory, "from_config", None)):  # e.g. models' ``python``: the file
        return factory.from_config(spec.options, config, tuple(loc), **run_arguments)
    options = check_options(registry, spec, config, loc,
                            run_arguments={key: "the run" for key in run_arguments})
    options = resolve_path_options(factory, spec.options, options, config, loc)
    return factory(**options, **run_arguments)


def entry_parameters(registry: Any, name: str) -> set[str]:
    """The keyword parameters of entry ``name`` (a function or a callable object); empty
    when it does not load (building it then reports why, naming the config line)."""
    try:
        entry = registry.get(name)
        target = entry if inspect.isfunction(entry) or inspect.isclass(entry) else entry.__call__
        return set(inspect.signature(target).parameters)
    except Exception:  # noqa: BLE001 - any failure is reported by build_component
        return set()
