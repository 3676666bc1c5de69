"""Codex Studio (the code editor app): every template's scripted solve succeeds through `BrowserEnv` under seeded
UI layouts, a random agent rarely succeeds, validates judge hand-built states, and the page's own pieces (the
Mini interpreter, the text operations, the menus built from `ui.json`) behave."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from raygent.environments.web.actions import ActionSettings
from raygent.environments.web.apps.code_editor import content
from raygent.environments.web.apps.code_editor.commands import COMMANDS
from raygent.environments.web.browser import shared_browser
from raygent.environments.web.env import BrowserEnv, run_solver
from raygent.environments.web.observe import parse
from raygent.environments.web.registry import load_app, make_task
from raygent.environments.web.server import shared_server, ui_spec
from raygent.environments.web.task import ATOMIC, COMPOSED, LONG

pytestmark = pytest.mark.browser

APP = "code_editor"
TEMPLATES = sorted(load_app(APP))
CASES = [(t, 11 + 7 * i, 0 if i % 4 == 0 else 3 + 5 * i) for i, t in enumerate(TEMPLATES)]
"""One (template, task seed, UI seed) per template; three in four under a randomized layout."""
SETTINGS = ActionSettings(action_timeout_ms=3000, wait_s=0.2)


@pytest.fixture(scope="module")
def env() -> Iterator[BrowserEnv]:
    environment = BrowserEnv(app=APP, action_settings=SETTINGS)
    yield environment
    environment.close()


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    """The app's page at UI seed 0 in a context of the process's browser (the env's browser when it runs)."""
    context = shared_browser().browser.new_context()
    app_page = context.new_page()
    app_page.goto(shared_server().app_url(APP, 0))
    app_page.evaluate("() => window.raygent.ready")
    yield app_page
    context.close()


def task(template: str, seed: int = 1) -> tuple[Any, dict[str, Any]]:
    instance = make_task(f"{APP}/{template}/{seed}")
    return instance.task, instance.params


# ---------------------------------------------------------------- templates (no browser)


def test_templates_span_three_levels_with_varied_parameters() -> None:
    levels = [load_app(APP)[t].difficulty for t in TEMPLATES]
    assert len(TEMPLATES) >= 15
    assert levels.count(ATOMIC) >= 5 and levels.count(COMPOSED) >= 5 and levels.count(LONG) >= 4
    for template in TEMPLATES:
        drawn = {repr(sorted(task(template, seed)[1].items())) for seed in range(12)}
        assert len(drawn) >= 4, f"{template} draws too few distinct tasks"


# ---------------------------------------------------------------- validates on hand-built states


def test_replace_save_needs_the_saved_file() -> None:
    template, params = task("replace_save")
    path, expected = params["path"], template.expected(params)
    assert template.validate({"files": {**params["files"], path: expected}}, params)[:2] == (1.0, True)
    unsaved = {"files": params["files"], "buffers": {path: expected}, "dirty": [path]}
    assert template.validate(unsaved, params)[:2] == (0.0, False)
    assert "unsaved" in template.validate(unsaved, params)[2]
    assert template.validate({}, params)[0] == 0.0


def test_comment_line_accepts_any_comment_spacing_only_on_that_line() -> None:
    template, params = task("comment_line")
    lines = params["files"][params["path"]].split("\n")
    k = params["line"] - 1
    for marker in ("# ", "#", "#   "):
        edited = [*lines[:k], marker + lines[k], *lines[k + 1 :]]
        state = {"files": {**params["files"], params["path"]: "\n".join(edited)}}
        assert template.validate(state, params)[0] == 1.0
    wrong = [*lines[: k + 1], "# " + lines[k + 1], *lines[k + 2 :]]
    assert template.validate({"files": {params["path"]: "\n".join(wrong)}}, params)[0] == 0.0
    assert content.is_commented("  # let a = 1", "let a = 1") and not content.is_commented("let a = 1", "let a = 1")


def test_rename_and_reorganize_check_the_file_set() -> None:
    template, params = task("rename_file")
    files = dict(params["files"])
    files[params["new"]] = files.pop(params["old"])
    assert template.validate({"files": files}, params)[0] == 1.0
    assert template.validate({"files": {**params["files"], params["new"]: ""}}, params)[0] == 0.0
    template, params = task("reorganize")
    files = {k: v for k, v in params["files"].items() if k not in (params["rename"], params["remove"])}
    files.update({params["to"]: params["files"][params["rename"]], params["create"]: ""})
    assert template.validate({"files": files}, params)[0] == 1.0
    assert template.validate({"files": {**files, params["remove"]: "x"}}, params)[0] == 0.0


def test_runs_must_be_of_the_saved_source() -> None:
    template, params = task("fix_value_run")
    fixed, path = params["fixed"], params["path"]
    good_run = {"file": path, "source": fixed, "output": [params["expected"]], "error": None}
    state = {"files": {path: fixed}, "runs": [good_run]}
    assert template.validate(state, params)[0] == 1.0
    stale = {**good_run, "source": params["files"][path]}
    assert template.validate({"files": {path: fixed}, "runs": [stale]}, params)[0] == 0.0
    failed = {**good_run, "error": "line 2: unknown name 'x'"}
    assert template.validate({"files": {path: fixed}, "runs": [failed]}, params)[0] == 0.0
    assert template.validate({"files": {path: fixed}, "runs": []}, params)[0] == 0.0


def test_settings_and_append_run_validates() -> None:
    template, params = task("configure_editor")
    wanted = {k: params[k] for k in ("tabSize", "wordWrap", "theme", "fontSize")}
    assert template.validate({"settings": wanted}, params)[0] == 1.0
    assert template.validate({"settings": {**wanted, "fontSize": 99}}, params)[0] == 0.0
    template, params = task("append_print_run")
    run = {"file": params["path"], "source": "", "output": ["x", params["expected"]], "error": None}
    assert template.validate({"runs": [run]}, params)[0] == 1.0
    assert template.validate({"runs": [{**run, "output": [params["expected"], "x"]}]}, params)[0] == 0.0


def test_program_generator_knows_its_output() -> None:
    program = content.draw_program(random.Random(5))
    assert program.output == f"{program.label}: {program.value}"
    assert content.replace_word("let rate = rate + 1 # rates", "rate", "r") == "let r = r + 1 # rates"


# ---------------------------------------------------------------- the page's own parts


def test_mini_interpreter_runs_programs_and_reports_errors(page: Any) -> None:
    run = "(src) => import('./interpreter.js').then((m) => m.run(src))"
    program = content.draw_program(random.Random(3))
    assert page.evaluate(run, program.source()) == {"output": [program.output], "error": None}
    loops = 'let i = 0\nwhile i < 3\n  i = i + 1\nend\nrepeat 2\n  print "r" + i\nend\nif i > 2\n  print "big"\nelse\n'
    assert page.evaluate(run, loops + '  print "small"\nend') == {"output": ["r3", "r3", "big"], "error": None}
    assert page.evaluate(run, "print 1\nprint nope")["error"] == "line 2: unknown name 'nope'"
    assert page.evaluate(run, "while true\nend")["error"].endswith("too many steps (endless loop?)")
    assert page.evaluate(run, 'print "a # b" # comment') == {"output": ["a # b"], "error": None}


def test_text_operations(page: Any) -> None:
    ops = "([name, ...args]) => import('./editing.js').then((m) => m[name](...args))"
    text = "let a = 1\n  print a\nlet b = 2\n"
    assert page.evaluate(ops, ["toggleComment", text, 12, 12, "#"])["text"] == "let a = 1\n  # print a\nlet b = 2\n"
    assert page.evaluate(ops, ["sortLines", "pear\napple\nfig\n", 0, 0])["text"] == "apple\nfig\npear\n"
    assert page.evaluate(ops, ["deleteLines", text, 12, 12])["text"] == "let a = 1\nlet b = 2\n"
    replaced = page.evaluate(ops, ["replaceAll", "cat concat Cat", "cat", "dog", {"wholeWord": True}])
    assert replaced == {"text": "dog concat dog", "count": 2}


@pytest.mark.parametrize("ui_seed", [0, 4, 17])
def test_menus_follow_the_seeded_spec(page: Any, ui_seed: int) -> None:
    page.goto(shared_server().app_url(APP, ui_seed))
    page.evaluate("() => window.raygent.ready")
    spec = ui_spec(APP, ui_seed)
    items = page.evaluate(
        "() => [...document.querySelectorAll('#menubar .menu')].flatMap((m) => "
        "[...m.querySelectorAll('[data-command]')]"
        ".map((b) => [m.querySelector('button').textContent, b.dataset.command, b.getAttribute('aria-label')]))"
    )
    assert sorted(map(tuple, items)) == sorted((c.menu, c.id, c.label) for c in spec.commands.values())
    assert {c.id for c in COMMANDS} == {item[1] for item in items}


# ---------------------------------------------------------------- episodes in the browser


@pytest.mark.parametrize(("template", "seed", "ui_seed"), CASES)
def test_scripted_solver_succeeds(env: BrowserEnv, template: str, seed: int, ui_seed: int) -> None:
    success, steps = run_solver(env, f"{APP}/{template}/{seed}", ui_seed=ui_seed)
    assert success, f"{template}/{seed}@{ui_seed}: {env.task.goal if env.task else ''} ({steps} steps)"
    assert steps <= load_app(APP)[template].max_steps


WORDS = ("main.mini", "hello", "42", "print 1", "x")
KEYS = ("Enter", "Escape", "Tab", "Control+s", "F5", "Alt+z", "Control+z")


def random_action(rng: random.Random, text: str) -> str:
    """A uniformly silly agent: clicks, right-clicks, typing and keys on what it sees, or a random point."""
    elements = [e for e in parse(text) if e.id is not None]
    roll = rng.random()
    if not elements or roll < 0.1:
        return f"click({rng.randint(0, 1000)}, {rng.randint(0, 1000)})"
    if roll < 0.2:
        return f'hotkey("{rng.choice(KEYS)}")'
    element = rng.choice(elements)
    if element.role in ("textbox", "spinbutton") and roll < 0.5:
        return f'type({element.id}, "{rng.choice(WORDS)}")'
    if roll < 0.25:
        return f"right_single({element.id})"
    return f"click({element.id})"


def test_random_agent_rarely_succeeds() -> None:
    environment = BrowserEnv(app=APP, action_settings=SETTINGS, max_steps=10)
    rng = random.Random(0)
    successes = []
    try:
        for episode, template in enumerate(TEMPLATES[::2]):
            obs, _ = environment.reset(options={"task": f"{APP}/{template}/{episode}", "ui_seed": episode})
            while True:
                obs, _, terminated, truncated, info = environment.step(random_action(rng, obs["text"]))
                if terminated or truncated:
                    successes.append(bool(info["success"]))
                    break
    finally:
        environment.close()
    rate = sum(successes) / len(successes)
    print(f"random agent success on {APP}: {sum(successes)}/{len(successes)} = {rate:.2f}")
    assert len(successes) == len(TEMPLATES[::2]) and rate <= 0.25
