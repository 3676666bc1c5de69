"""The environment registry: environments by name, from the package entry point group `raygent.envs`.

An environment registers an `EnvSpec`: what a run config's `env:` section needs to run it (the gymnasium id, the
function that registers it, its task function and expert, default kwargs) with a name, a line of description and
the task splits its task function knows. raygent's own environments are entries of its `pyproject.toml`; another
package adds its own with entries in its `pyproject.toml`:

    [project.entry-points."raygent.envs"]
    mycalc = "mypkg.envs:SPEC"          # an EnvSpec, a list of them, or a zero-arg function returning either

`registered_envs()` reads the group (a broken entry point is an `EnvRegistryError` naming it); `raygent envs`
lists them; a run config names one with `env: {name: mycalc}`, which `named_env` expands to the spec's section
(`env_section`) under the keys given beside the name (`platform.config.validate_config`, before Ray starts).
Nothing here imports an environment: a spec holds `"module:attr"` strings, imported when a config validates.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

ENTRY_POINT_GROUP = "raygent.envs"
"""The package entry point group of environments (`[project.entry-points."raygent.envs"]` in a `pyproject.toml`)."""

ModuleAttr = Annotated[str, Field(pattern=r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")]
"""`"module:attr"` (its form only; the config that uses it imports and checks it)."""

MERGED_KEYS = ("kwargs", "task_kwargs")
"""`env:` keys whose mappings a config given beside `name` updates key by key (the others it replaces)."""


class EnvRegistryError(ValueError):
    """A registry problem meant for the user as it is: a broken entry point, an unknown name."""


class EnvSpec(BaseModel):
    """One registered environment: the values of a run config's `env:` section, with a name.

    `id`, `registration`, `tasks`, `demonstrations`, `kwargs` and `task_kwargs` are the `env:` keys of the same
    names (`raygent.platform.rl.settings.EnvSettings`); `splits` are the split names `tasks` accepts, the first
    the training split (`env.train_split`), the second the evaluation split (`env.eval_split`), any others
    further evaluation splits.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str = Field(min_length=1, pattern=r"^[^\n]*$")
    """One line."""
    id: str = Field(min_length=1)
    """The gymnasium id (`env.id`)."""
    registration: ModuleAttr
    """`f()` that registers `id` with gymnasium (`env.registration`)."""
    tasks: ModuleAttr
    """The task function `f(split, seed, n, **task_kwargs) -> list[Task]` (`env.tasks`)."""
    demonstrations: ModuleAttr | None = None
    """An expert `f(tasks) -> list[turns]` for an SFT stage (`env.demonstrations`)."""
    kwargs: dict[str, Any] = Field(default_factory=dict)
    """The environment's constructor kwargs (`env.kwargs`)."""
    task_kwargs: dict[str, Any] = Field(default_factory=dict)
    """The task function's default keyword arguments (`env.task_kwargs`)."""
    splits: tuple[str, ...] = Field(default=("train", "heldout"), min_length=1)

    def section(self) -> dict[str, Any]:
        """The `env:` section of this spec (a fresh copy: a caller may change it)."""
        section: dict[str, Any] = {
            "id": self.id,
            "registration": self.registration,
            "tasks": self.tasks,
            "kwargs": copy.deepcopy(self.kwargs),
            "task_kwargs": copy.deepcopy(self.task_kwargs),
            "train_split": self.splits[0],
            "eval_split": self.splits[1] if len(self.splits) > 1 else self.splits[0],
        }
        if self.demonstrations is not None:
            section["demonstrations"] = self.demonstrations
        return section


def _where(entry: EntryPoint) -> str:
    return f"entry point {entry.name} = {entry.value} ({ENTRY_POINT_GROUP})"


def load_specs(entry: EntryPoint) -> list[EnvSpec]:
    """The specs one entry point gives: its value, or what it returns when it is a zero-arg function; one
    `EnvSpec` or a list of them. Any failure is an `EnvRegistryError` naming the entry point."""
    expected = "expected an EnvSpec, a list of them, or a zero-arg function returning either"
    try:
        value = entry.load()
    except Exception as exc:  # an import or attribute failure of someone's package: name it, no traceback
        raise EnvRegistryError(f"{_where(entry)}: loading it failed ({type(exc).__name__}: {exc})") from None
    if callable(value) and not isinstance(value, EnvSpec):
        try:
            value = value()
        except Exception as exc:
            raise EnvRegistryError(f"{_where(entry)}: calling it failed ({type(exc).__name__}: {exc})") from None
    found = [value] if isinstance(value, EnvSpec) else list(value) if isinstance(value, list | tuple) else None
    if not found or not all(isinstance(spec, EnvSpec) for spec in found):
        raise EnvRegistryError(f"{_where(entry)}: gives {type(value).__name__} {value!r:.80}; {expected}")
    return found


def registered_envs() -> dict[str, EnvSpec]:
    """name -> spec of every environment the installed packages register, by name; two specs of one name, or a
    broken entry point, are an `EnvRegistryError` naming the entry point(s)."""
    specs: dict[str, EnvSpec] = {}
    origin: dict[str, EntryPoint] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        for spec in load_specs(entry):
            if spec.name in specs and spec != specs[spec.name]:
                raise EnvRegistryError(
                    f"two environments named {spec.name!r}: {_where(origin[spec.name])} and {_where(entry)}"
                )
            specs[spec.name] = spec
            origin.setdefault(spec.name, entry)
    return dict(sorted(specs.items()))


def get_env(name: str) -> EnvSpec:
    """The spec registered as `name`; `EnvRegistryError` with a "did you mean" and the known names if none."""
    from raygent.platform.config import _did_you_mean

    specs = registered_envs()
    if name not in specs:
        known = ", ".join(specs) or "none (run make setup)"
        raise EnvRegistryError(f"unknown environment {name!r}{_did_you_mean(name, list(specs))}; registered: {known}")
    return specs[name]


def env_section(name: str) -> dict[str, Any]:
    """The `env:` config values of the environment registered as `name` (see `EnvSpec.section`)."""
    return get_env(name).section()


def named_env(given: Mapping[str, Any]) -> dict[str, Any]:
    """An `env:` section given as `{name: <registered name>, ...}`: the spec's section, the other keys given over
    it (`kwargs` and `task_kwargs` updated key by key, so `env.task_kwargs.difficulty=2` keeps the spec's other
    task kwargs; every other key replaced). A section without `name` is returned as it is."""
    if "name" not in given:
        return dict(given)
    name = given["name"]
    if not isinstance(name, str):
        raise EnvRegistryError(f"env.name: got {name!r}; expected a registered environment's name (raygent envs)")
    try:
        section = env_section(name)
    except EnvRegistryError as exc:
        raise EnvRegistryError(f"env.name: {exc}") from None
    for key, value in given.items():
        if key == "name":
            continue
        if key in MERGED_KEYS and isinstance(value, Mapping) and isinstance(section.get(key), Mapping):
            section[key] = {**section[key], **value}
        else:
            section[key] = value
    return section


__all__ = [
    "ENTRY_POINT_GROUP",
    "EnvRegistryError",
    "EnvSpec",
    "env_section",
    "get_env",
    "load_specs",
    "named_env",
    "registered_envs",
]
