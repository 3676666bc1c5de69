"""Job configs: YAML mirrored one-to-one by frozen pydantic models, validated once at the entry point.

A config file names its job's entry point (`entry: "module:attr"`, an explicit registry with no import-time
magic), the study's fixed parameters (`study:`), the sweep (`sweep:`) and where to run (`cluster:`). The
study's own parameter model (`TuneStudy.params_model`) types the `study:` block, so one validation pass
covers the whole file. Every failure becomes a `ConfigError` whose message names the key, the value and
what was expected; the CLI prints it and exits with status 2.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import inspect
import math
import re
import typing
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    TypeAdapter,
    ValidationError,
    create_model,
    model_validator,
)

from raygent.platform.envs import EnvRegistryError, named_env
from raygent.platform.study import StudyParams


class ConfigError(ValueError):
    """A config that cannot run; the message is meant for the user as it is."""


class KeyProblem(ConfigError):
    """A validator's complaint about `key`, a key below the model pydantic reports it at (`kwargs.budget` of the
    `reward` section): the message joins the two, `reward.kwargs.budget: <problem>`."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key, self.problem = key, problem


class RenamedKey(ConfigError):
    """An old spelling of a key (`tasks.source`), refused for one release with its new spelling: the message reads
    `tasks.source is now spelled tasks.entry`, with the section pydantic reports it at in front of both."""

    def __init__(self, old: str, new: str) -> None:
        super().__init__(f"{old} is now spelled {new}")
        self.old, self.new = old, new


def refuse_renamed(data: Any, renamed: Mapping[str, str]) -> None:
    """For a `model_validator(mode="before")`: raise `RenamedKey` for the first old key (of `renamed`, old -> new)
    that the input mapping `data` gives."""
    if isinstance(data, Mapping):
        for old, new in renamed.items():
            if old in data:
                raise RenamedKey(old, new)


EntryKind = Literal["callable", "class", "function"]
_ENTRY_PATTERN = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
_KIND_WORDS = {"callable": "a function or class", "class": "a class", "function": "a function"}


def check_entry(
    value: object, kind: EntryKind = "callable", expects: str | None = None, args: int | None = None
) -> str:
    """Validate a `"module:attr"` string and return it unchanged; raise `ConfigError` saying what is wrong.

    The module is imported (a config names code that must exist where the job is validated, i.e. before Ray
    starts), the attribute must exist and be `kind` (`callable`: a function or a class; `class`; `function`:
    callable but not a class). With `args`, the callable must accept that many positional arguments (checked on
    its signature, not by calling it). `expects` describes the target in the message, e.g. "a function
    f(split, seed, n) -> list[Task]". `ConfigError` is a `ValueError`, so inside a pydantic validator the
    message reaches `ConfigError` via `validate_config` with the key in front: `env.tasks: 'a.b:c': ...`.
    """
    what = expects or _KIND_WORDS[kind]
    expected = f"expected 'module:attr' naming {what}"
    if not isinstance(value, str):
        raise ConfigError(f"got {value!r} ({type(value).__name__}); {expected}")
    if not _ENTRY_PATTERN.match(value):
        raise ConfigError(f"{value!r} is not of the form 'module:attr'; {expected}")
    module_name, _, attr = value.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise ConfigError(f"{value!r}: no module named {exc.name or module_name!r}; {expected}") from None
    except Exception as exc:  # a module that fails while importing: say how, without a traceback
        raise ConfigError(
            f"{value!r}: importing module {module_name!r} failed ({type(exc).__name__}: {exc}); {expected}"
        ) from None
    if not hasattr(module, attr):
        public = [name for name in dir(module) if not name.startswith("_")]
        raise ConfigError(
            f"{value!r}: module {module_name!r} has no attribute {attr!r}{_did_you_mean(attr, public)}; {expected}"
        )
    target = getattr(module, attr)
    is_class = inspect.isclass(target)
    if not callable(target) or (kind == "class" and not is_class) or (kind == "function" and is_class):
        got = "a class" if is_class else ("a function" if callable(target) else f"a {type(target).__name__}")
        raise ConfigError(f"{value!r} is {got}; {expected}")
    if args is not None:
        try:
            inspect.signature(target).bind(*range(args))
        except TypeError:
            raise ConfigError(
                f"{value!r} cannot be called with {args} positional argument(s) "
                f"(signature {inspect.signature(target)}); {expected}"
            ) from None
        except ValueError:  # no signature to inspect (a builtin): accept
            pass
    return value


def entry_validator(
    kind: EntryKind = "callable", expects: str | None = None, args: int | None = None
) -> AfterValidator:
    """A pydantic validator for a `"module:attr"` field: `Annotated[str, entry_validator("class")]`.

    The aliases below cover the common cases; write your own alias for a described target, e.g.
    `TaskSource = Annotated[str, entry_validator("function", "a function f(split, seed, n) -> list[Task]", 3)]`.
    Defaults of such a field are not validated (pydantic's default), so a default costs no import.
    """

    def validate(value: str) -> str:
        return check_entry(value, kind, expects, args)

    return AfterValidator(validate)


EntryPoint = Annotated[str, entry_validator("callable")]
"""`"module:attr"` naming an importable function or class (imported and checked when the config validates)."""
ClassEntry = Annotated[str, entry_validator("class")]
"""`"module:attr"` naming an importable class."""
FunctionEntry = Annotated[str, entry_validator("function")]
"""`"module:attr"` naming an importable function (any callable that is not a class)."""

# Annotations for a task function's parameters: `check_arguments` checks `env.task_kwargs` / `sft.task_kwargs`
# against them before Ray starts (the function itself still runs with whatever a direct caller gives it).
Count = Annotated[int, Field(ge=1, strict=True)]
"""An integer >= 1 (not a bool, not a float)."""
Seed = Annotated[int, Field(ge=0, strict=True)]
"""An integer >= 0 (not a bool, not a float)."""
Share = Annotated[float, Field(ge=0, le=1)]
"""A number in [0, 1]."""
Flag = Annotated[bool, Field(strict=True)]
"""true or false (not 1, "yes" or "on")."""


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SearchDim(Frozen):
    """One swept knob: exactly one of the forms below."""

    grid: list[Any] | None = None
    choice: list[Any] | None = None
    uniform: tuple[float, float] | None = None
    loguniform: tuple[float, float] | None = None
    randint: tuple[int, int] | None = None

    @model_validator(mode="after")
    def _one_form(self) -> SearchDim:
        forms = [name for name in type(self).model_fields if getattr(self, name) is not None]
        if len(forms) != 1:
            raise ValueError(f"give exactly one of grid, choice, uniform, loguniform, randint (got {forms or 'none'})")
        for name in ("uniform", "loguniform", "randint"):
            bounds = getattr(self, name)
            if bounds is not None and not bounds[0] < bounds[1]:
                raise ValueError(f"{name} bounds must satisfy low < high (got {list(bounds)})")
        if self.loguniform is not None and self.loguniform[0] <= 0:
            raise ValueError(f"loguniform bounds must be > 0 (got {list(self.loguniform)})")
        values = self.grid if self.grid is not None else self.choice
        if values is not None and not values:
            raise ValueError("grid/choice needs at least one value")
        return self

    @property
    def values(self) -> list[Any] | None:
        """The discrete values to check against the parameter's type, when the form has any."""
        return self.grid if self.grid is not None else self.choice

    def to_tune(self) -> Any:
        from ray import tune

        if self.grid is not None:
            return tune.grid_search(list(self.grid))
        if self.choice is not None:
            return tune.choice(list(self.choice))
        if self.uniform is not None:
            return tune.uniform(*self.uniform)
        if self.loguniform is not None:
            return tune.loguniform(*self.loguniform)
        assert self.randint is not None
        return tune.randint(*self.randint)


class SchedulerSettings(Frozen):
    type: Literal["none", "asha"] = "none"
    grace_period: int = Field(1, ge=1)
    reduction_factor: float = Field(2.0, gt=1)
    max_t: int = Field(100, ge=1)


class Resources(Frozen):
    cpu: float = Field(1.0, ge=0)
    gpu: float = Field(0.0, ge=0)


class SweepSettings(Frozen):
    space: dict[str, SearchDim] = {}
    search: Literal["grid", "optuna"] = "grid"
    num_samples: int = Field(1, ge=1)
    scheduler: SchedulerSettings = SchedulerSettings()
    max_concurrent_trials: Annotated[int, Field(ge=1)] | Literal["auto"] | None = None
    """Trials at once: a number, `auto` (as many as the cluster's CPUs and GPUs hold at `resources_per_trial`,
    counted when the sweep starts: `concurrent_trials`), or None (Tune's default: as resources allow)."""
    resources_per_trial: Resources = Resources()


def concurrent_trials(sweep: SweepSettings, cpus: float, gpus: float) -> int | None:
    """`sweep.max_concurrent_trials` for a cluster of `cpus` and `gpus`: `auto` becomes how many trials of
    `resources_per_trial` fit at once (at least 1)."""
    if sweep.max_concurrent_trials != "auto":
        return sweep.max_concurrent_trials
    need = sweep.resources_per_trial
    fits = [cpus / need.cpu] if need.cpu > 0 else []
    fits += [gpus / need.gpu] if need.gpu > 0 else []
    return max(1, int(min(fits))) if fits else None


class ClusterSettings(Frozen):
    address: str | None = None
    num_cpus: int | None = Field(None, ge=1)
    storage: str | None = Field(None, min_length=1)
    """Where `raygent submit` puts runs on the cluster (a shared volume; default `~/raygent-runs` on the head)."""


class JobConfig(Frozen):
    """A whole config file. `study` is typed by the entry's `params_model` (see `load_config`)."""

    job: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    kind: Literal["sweep", "run"] = "sweep"
    entry: str = Field(pattern=r"^[\w.]+:\w+$")
    description: str = ""
    study: StudyParams = StudyParams()
    sweep: SweepSettings = SweepSettings()
    cluster: ClusterSettings = ClusterSettings()

    @model_validator(mode="wrap")
    @classmethod
    def _no_bool_numbers(cls, data: Any, handler: ModelWrapValidatorHandler[JobConfig]) -> JobConfig:
        """In every section, the study's and a recipe's included, `true`/`false` is not a number."""
        config = handler(data)
        reject_bool_numbers(data, config)
        return config


def reject_bool_numbers(given: Any, parsed: Any, where: str = "") -> None:
    """Raise `ConfigError` (`key: got True; expected an integer, not true/false`) where a `true`/`false` of the input
    `given` validated into a number in `parsed`, what pydantic made of it: its lax mode reads a bool as 1 or 0 for an
    int or float field (`trainer.steps=true` would run one step). The two are walked together (models by field,
    mappings by key, sequences by index), so one check covers every field of every model, nested or not; a bool
    kept as a bool (a bool field, `Any`, a union with bool) passes. `where` prefixes the key (e.g. `env.task_kwargs`).
    """
    found = _bool_as_number(given, parsed, [where] if where else [])
    if found is not None:
        path, value, expected = found
        raise ConfigError(f"{'.'.join(path) or '(top level)'}: got {value!r}; expected {expected}, not true/false")


def _bool_as_number(given: Any, parsed: Any, where: list[str]) -> tuple[list[str], bool, str] | None:
    if isinstance(given, bool):
        if isinstance(parsed, bool) or not isinstance(parsed, int | float):
            return None
        return where, given, "an integer" if isinstance(parsed, int) else "a number"
    pairs: list[tuple[str, Any, Any]] = []
    if isinstance(given, Mapping) and isinstance(parsed, BaseModel):
        for name, field in type(parsed).model_fields.items():
            key = field.alias if isinstance(field.alias, str) and field.alias in given else name
            if key in given:
                pairs.append((str(key), given[key], getattr(parsed, name)))
    elif isinstance(given, Mapping) and isinstance(parsed, Mapping):
        pairs = [(str(key), value, parsed[key]) for key, value in given.items() if key in parsed]
    elif isinstance(given, list | tuple) and isinstance(parsed, list | tuple) and len(given) == len(parsed):
        pairs = [(str(index), item, parsed[index]) for index, item in enumerate(given)]
    for key, item, value in pairs:
        found = _bool_as_number(item, value, [*where, key])
        if found is not None:
            return found
    return None


def configs_dir() -> Path:
    """Where the shipped job configs live (`jobs/configs/` in a checkout, `raygent/jobs/configs/` in a wheel).

    The jobs package is located as data (its spec), not imported: the platform depends on no job's code.
    """
    spec = importlib.util.find_spec("raygent.jobs")
    for root in spec.submodule_search_locations or [] if spec else []:
        candidate = Path(root) / "configs"
        if candidate.is_dir():
            return candidate
    raise ConfigError("no jobs/configs directory found in the installed raygent package")


def resolve_config_path(name_or_path: str) -> Path:
    """`fls` → `jobs/configs/fls.yaml`; anything that exists as a file is taken as a path."""
    if not name_or_path.strip():
        raise ConfigError("CONFIG is empty; expected a job name (e.g. fls) or a path to a YAML file")
    path = Path(name_or_path)
    try:
        is_file, is_dir = path.is_file(), path.is_dir()
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte
        raise ConfigError(f"config {name_or_path!r}: not a usable path ({exc})") from None
    if is_file:
        return path
    if is_dir:
        raise ConfigError(f"config {name_or_path!r} is a directory; expected a YAML file or a job name")
    if path.suffix in {".yaml", ".yml"} or "/" in name_or_path:
        raise ConfigError(f"config file {name_or_path!r} does not exist")
    candidate = configs_dir() / f"{name_or_path}.yaml"
    if candidate.is_file():
        return candidate
    known = sorted(p.stem for p in configs_dir().glob("*.yaml"))
    raise ConfigError(
        f"no job named {name_or_path!r}{_did_you_mean(name_or_path, known)}; known jobs: {', '.join(known)}"
    )


def load_entry(entry: str) -> Any:
    """Import `"module:attr"` and return the attribute."""
    module_name, _, attr = entry.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"entry: cannot import module {module_name!r} ({exc})") from None
    if not hasattr(module, attr):
        raise ConfigError(f"entry: module {module_name!r} has no attribute {attr!r}")
    return getattr(module, attr)


_JOB_EXPECTS = "a job class (a study with params_model, trainable, analyze, plot; or a recipe with config_model, run)"
_STUDY_ATTRS = ("params_model", "metric", "mode", "trainable", "analyze", "plot")


def check_job_entry(value: object) -> str:
    """`entry:` must name a job class: a `TuneStudy` (sweeps) or an agent recipe (`config_model` and `run`)."""
    if value is None:
        raise ConfigError(f"entry: required key is missing; expected 'module:attr' naming {_JOB_EXPECTS}")
    try:
        check_entry(value, "class", _JOB_EXPECTS)
    except ConfigError as exc:
        raise ConfigError(f"entry: {exc}") from None
    assert isinstance(value, str)
    job_class = load_entry(value)
    is_recipe = hasattr(job_class, "config_model") and callable(getattr(job_class, "run", None))
    missing = [name for name in _STUDY_ATTRS if not hasattr(job_class, name)]
    if not is_recipe and missing:
        raise ConfigError(f"entry: {value!r} is a class without {', '.join(missing)}; expected {_JOB_EXPECTS}")
    return value


def parse_override(text: str) -> tuple[list[str], Any]:
    """`a.b=1` → (["a", "b"], 1); the value is read as YAML (numbers, lists, booleans, null)."""
    key, sep, raw = text.partition("=")
    if not sep or not key or any(not part for part in key.split(".")):
        raise ConfigError(f"override {text!r}: expected key=value, e.g. study.alpha=0.1")
    try:
        value = yaml.safe_load(raw) if raw else ""
    except yaml.YAMLError:
        value = raw
    return key.split("."), value


def apply_overrides(data: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    for text in overrides:
        path, value = parse_override(text)
        node = data
        for part in path[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"override {text!r}: {part!r} is a value, not a section")
            node = child
        node[path[-1]] = value
    return data


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, except that a key given twice in one mapping is an error (PyYAML keeps the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: let PyYAML report it
                break
            if first is not None:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first given on line {first.line + 1})",
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def read_yaml_file(path: Path, what: str = "config file") -> dict[str, Any]:
    """A YAML mapping from `path`; `ConfigError` for unreadable, non-UTF-8, empty, invalid or non-mapping files
    and for duplicate keys, naming the file (and the line where YAML can tell)."""
    try:
        raw = path.read_bytes()
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a {what}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}: not UTF-8 text (byte 0x{raw[exc.start]:02x} on line {line}); save the {what} as UTF-8"
        ) from None
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        raise ConfigError(f"{path}: not valid YAML: {where}{problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
    if data is None:
        raise ConfigError(f"{path}: the {what} is empty; expected a YAML mapping with at least job: and entry:")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level, got {type(data).__name__}")
    return data


def load_config(name_or_path: str, overrides: Sequence[str] = (), remote: bool = False) -> JobConfig:
    """Read, override and validate a config; raises `ConfigError` naming the first bad key. `remote`: the job runs
    on a cluster (`raygent submit`), so model paths that exist only there pass (the cluster validates them again)."""
    path = resolve_config_path(name_or_path)
    return validate_config(apply_overrides(read_yaml_file(path), overrides), remote)


def validate_config(data: Mapping[str, Any], remote: bool = False) -> JobConfig:
    data = dict(data)
    context = {"remote_model_paths": remote}
    job_class = load_entry(check_job_entry(data.get("entry")))
    params_model: type[StudyParams] = getattr(job_class, "params_model", StudyParams)
    sections: dict[str, Any] = {"study": (params_model, params_model())}
    config_model: type[BaseModel] | None = getattr(job_class, "config_model", None)
    if config_model is not None:  # an agent recipe: its sections (policy, env, ...) sit at the top level
        sections.update({name: (f.annotation, f) for name, f in config_model.model_fields.items()})
    if "env" in sections and isinstance(data.get("env"), Mapping):  # `env: {name: toolcalc, ...}` (platform.envs)
        try:
            data["env"] = named_env(data["env"])
        except EnvRegistryError as exc:
            raise ConfigError(str(exc)) from None
    model = create_model(f"{job_class.__name__}Config", __base__=JobConfig, **sections)
    try:
        config = model.model_validate(data, context=context)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, model, data)) from None
    _check_space(config, params_model)
    _check_finite(config.model_dump(), [], _infinite_ok(params_model))
    if config_model is not None:  # the recipe model's own cross-section validators (e.g. learner vs trainer)
        try:
            sections = {name: getattr(config, name) for name in config_model.model_fields}
            config_model.model_validate(sections, context=context)
        except ValidationError as exc:
            raise ConfigError(_explain(exc, config_model, data)) from None
    return config


def _infinite_ok(params_model: type[StudyParams]) -> set[tuple[str, ...]]:
    """Config paths where a study parameter declares `inf` a meaningful value (`Field(allow_inf_nan=True)`, e.g.
    clipped_asgd's `clip: .inf` for "no clipping"): its `study.<name>` and its `sweep.space.<name>` values."""
    names = [
        name
        for name, field in params_model.model_fields.items()
        if any(getattr(meta, "allow_inf_nan", None) is True for meta in field.metadata)
    ]
    return {("study", name) for name in names} | {("sweep", "space", name) for name in names}


def _check_finite(value: Any, where: list[str], exempt: Collection[tuple[str, ...]] = ()) -> None:
    """Every number in a config is finite: `inf`/`nan` (YAML's `.inf`, `.nan`, or `"inf"` parsed as a float)
    would pass `ge`/`le` bounds or compare false and poison a run much later. Paths in `exempt` (and below them)
    are left to their own validator."""
    if any(tuple(where[: len(path)]) == path for path in exempt):
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{'.'.join(where) or '(top level)'}: got {value}; expected a finite number")
    if isinstance(value, Mapping):
        for key, item in value.items():
            _check_finite(item, [*where, str(key)], exempt)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _check_finite(item, [*where, str(index)], exempt)


def _check_space(config: JobConfig, params_model: type[StudyParams]) -> None:
    fields = list(params_model.model_fields)
    for knob, dim in config.sweep.space.items():
        where = f"sweep.space.{knob}"
        if knob not in fields:
            raise ConfigError(f"{where}: {knob!r} is not a parameter of this study{_did_you_mean(knob, fields)}")
        form = "grid" if dim.grid is not None else "choice"
        for index, value in enumerate(dim.values or []):
            try:
                params = params_model.model_validate({**config.study.model_dump(), knob: value})
            except ValidationError as exc:
                reason = exc.errors()[0]["msg"]
                raise ConfigError(f"{where}: value {value!r} at position {index} is invalid: {reason}") from None
            reject_bool_numbers(value, getattr(params, knob), f"{where}.{form}.{index}")
        if config.sweep.search == "optuna" and dim.grid is not None:
            raise ConfigError(f"{where}: search 'optuna' takes choice/uniform/loguniform/randint, not grid")


def _did_you_mean(word: str, candidates: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_known_keys(where: str, given: Mapping[str, Any], allowed: Sequence[str]) -> None:
    """Raises `ValueError` naming the first key of `given` not in `allowed`, with a "did you mean" (a component's
    `kwargs` against its `Settings`, `platform.plugins`; a task function's keyword arguments)."""
    for key in given:
        if key not in allowed:
            raise ValueError(
                f"{where}.{key}: unknown key{_did_you_mean(key, allowed)}; expected one of: {', '.join(allowed)}"
            )


def check_arguments(where: str, fn: Any, given: Mapping[str, Any]) -> None:
    """Raises `ValueError` naming the first key of `given` whose value the annotation of `fn`'s parameter of that
    name refuses (a job's task kwargs, before Ray starts); unannotated parameters, and annotations pydantic cannot
    check, accept anything."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # an annotation that does not resolve here: nothing to check against
        return
    for key, value in given.items():
        if key not in hints:
            continue
        try:
            adapter: TypeAdapter[Any] = TypeAdapter(hints[key])
        except Exception:
            continue
        try:
            parsed = adapter.validate_python(value)
        except ValidationError as exc:
            error = exc.errors()[0]
            cause = error.get("ctx", {}).get("error")  # a validator's own message, as it wrote it
            message = str(cause).removeprefix(f"{key}: ") if isinstance(cause, Exception) else error["msg"].lower()
            raise ValueError(f"{where}.{key}: got {value!r}; {message}") from None
        reject_bool_numbers(value, parsed, f"{where}.{key}")


def first_error(exc: ValidationError) -> str:
    """`dotted.location: message` of a validation error's first error (a validator's own message as it wrote it,
    without pydantic's "Value error, " in front)."""
    error = exc.errors()[0]
    cause = error.get("ctx", {}).get("error")
    message = str(cause) if isinstance(cause, Exception) else error["msg"]
    return f"{'.'.join(str(p) for p in error['loc'])}: {message}"


def _fields_at(model: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """The keys allowed in the mapping found at `loc` inside `model` (through nested models and dicts)."""
    current: Any = model
    index = 0
    while index < len(loc):
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
        field = current.model_fields.get(str(loc[index]))
        if field is None:
            return []
        annotation = field.annotation
        if typing.get_origin(annotation) is dict:
            current = typing.get_args(annotation)[1]
            index += 2  # past the field and the dict's key
            continue
        models = [a for a in typing.get_args(annotation) if isinstance(a, type) and issubclass(a, BaseModel)]
        current = models[0] if models else annotation
        index += 1
    return list(current.model_fields) if isinstance(current, type) and issubclass(current, BaseModel) else []


def _data_loc(loc: Sequence[str | int], data: Any) -> list[str]:
    """`loc` without the tags pydantic adds for union members (`constrained-int`, `literal['auto']`): the parts
    that are keys or indices of the input as given."""
    kept: list[str] = []
    node = data
    for part in loc:
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        elif node is not None and isinstance(node, Mapping | list):
            node = None  # a key the input lacks (a missing or unknown key): keep it and stop walking
        else:
            continue
        kept.append(str(part))
    return kept


def _explain(exc: ValidationError, model: type[BaseModel], data: Any = None) -> str:
    key, problem = explain_parts(exc, model, data)
    return f"{key}: {problem}" if key else problem


def explain_parts(exc: ValidationError, model: type[BaseModel], data: Any = None) -> tuple[str, str]:
    """The first error of validating `data` against `model` as (dotted key, problem): the key is empty where the
    problem names its own key (a whole-model validator's message). `_explain` joins the two."""
    error = exc.errors()[0]
    loc = [str(part) for part in error["loc"]] if data is None else _data_loc(error["loc"], data)
    key = ".".join(loc) or "(top level)"
    value = error.get("input")
    if error["type"] == "extra_forbidden":
        allowed = _fields_at(model, error["loc"][:-1])
        hint = _did_you_mean(loc[-1], allowed)
        expected = f"one of: {', '.join(allowed)}" if allowed else "no such key"
        return key, f"unknown key{hint}; expected {expected}"
    if error["type"] == "missing":
        return key, "required key is missing"
    more = f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else ""
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, KeyProblem):  # about a key below the reported one: `reward.kwargs.budget: ...`
        return ".".join([*loc, cause.key]), f"{cause.problem}{more}"
    if isinstance(cause, RenamedKey):
        at = "".join(f"{part}." for part in loc)
        return "", f"{at}{cause.old} is now spelled {at}{cause.new}"
    if isinstance(cause, ConfigError) or (error["type"] == "value_error" and cause is not None):
        # a validator's own message, as written (check_entry's names the value already); a whole-config
        # validator's names its key
        return (key, f"{cause}{more}") if loc else ("", f"{cause}{more}")
    shown = repr(value) if not isinstance(value, float) or math.isfinite(value) else str(value)
    if isinstance(value, dict | list) and len(shown) > 80:
        shown = shown[:77] + "..."
    return key, f"got {shown}; expected {error['msg'].lower()}{more}"
