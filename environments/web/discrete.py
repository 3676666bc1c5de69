"""A discrete-action, fixed-size-observation view of `BrowserEnv` for MLP policies (the RLlib baseline).

`DiscreteWebEnv` wraps a `BrowserEnv` so that a plain PPO policy can act in the suite's apps:

- **Actions**, `Discrete(n)`: an action type applied to one of the first `K` element ids of the observation
  (the `V` verbs `click`, `left_double`, `right_single`, or a subset: `Encoding.verbs`), `type(id, slot_j)`
  for each of `S` *task text slots*, and two element-free keys (`hotkey("Escape")`, `hotkey("Enter")`). Index
  layout: `verb * K + k` for the verbs, then `V*K + j * K + k` for typing slot `j` into element slot `k`, then
  the keys. `action_text(index)` gives the action string `BrowserEnv` receives.
- **Task text slots**: the strings an agent may need to type, taken from the instruction in order of
  appearance: quoted strings (straight or curly quotes), file names (`notes.txt`) and numbers (`1.75`, `90`).
- **Observation**, `Dict(observations=Box(0, 1, (D,)), action_mask=Box(0, 1, (n,)))`: per element slot, whether
  it is filled, its role (one-hot), a hash bucket of its name (one-hot), whether its name occurs in the
  instruction, the share of its name's words that do, whether it equals or contains each text slot, its value
  and flags, and whether it sits in a menu or a dialog; then global features (a hashed bag of the
  instruction's words, which slots are filled, the last action's error, the step count, open menus and
  dialogs). The mask allows element actions on filled element slots, typing only a filled text slot into a
  text field, list or slider, and the keys always (RLlib's action-masking convention: the keys `observations`
  and `action_mask`).

An action the mask forbids still runs, so unmasked agents (random ones, `check_env`) are honest: an empty
element slot, or an empty text slot, turns into an action on element 0, which no page has, and the episode
shows the error. Reward, termination and `info` are `BrowserEnv`'s, plus `info["action_text"]`.

Unlike SEAgent's agent (a VLM emitting UI-TARS text), this policy picks among a few hundred grounded
choices; it is a baseline for RL plumbing and encoding, not a model of the paper's agent. The encoding is
pure (`encode`), deterministic across processes (CRC32 hashes, not Python's salted `hash`) and needs no browser.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, SupportsFloat

import gymnasium
import numpy as np
from gymnasium import spaces

from raygent.environments.web.actions import ActionSettings
from raygent.environments.web.env import BrowserEnv
from raygent.environments.web.observe import Element, parse

FEATURES, MASK = "observations", "action_mask"
"""The observation's keys (the names RLlib's action-masking modules read)."""
VERBS = ("click", "left_double", "right_single")
"""The element action types (an `Encoding` may use a subset)."""
KEYS = ('hotkey("Escape")', 'hotkey("Enter")')
ROLES = (
    "button", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "link", "textbox", "searchbox", "combobox",
    "listbox", "option", "checkbox", "radio", "slider", "spinbutton", "switch", "canvas", "treeitem", "gridcell",
    "generic",
)  # fmt: skip
"""Roles with their own one-hot column; any other role shares one more."""
TYPEABLE = frozenset({"textbox", "searchbox", "combobox", "spinbutton", "slider", "listbox"})
"""Roles `type(id, text)` acts on (`actions.py`: fill, select an option, set a range)."""
FLAGS = ("selected", "checked", "expanded", "focused", "disabled")
MISSING_ELEMENT = 0
"""The id a forbidden action targets: observation ids start at 1, so the page reports 'no element [0]'."""

_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”")
_FILE = re.compile(r"(?<![\w./])[\w/-]+\.[A-Za-z]\w*")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")
_WORD = re.compile(r"[a-z0-9]+")
_CONTEXT_ROLES = {"menu": "menu", "dialog": "dialog", "alertdialog": "dialog"}


@dataclass(frozen=True)
class Encoding:
    """Sizes of the encoding: `elements` (K) element slots, `text_slots` (S), hash buckets of names and terms,
    and the element action types `verbs` (a subset of `VERBS`, in that order)."""

    elements: int = 32
    text_slots: int = 4
    name_buckets: int = 16
    term_buckets: int = 32
    verbs: tuple[str, ...] = VERBS

    def __post_init__(self) -> None:
        verbs = tuple(self.verbs)
        if not verbs or any(verb not in VERBS for verb in verbs) or len(set(verbs)) != len(verbs):
            raise ValueError(f"verbs must be distinct names among {VERBS}, got {self.verbs!r}")
        object.__setattr__(self, "verbs", tuple(v for v in VERBS if v in verbs))

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Encoding:
        """The sizes named in a `make_discrete_env` config (defaults for the rest)."""
        fields = ("elements", "text_slots", "name_buckets", "term_buckets")
        sizes: dict[str, Any] = {name: int(config[name]) for name in fields if config.get(name) is not None}
        if config.get("verbs"):
            sizes["verbs"] = tuple(config["verbs"])
        return cls(**sizes)

    @property
    def per_element(self) -> int:
        # filled, roles + other, name buckets, name in goal, word share, equals/contains per slot,
        # equals any slot, has value, value equals a slot, flags, in menu, in dialog
        return 1 + len(ROLES) + 1 + self.name_buckets + 2 + 2 * self.text_slots + 1 + 2 + len(FLAGS) + 2

    @property
    def globals(self) -> int:
        # term buckets, slot filled, error, step fraction, menu open, dialog open, more elements than slots
        return self.term_buckets + self.text_slots + 5

    @property
    def size(self) -> int:
        return self.elements * self.per_element + self.globals

    @property
    def actions(self) -> int:
        return self.elements * (len(self.verbs) + self.text_slots) + len(KEYS)


@dataclass(frozen=True)
class Placed:
    """An element with an id and its context (whether a menu or dialog holds it)."""

    element: Element
    in_menu: bool
    in_dialog: bool


def text_slots(goal: str, count: int) -> list[str]:
    """The strings of `goal` an agent may need to type: quoted text, file names, numbers (first `count`).

    >>> text_slots('Rename the file notes.txt to lib/final_notes.txt.', 4)
    ['notes.txt', 'lib/final_notes.txt']
    >>> text_slots('Set the opacity of the layer “Paint” to 20%.', 4)
    ['Paint', '20']
    >>> text_slots('Insert a table with 3 rows and 2 columns, and 3 more.', 4)
    ['3', '2']
    """
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for pattern in (_QUOTED, _FILE, _NUMBER):
        for match in pattern.finditer(goal):
            start, end = match.span()
            if any(start < high and low < end for low, high in taken):
                continue
            taken.append((start, end))
            text = next((group for group in match.groups() if group), None) if match.groups() else match.group()
            if text and text.strip():
                found.append((start, text.strip()))
    slots: list[str] = []
    for _, text in sorted(found):
        if text not in slots:
            slots.append(text)
    return slots[:count]


def bucket(text: str, buckets: int) -> int:
    """A stable hash bucket of `text` (CRC32, the same in every process)."""
    return zlib.crc32(text.encode("utf-8")) % buckets


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def placed_elements(text: str) -> list[Placed]:
    """The observation's elements that carry an id, in order, with whether a menu or dialog holds each."""
    placed: list[Placed] = []
    stack: list[tuple[int, str]] = []  # (depth, context) of the open structural ancestors
    for element in parse(text):
        while stack and stack[-1][0] >= element.depth:
            stack.pop()
        context = _CONTEXT_ROLES.get(element.role)
        if element.id is not None:
            kinds = {kind for _, kind in stack}
            placed.append(Placed(element, "menu" in kinds, "dialog" in kinds))
        if context is not None:
            stack.append((element.depth, context))
    return placed


def _occurs(needle: str, haystack: str) -> bool:
    """Whether `needle` occurs in `haystack` as whole words (case-insensitive)."""
    needle = needle.strip().lower()
    return bool(needle) and re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", haystack.lower()) is not None


def encode(
    text: str, goal: str, error: str = "", step_fraction: float = 0.0, encoding: Encoding | None = None
) -> tuple[np.ndarray, np.ndarray, list[Placed], list[str]]:
    """`(features, action_mask, element slots, text slots)` of one observation (see the module docstring).

    >>> obs = '[1] button "File"\\n[2] button "notes.txt"'
    >>> features, mask, elements, slots = encode(obs, "Open the file notes.txt.")
    >>> slots, [p.element.id for p in elements], int(mask.sum())
    (['notes.txt'], [1, 2], 8)
    """
    enc = encoding or Encoding()
    elements = placed_elements(text)
    slots = text_slots(goal, enc.text_slots)
    goal_words = set(words(goal))
    rows = np.zeros((enc.elements, enc.per_element), np.float32)
    for k, placed in enumerate(elements[: enc.elements]):
        rows[k] = _element_row(placed, goal, goal_words, slots, enc)
    global_row = np.zeros(enc.globals, np.float32)
    for word in goal_words:
        global_row[bucket(word, enc.term_buckets)] = 1.0
    offset = enc.term_buckets
    global_row[offset : offset + len(slots)] = 1.0
    offset += enc.text_slots
    global_row[offset : offset + 5] = (
        float(bool(error)),
        float(np.clip(step_fraction, 0.0, 1.0)),
        float(any(p.in_menu for p in elements)),
        float(any(p.in_dialog for p in elements)),
        float(len(elements) > enc.elements),
    )
    features = np.concatenate([rows.reshape(-1), global_row])
    return features, action_mask(elements, slots, enc), elements[: enc.elements], slots


def _element_row(placed: Placed, goal: str, goal_words: set[str], slots: list[str], enc: Encoding) -> np.ndarray:
    element = placed.element
    row = np.zeros(enc.per_element, np.float32)
    row[0] = 1.0
    column = 1
    role_index = ROLES.index(element.role) if element.role in ROLES else len(ROLES)
    row[column + role_index] = 1.0
    column += len(ROLES) + 1
    name = element.name.strip()
    row[column + bucket(name.lower(), enc.name_buckets)] = 1.0 if name else 0.0
    column += enc.name_buckets
    name_words = words(name)
    row[column] = float(_occurs(name, goal))
    row[column + 1] = sum(w in goal_words for w in name_words) / len(name_words) if name_words else 0.0
    column += 2
    for j, slot in enumerate(slots):
        row[column + j] = float(name.lower() == slot.lower())
        row[column + enc.text_slots + j] = float(_occurs(slot, name))
    column += 2 * enc.text_slots
    row[column] = float(any(name.lower() == slot.lower() for slot in slots))
    value = (element.value or "").strip()
    row[column + 1] = float(bool(value))
    row[column + 2] = float(any(value.lower() == slot.lower() for slot in slots))
    column += 3
    for i, flag in enumerate(FLAGS):
        row[column + i] = float(flag in element.flags)
    column += len(FLAGS)
    row[column], row[column + 1] = float(placed.in_menu), float(placed.in_dialog)
    return row


def action_mask(elements: Sequence[Placed], slots: Sequence[str], encoding: Encoding) -> np.ndarray:
    """1 for the actions that make sense now: element actions on filled slots, typing a filled text slot
    into a text field, list or slider, and the keys."""
    enc = encoding
    mask = np.zeros(enc.actions, np.float32)
    filled = min(len(elements), enc.elements)
    for verb in range(len(enc.verbs)):
        mask[verb * enc.elements : verb * enc.elements + filled] = 1.0
    base = len(enc.verbs) * enc.elements
    for j in range(len(slots)):
        for k in range(filled):
            if elements[k].element.role in TYPEABLE:
                mask[base + j * enc.elements + k] = 1.0
    mask[enc.actions - len(KEYS) :] = 1.0
    return mask


def action_text(index: int, elements: Sequence[Placed], slots: Sequence[str], encoding: Encoding) -> str:
    """The `BrowserEnv` action string of a discrete action (element 0 stands for an empty slot)."""
    enc = encoding
    if not 0 <= index < enc.actions:
        raise ValueError(f"action {index} is outside Discrete({enc.actions})")
    keys_start = enc.actions - len(KEYS)
    if index >= keys_start:
        return KEYS[index - keys_start]

    def element_id(k: int) -> int:
        ident = elements[k].element.id if k < len(elements) else None
        return ident if ident is not None else MISSING_ELEMENT

    verbs_end = len(enc.verbs) * enc.elements
    if index < verbs_end:
        verb, k = divmod(index, enc.elements)
        return f"{enc.verbs[verb]}({element_id(k)})"
    j, k = divmod(index - verbs_end, enc.elements)
    if j >= len(slots):
        return f'type({MISSING_ELEMENT}, "")'
    return f"type({element_id(k)}, {json.dumps(slots[j], ensure_ascii=False)})"


class DiscreteWebEnv(gymnasium.Wrapper):
    """`BrowserEnv` with `Discrete` actions and a fixed-size numeric observation (see the module docstring)."""

    def __init__(self, env: gymnasium.Env, encoding: Encoding | None = None, max_steps: int | None = None) -> None:
        """`env`: a `BrowserEnv`, or any environment whose observations carry `text` (the observation format of
        `observe.py`), `goal` and `last_action_error` and whose actions are the web grammar's strings.
        `max_steps` scales the step-count feature when `env` has no `max_steps` of its own."""
        super().__init__(env)
        self.max_steps = max_steps
        self.encoding = encoding or Encoding()
        enc = self.encoding
        self.action_space = spaces.Discrete(enc.actions)
        self.observation_space = spaces.Dict(
            {
                FEATURES: spaces.Box(0.0, 1.0, (enc.size,), np.float32),
                MASK: spaces.Box(0.0, 1.0, (enc.actions,), np.float32),
            }
        )
        self._elements: list[Placed] = []
        self._slots: list[str] = []
        self._mask = np.ones(enc.actions, np.float32)
        self.last_text = ""
        """The latest observation's accessibility-tree text (what the element slots were read from)."""

    @property
    def browser_env(self) -> BrowserEnv:
        env = self.env.unwrapped
        if not isinstance(env, BrowserEnv):
            raise TypeError(f"this DiscreteWebEnv wraps a {type(env).__name__}, not a BrowserEnv")
        return env

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        observation, info = self.env.reset(seed=seed, options=options)
        return self._encode(observation, steps=0), info

    def step(self, action: Any) -> tuple[dict, SupportsFloat, bool, bool, dict[str, Any]]:
        text = self.action_text(int(action))
        observation, reward, terminated, truncated, info = self.env.step(text)
        info["action_text"] = text
        return self._encode(observation, steps=int(info.get("step", 0))), reward, terminated, truncated, info

    def action_text(self, index: int) -> str:
        """The action string discrete action `index` stands for in the current observation."""
        return action_text(index, self._elements, self._slots, self.encoding)

    @property
    def mask(self) -> np.ndarray:
        """The current action mask (a copy)."""
        return self._mask.copy()

    def _encode(self, observation: Mapping[str, Any], steps: int) -> dict[str, np.ndarray]:
        env = self.env.unwrapped
        if isinstance(env, BrowserEnv):
            limit = env.max_steps if env.task is not None else 1
        else:
            limit = int(getattr(env, "max_steps", None) or self.max_steps or 1)
        features, mask, self._elements, self._slots = encode(
            observation["text"], observation["goal"], observation["last_action_error"], steps / limit, self.encoding
        )
        self._mask, self.last_text = mask, observation["text"]
        return {FEATURES: features, MASK: mask}


def make_discrete_env(config: Mapping[str, Any] | None = None) -> DiscreteWebEnv:
    """A `DiscreteWebEnv` from plain settings (what RLlib's env creator passes).

    Keys: `app` (default `code_editor`), `difficulties` (default atomic only), `templates`, `ui_seed` (default 0,
    None: drawn per episode), `max_steps`, `step_timeout_s`, `wait_s` (what `wait()` sleeps),
    `action_timeout_ms` (how long a click waits for a covered element: 1 s, not `BrowserEnv`'s 3 s, since a
    policy that clicks under an open menu would otherwise spend most of its sampling time waiting; on a
    heavily loaded machine a dialog's button can miss that deadline now and then: raise it there), and the
    encoding's sizes `elements`, `text_slots`, `name_buckets`, `term_buckets` and its `verbs`, and `cpus`: the
    cores to hold the browser to (a list), or `"worker"`: one core per remote RLlib env runner, by its worker
    index (`worker_core`; the driver's local runner, index 0, stays free). Other keys are ignored.

    `factory`: `"module:attr"` of any environment factory, called with this config (RLlib's `EnvContext`); it
    returns a `DiscreteWebEnv` (used as it is) or an environment `DiscreteWebEnv` can wrap (a `BrowserEnv` over
    any registered app or external pages, with the caller's own settings). The encoding keys still apply.
    """
    if config and config.get("factory"):
        return _from_factory(config)
    cpus = config.get("cpus") if config else None
    if cpus == "worker":
        index = int(getattr(config, "worker_index", 0))
        cpus = [worker_core(index - 1)] if index > 0 else None
    config = dict(config or {})
    templates = config.get("templates")
    env = BrowserEnv(
        app=config.get("app", "code_editor"),
        templates=list(templates) if templates else None,
        difficulties=tuple(config.get("difficulties", (1,))),
        ui_seed=config.get("ui_seed", 0),
        max_steps=config.get("max_steps"),
        step_timeout_s=float(config.get("step_timeout_s", 30.0)),
        action_settings=ActionSettings(
            action_timeout_ms=float(config.get("action_timeout_ms", 1000)), wait_s=float(config.get("wait_s", 0.2))
        ),
        cpus=cpus,
    )
    return DiscreteWebEnv(env, Encoding.from_config(config))


def load_factory(entry: str) -> Any:
    """The callable `"module:attr"` names (`ValueError` naming the `factory` key if it is not one)."""
    module_name, _, attr = str(entry).partition(":")
    if not module_name or not attr:
        raise ValueError(f"factory: expected 'module:attr', got {entry!r}")
    try:
        value = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"factory: cannot load {entry!r} ({error})") from None
    if not callable(value):
        raise ValueError(f"factory: {entry!r} is not callable")
    return value


def _from_factory(config: Mapping[str, Any]) -> DiscreteWebEnv:
    env = load_factory(config["factory"])(config)
    if isinstance(env, DiscreteWebEnv):
        return env
    if not isinstance(env, gymnasium.Env):
        raise ValueError(f"factory: {config['factory']!r} returned {type(env).__name__}, not a gymnasium.Env")
    max_steps = config.get("max_steps")
    return DiscreteWebEnv(env, Encoding.from_config(config), int(max_steps) if max_steps else None)


def worker_core(index: int) -> int:
    """The core for the `index`-th worker (from 0) among this process's allowed cores, round robin."""
    cores = sorted(os.sched_getaffinity(0))
    return cores[index % len(cores)]
