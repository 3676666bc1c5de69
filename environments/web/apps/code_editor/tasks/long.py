"""The code editor's long task templates: edits across files or steps, then save and run."""

from __future__ import annotations

import random

from raygent.environments.web.apps.code_editor import content
from raygent.environments.web.apps.code_editor.expert import (
    LOOK,
    click,
    command,
    fill,
    goto_line,
    open_file,
    replace_all,
)
from raygent.environments.web.apps.code_editor.tasks.atomic import CodeEditorTask, Params, verdict
from raygent.environments.web.apps.code_editor.tasks.composed import saved
from raygent.environments.web.task import LONG, Solver, register
from raygent.environments.web.ui import UISpec


def saved_and_ran(state: Params, path: str, expected_source: str, expected_line: str | None) -> tuple[float, bool, str]:
    """Reward 1 when `path` is saved with `expected_source` and a run of exactly that source succeeded (and
    printed `expected_line`, when given)."""
    text = saved(state, path)
    if text is None or text.rstrip("\n") != expected_source.rstrip("\n"):
        return 0.0, False, f"{path} on disk is {text!r}"
    for run in reversed(content.successful_runs(state, path)):
        if run["source"] == text and (expected_line is None or expected_line in run["output"]):
            return 1.0, True, "saved and ran"
    return 0.0, False, f"{path} is saved but has not run successfully in its saved form"


@register
class FixValueAndRun(CodeEditorTask):
    template = "fix_value_run"
    difficulty = LONG
    max_steps = 24

    def sample(self, rng: random.Random) -> Params:
        files = content.workspace(rng)
        path = rng.choice(sorted(p for p in files if p.endswith(".mini")))
        program = content.draw_program(rng)
        files[path] = program.source()
        new_va = program.va + rng.randint(1, 9)
        fixed = content.Program(program.a, program.b, program.c, new_va, program.vb, program.op, program.label)
        return {"files": files, "open": [sorted(files)[0]], "path": path, "var": program.a, "old": program.va,
                "new": new_va, "expected": fixed.output, "fixed": fixed.source()}

    def goal(self, params: Params) -> str:
        return (f"{params['path']} should print `{params['expected']}`. Change the value `{params['var']}` is set to "
                "so that it does, save the file, and run it.")

    def validate(self, state: Params, params: Params) -> tuple[float, bool, str]:
        return saved_and_ran(state, params["path"], params["fixed"], params["expected"])

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from open_file(obs, params["path"])
        before, after = f"{params['var']} = {params['old']}", f"{params['var']} = {params['new']}"
        obs = yield from replace_all(obs, ui, before, after)
        obs = yield from command(obs, ui, "save")
        yield from command(obs, ui, "run_file")
        yield "finished()"


@register
class RenameVariable(CodeEditorTask):
    template = "rename_variable"
    difficulty = LONG
    max_steps = 36

    def sample(self, rng: random.Random) -> Params:
        files = {path: content.text_file(rng) for path in rng.sample(content.TEXT_FILES, 1)}
        main = content.draw_program(rng)
        old = main.a
        other = content.draw_program(rng, exclude=(old,))
        other = content.Program(old, other.b, other.c, other.va, other.vb, other.op, other.label)
        other_path = rng.choice(["src/extra.mini", "lib/more.mini", "tools/side.mini"])
        files.update({"main.mini": main.source(), other_path: other.source()})
        return {"files": files, "open": [sorted(files)[-1]], "old": old, "new": rng.choice(content.NEW_NAMES),
                "programs": ["main.mini", other_path]}

    def goal(self, params: Params) -> str:
        return (f"Rename the variable `{params['old']}` to `{params['new']}` in every .mini file of the workspace, "
                "save all the files, then run main.mini.")

    def validate(self, state: Params, params: Params) -> tuple[float, bool, str]:
        for path in params["programs"]:
            expected = content.replace_word(params["files"][path], params["old"], params["new"])
            text = saved(state, path)
            if text is None or text.rstrip("\n") != expected.rstrip("\n"):
                return 0.0, False, f"{path} on disk is {text!r}"
        main = saved(state, "main.mini")
        return saved_and_ran(state, "main.mini", main or "", None)

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        for path in params["programs"]:
            obs = yield from open_file(obs, path)
            obs = yield from replace_all(obs, ui, params["old"], params["new"])
        obs = yield from command(obs, ui, "save_all")
        obs = yield from open_file(obs, "main.mini")
        yield from command(obs, ui, "run_file")
        yield "finished()"


@register
class Reorganize(CodeEditorTask):
    template = "reorganize"
    difficulty = LONG
    max_steps = 30

    def sample(self, rng: random.Random) -> Params:
        files = content.workspace(rng, programs=2, texts=2)
        rename, remove = rng.sample(sorted(files), 2)
        stem, _, ext = rename.rpartition(".")
        return {"files": files, "open": [], "rename": rename, "to": f"archive/{stem}.{ext}", "remove": remove,
                "create": content.new_name(rng, files)}

    def goal(self, params: Params) -> str:
        return (f"Reorganize the workspace: rename {params['rename']} to {params['to']}, delete {params['remove']}, "
                f"and create an empty file {params['create']}.")

    def validate(self, state: Params, params: Params) -> tuple[float, bool, str]:
        files = state.get("files", {})
        expected = (set(params["files"]) - {params["rename"], params["remove"]}) | {params["to"], params["create"]}
        ok = set(files) == expected and files.get(params["to"]) == params["files"][params["rename"]]
        return verdict(ok, "workspace reorganized", f"files: {sorted(files)}; expected {sorted(expected)}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from open_file(obs, params["rename"])
        obs = yield from command(obs, ui, "rename_file")
        obs = yield from fill(obs, "New name", params["to"], "textbox")
        obs = yield from click(obs, "Rename", "button")
        obs = yield from open_file(obs, params["remove"])
        obs = yield from command(obs, ui, "delete_file")
        obs = yield from click(obs, "Delete", "button")
        obs = yield from command(obs, ui, "new_file")
        obs = yield from fill(obs, "File name", params["create"], "textbox")
        yield from click(obs, "Create", "button")
        yield "finished()"


@register
class CleanUpAndRun(CodeEditorTask):
    template = "clean_up_run"
    difficulty = LONG
    max_steps = 30

    def sample(self, rng: random.Random) -> Params:
        files = content.workspace(rng)
        path = rng.choice(sorted(p for p in files if p.endswith(".mini")))
        program = content.draw_program(rng)
        lines = program.lines()
        debug_line = rng.randint(3, len(lines))
        debug = f'print "debug {rng.choice(["here", "checkpoint", "trace", "marker"])}"'
        lines.insert(debug_line - 1, debug)
        files[path] = "\n".join(lines) + "\n"
        old, new = program.b, rng.choice(content.NEW_NAMES)
        del lines[debug_line - 1]
        clean = content.replace_word("\n".join(lines) + "\n", old, new)
        return {"files": files, "open": [], "path": path, "line": debug_line, "debug": debug, "old": old, "new": new,
                "clean": clean, "expected": program.output}

    def goal(self, params: Params) -> str:
        return (f"Clean up {params['path']}: delete the debug line `{params['debug']}`, rename `{params['old']}` to "
                f"`{params['new']}` everywhere in it, save it, and run it.")

    def validate(self, state: Params, params: Params) -> tuple[float, bool, str]:
        return saved_and_ran(state, params["path"], params["clean"], params["expected"])

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from open_file(obs, params["path"])
        obs = yield from goto_line(obs, ui, params["line"])
        obs = yield from command(obs, ui, "delete_line")
        obs = yield from replace_all(obs, ui, params["old"], params["new"])
        obs = yield from command(obs, ui, "save")
        yield from command(obs, ui, "run_file")
        yield "finished()"
