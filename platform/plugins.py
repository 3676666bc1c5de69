"""One component model: every seam of an agent run is configured as `{entry: "module:attr", kwargs: {...}}` and
built by `build`.

Where it sits: between the config layer (`platform.config`, which imports and checks entries before Ray starts)
and the seams that build components: reward models (`reward`, `platform.rl.reward`), task sources (`tasks`,
`platform.rl.tasks`), agent loops (`rollout.agent`, `platform.rl.rollout`), trainer hooks (`trainer.hooks`,
`platform.rl.hooks`) and loss-term plugins (`learner.loss.terms`, `platform.losses.terms`). Advantage estimators are
functions, named by `module:attr` beside the built-in names (`platform.losses.advantages`).

    reward:
      entry: raygent.rewards.factguard.decision_aware:DecisionAware
      kwargs: {false_negative: 1.5, tool_call: 0.1}

A component class may declare its kwargs as a nested pydantic model, `Settings` (a pydantic model class is its
own `Settings`): the config's `kwargs` are then validated against it when the config is (an unknown key or a bad
value is a `ConfigError` naming `<section>.kwargs.<key>`, with a "did you mean" for a misspelt key; the CLI exits 2
before Ray starts). `build(component, protocol, *args, **extra)` constructs `cls(*args, **kwargs, **extra)` (the
seam's own arguments first, e.g. a task source's `task_fn`) and checks the instance against the seam's protocol.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from raygent.platform.config import ClassEntry, KeyProblem, check_known_keys, explain_parts, load_entry

T = TypeVar("T")


class Component(BaseModel):
    """A class named by `entry` (`"module:attr"`), built with `kwargs` (checked against its `Settings`, if any)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    entry: ClassEntry
    kwargs: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _kwargs_fit_settings(self) -> Component:
        check_settings(self.entry, self.kwargs)
        return self


class NoSettings(BaseModel):
    """The `Settings` of a component class that takes no kwargs (any key given is a config error)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def settings_model(target: Any) -> type[BaseModel] | None:
    """The kwargs model of a component class: its nested `Settings`, itself when it is a pydantic model, else None."""
    settings = getattr(target, "Settings", None)
    if inspect.isclass(settings) and issubclass(settings, BaseModel):
        return settings
    if inspect.isclass(target) and issubclass(target, BaseModel):
        return target
    return None


def check_settings(entry: str, kwargs: Mapping[str, Any], where: str = "kwargs") -> BaseModel | None:
    """Validate `kwargs` against the `Settings` of the class `entry` names and return them parsed (None when the
    class declares none). Raises `KeyProblem` (a `ValueError`) naming `<where>.<key>`: an unknown key with a "did
    you mean", a bad value with what was expected. `where=""` names the key alone (a loss term's inline knobs)."""
    from raygent.platform.config import reject_bool_numbers

    model = settings_model(load_entry(entry))
    if model is None:
        return None
    allowed = [field.alias if isinstance(field.alias, str) else name for name, field in model.model_fields.items()]
    if kwargs and not allowed:
        key = ".".join(part for part in (where, next(iter(kwargs))) if part)
        raise KeyProblem(key, f"unknown key; {entry} takes no kwargs")
    try:
        check_known_keys(where, kwargs, allowed)
    except ValueError as exc:
        key, _, problem = str(exc).partition(": ")
        raise KeyProblem(key.removeprefix("."), problem) from None
    try:
        parsed = model.model_validate(dict(kwargs))
    except ValidationError as exc:
        key, problem = explain_parts(exc, model, kwargs)
        key = "" if key == "(top level)" else key
        raise KeyProblem(".".join(part for part in (where, key) if part) or entry, problem) from None
    try:
        reject_bool_numbers(kwargs, parsed)
    except ValueError as exc:
        key, _, problem = str(exc).partition(": ")
        raise KeyProblem(".".join(part for part in (where, key) if part), problem) from None
    return parsed


def build(component: Component, protocol: type[T], *args: Any, **extra: Any) -> T:
    """`cls(*args, **component.kwargs, **extra)` of the class `component.entry` names, checked to implement
    `protocol` (a runtime-checkable Protocol or a base class); a `TypeError` naming the entry otherwise."""
    cls = load_entry(component.entry)
    instance = cls(*args, **component.kwargs, **extra)
    if not isinstance(instance, protocol):
        raise TypeError(
            f"{component.entry!r} built a {type(instance).__name__}, which does not implement "
            f"{protocol.__name__}{_members(protocol)}"
        )
    return instance


def _members(protocol: type) -> str:
    """` (prompt, act, ...)`: what a Protocol asks for, for the message."""
    if not getattr(protocol, "_is_protocol", False):
        return ""
    names = sorted({*vars(protocol).get("__annotations__", {}), *vars(protocol)})
    names = [name for name in names if not name.startswith("_")]
    return f" ({', '.join(names)})" if names else ""
