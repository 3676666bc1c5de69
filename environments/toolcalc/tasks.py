"""ToolCalc task types, the seeded task generator and the train / held-out split.

Three task types, by the number of calculator calls the scripted expert makes (the calculator takes one binary
operation per call, so these are also the fewest calls that work):

| type      | calls | templates (instruction)                                                      |
|-----------|-------|------------------------------------------------------------------------------|
| `compare` | 0     | `Which is larger, A or B?`, `Which is smaller, A or B?`                      |
| `single`  | 1     | `What is A+B?`, `What is A-B?` (A > B), `What is A*B?`                       |
| `chain`   | 2     | `What is A*B+C?`, `What is A*B-C?` (A*B > C), `What is A+B*C?`, `What is (A+B)*C?` |

`difficulty` sets the operand range (`DIFFICULTY_RANGES`): 0 one digit (2..9), 1 two digits, 2 three digits.
Every answer is a positive integer, so a constant `answer(0)` never succeeds.

Splits partition the parameter space, not the ranges: a task (template + operands) is `heldout` when the CRC-32
of its canonical key falls in one residue class of `HELDOUT_MODULUS` (a fifth of all tasks), else `train`. Held-out
tasks are unseen operand combinations drawn from the same ranges, so they measure generalisation of the skill (copy
operands into the call, copy the result into the answer), not extrapolation of the tokenizer to unseen number
shapes; that harder question is asked by evaluating at a higher `difficulty` than trained on.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from raygent.platform.contracts import Task

ENV_ID = "raygent/ToolCalc-v0"
"""The gymnasium id of the ToolCalc environment, also every ToolCalc task's `Task.env`."""

TASK_TYPES: tuple[str, ...] = ("compare", "single", "chain")
SPLITS: tuple[str, ...] = ("train", "heldout")
DIFFICULTY_RANGES: dict[int, tuple[int, int]] = {0: (2, 9), 1: (10, 99), 2: (100, 999)}
"""Inclusive operand range per difficulty level."""

HELDOUT_MODULUS = 5
"""One residue class of the task key's CRC-32 modulo this is held out (a fifth of the parameter space)."""

_MAX_DRAWS = 10_000


@dataclass(frozen=True)
class Template:
    """One question shape.

    `question` and the `steps` are format strings over the operands `a`, `b`, `c` (and, in a step, `r`: the
    previous calculator result). `steps` are the expert's calculator calls in order; `answer` computes the truth.
    """

    name: str
    task_type: str
    arity: int
    question: str
    steps: tuple[str, ...]
    answer: Callable[[Sequence[int]], int]
    valid: Callable[[Sequence[int]], bool] = lambda operands: True


TEMPLATES: dict[str, Template] = {
    template.name: template
    for template in (
        Template("larger", "compare", 2, "Which is larger, {a} or {b}?", (), max, lambda o: o[0] != o[1]),
        Template("smaller", "compare", 2, "Which is smaller, {a} or {b}?", (), min, lambda o: o[0] != o[1]),
        Template("a+b", "single", 2, "What is {a}+{b}?", ("{a}+{b}",), lambda o: o[0] + o[1]),
        Template("a-b", "single", 2, "What is {a}-{b}?", ("{a}-{b}",), lambda o: o[0] - o[1], lambda o: o[0] > o[1]),
        Template("a*b", "single", 2, "What is {a}*{b}?", ("{a}*{b}",), lambda o: o[0] * o[1]),
        Template("a*b+c", "chain", 3, "What is {a}*{b}+{c}?", ("{a}*{b}", "{r}+{c}"), lambda o: o[0] * o[1] + o[2]),
        Template(
            "a*b-c",
            "chain",
            3,
            "What is {a}*{b}-{c}?",
            ("{a}*{b}", "{r}-{c}"),
            lambda o: o[0] * o[1] - o[2],
            lambda o: o[0] * o[1] > o[2],
        ),
        Template("a+b*c", "chain", 3, "What is {a}+{b}*{c}?", ("{b}*{c}", "{a}+{r}"), lambda o: o[0] + o[1] * o[2]),
        Template(
            "(a+b)*c", "chain", 3, "What is ({a}+{b})*{c}?", ("{a}+{b}", "{r}*{c}"), lambda o: (o[0] + o[1]) * o[2]
        ),
    )
}


def templates_of(task_type: str) -> list[Template]:
    """The templates of one task type, in table order."""
    if task_type not in TASK_TYPES:
        raise ValueError(f"unknown task type {task_type!r}; expected one of {TASK_TYPES}")
    return [template for template in TEMPLATES.values() if template.task_type == task_type]


def _operand_names(operands: Sequence[int]) -> dict[str, int]:
    return dict(zip("abc", operands, strict=False))


def task_key(template: str, operands: Sequence[int]) -> str:
    """The canonical key of a task's parameters, e.g. ``a*b+c:37,12,5``; the split and the task id derive from it."""
    return f"{template}:{','.join(str(operand) for operand in operands)}"


def split_of(template: str, operands: Sequence[int]) -> str:
    """`heldout` or `train`: a fixed, seed-independent partition of the parameter space."""
    key = task_key(template, operands).encode()
    return "heldout" if zlib.crc32(key) % HELDOUT_MODULUS == 0 else "train"


def make_task(template: str, operands: Sequence[int], difficulty: int = 0) -> Task:
    """The Task for one template and its operands; raises ValueError when the operands break the template's rule.

    >>> task = make_task("a*b+c", [37, 12, 5], difficulty=1)
    >>> task.instruction, task.params["answer"], task.params["tool_calls"]
    ('What is 37*12+5?', 449, 2)
    """
    if template not in TEMPLATES:
        raise ValueError(f"unknown template {template!r}; expected one of {list(TEMPLATES)}")
    spec = TEMPLATES[template]
    operands = [int(operand) for operand in operands]
    if len(operands) != spec.arity or min(operands) < 1 or not spec.valid(operands):
        raise ValueError(f"operands {operands} do not fit template {template!r}")
    instruction = spec.question.format(**_operand_names(operands))
    answer = spec.answer(operands)
    return Task(
        id=f"toolcalc:{task_key(template, operands)}",
        env=ENV_ID,
        instruction=instruction,
        difficulty=difficulty,
        params={
            "task_type": spec.task_type,
            "template": template,
            "operands": operands,
            "answer": answer,
            "tool_calls": len(spec.steps),
            "split": split_of(template, operands),
        },
    )


def sample_task(
    rng: np.random.Generator, *, task_type: str, difficulty: int, split: str, templates: Sequence[str] | None = None
) -> Task:
    """Draw one task of a type, difficulty and split (rejection sampling over uniform operands); `templates`, when
    given, limits the type's templates to those named."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
    if difficulty not in DIFFICULTY_RANGES:
        raise ValueError(f"unknown difficulty {difficulty}; expected one of {sorted(DIFFICULTY_RANGES)}")
    low, high = DIFFICULTY_RANGES[difficulty]
    candidates = [t for t in templates_of(task_type) if templates is None or t.name in templates]
    if not candidates:
        raise ValueError(f"no template of type {task_type!r} among {list(templates or ())}")
    spec = candidates[int(rng.integers(len(candidates)))]
    for _ in range(_MAX_DRAWS):
        operands = [int(value) for value in rng.integers(low, high + 1, size=spec.arity)]
        if spec.valid(operands) and split_of(spec.name, operands) == split:
            return make_task(spec.name, operands, difficulty)
    raise RuntimeError(f"no {split} task for template {spec.name!r} at difficulty {difficulty}")


def generate_tasks(
    n: int,
    *,
    seed: int,
    split: str = "train",
    task_types: Sequence[str] = TASK_TYPES,
    difficulty: int | Sequence[int] = 1,
    unique: bool = False,
    templates: Sequence[str] | None = None,
) -> list[Task]:
    """`n` tasks drawn from `seed`: each picks a type, then a difficulty, then a template uniformly.

    `templates` limits the draw to the templates named (`["larger", "a+b"]`: each of their types keeps only those);
    a type with none of them is not drawn, and an unknown name is a ValueError.

    The same arguments always give the same list. With `unique`, repeated tasks are redrawn (raises RuntimeError if
    the requested space is too small to hold `n` distinct tasks).
    """
    difficulties = [difficulty] if isinstance(difficulty, int) else list(difficulty)
    if not task_types or not difficulties:
        raise ValueError("task_types and difficulty must not be empty")
    if templates is not None:
        unknown = sorted(set(templates) - set(TEMPLATES))
        if unknown:
            raise ValueError(f"unknown templates {unknown}; expected some of {list(TEMPLATES)}")
        task_types = [kind for kind in task_types if any(TEMPLATES[name].task_type == kind for name in templates)]
        if not task_types:
            raise ValueError(f"templates {list(templates)} are of none of the task types asked for")
    rng = np.random.default_rng(seed)
    tasks: list[Task] = []
    seen: set[str] = set()
    draws = 0
    while len(tasks) < n:
        draws += 1
        if draws > max(_MAX_DRAWS, 20 * n):
            raise RuntimeError(f"could not draw {n} distinct {split} tasks of {list(task_types)} at {difficulties}")
        task_type = task_types[int(rng.integers(len(task_types)))]
        level = difficulties[int(rng.integers(len(difficulties)))]
        task = sample_task(rng, task_type=task_type, difficulty=level, split=split, templates=templates)
        if unique and task.id in seen:
            continue
        seen.add(task.id)
        tasks.append(task)
    return tasks
