"""The code editor's composed task templates: a few commands combined (edit, then save or run)."""

from __future__ import annotations

import random
from typing import ClassVar

from raygent.environments.web.apps.code_editor import content
from raygent.environments.web.apps.code_editor.expert import (
    LOOK,
    choose,
    click,
    command,
    fill,
    goto_line,
    open_file,
    replace_all,
    set_checkbox,
)
from raygent.environments.web.apps.code_editor.tasks.atomic import CodeEditorTask, Params, verdict
from raygent.environments.web.task import COMPOSED, Solver, register
from raygent.environments.web.ui import UISpec


def saved(state: Params, path: str) -> str | None:
    return state.get("files", {}).get(path)


def saved_lines_check(state: Params, path: str, expected: str) -> tuple[float, bool, str]:
    text = saved(state, path)
    if text is not None and text.rstrip("\n") == expected.rstrip("\n"):
        return 1.0, True, "saved as expected"
    dirty = " (unsaved edits pending)" if path in state.get("dirty", []) else ""
    return 0.0, False, f"{path} on disk is {text!r}{dirty}"


@register
class ReplaceAndSave(CodeEditorTask):
    template = "replace_save"
    difficulty = COMPOSED
    max_steps = 16

    def sample(self, rng: random.Random) -> Params:
        files = content.workspace(rng)
        path = rng.choice(sorted(p for p in files if p.endswith(".mini")))
        program = content.draw_program(rng)
        files[path] = program.source()
        old = rng.choice([program.a, program.b])
        return {"files": files, "open": [], "path": path, "old": old, "new": rng.choice(content.NEW_NAMES)}

    def goal(self, params: Params) -> str:
        return f"In {params['path']}, replace every `{params['old']}` with `{params['new']}` and save the file."

    def expected(self, params: Params) -> str:
        return content.replace_word(params["files"][params["path"]], params["old"], params["new"])

    def validate(self, state: Params, params: Params) -> tuple[float, bool, str]:
        return saved_lines_check(state, params["path"], self.expected(params))

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from open_file(obs, params["path"])
        obs = yield from replace_all(obs, ui, params["old"], params["new"])
        yield from command(obs, ui, "save")
        yield "finished()"


class LineEditTask(CodeEditorTask):
    """Edit one numbered line of a program and save it."""

    difficulty = COMPOSED
    max_steps = 16
    line_command = ""

    def sample(self, rng: random.Random) -> Params:
        files = content.workspace(rng)
        path = rng.choice(sorted(p for p in files if p.endswith(".mini")))
        line = rng.randint(2, 4)
        text = files[path].split("\n")[line - 1]
        return {"files": files, "open": [path], "path": path, "line": line, "text": text}

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from open_file(obs, params["path"])
        obs = yield from goto_line(obs, ui, params["line"])
        obs = yield from command(obs, ui, self.line_command)
        yield from command(obs, ui, "save")
        yield "finished()"


@register
class CommentLine(LineEditTask):
    template = "comment_line"
    line_command = "toggle_comment"

    def goal(self, params: Params) -> str:
        return f"Comment out line {params['line']} of {params['path']} (`{params['text']}`) and save the file."

    def validate(self, state: Params, params: Params) -> tuple[float, bool, str]:
        text = saved(state, params["path"])
        before = params["files"][params["path"]].split("\n")
        after = (text or "").split("\n")
        k = params["line"] - 1
        ok = len(after) == len(before) and content.is_commented(after[k], before[k])
        ok = ok and all(a == b for i, (a, b) in enumerate(zip(after, before, strict=True)) if i != k)
        return verdict(ok, "line commented out and saved", f"{params['path']} on disk is {text!r}")


@register
class DeleteLine(LineEditTask):
    template = "delete_line"
    line_command = "delete_line"

    def goal(self, params: Params) -> str:
        return f"Delete line {params['line']} (`{params['text']}`) from {params['path']} and save the file."

    def validate(self, state: Params, params: Params) -> tuple[float, bool, str]:
        lines = params["files"][params["path"]].split("\n")
        del lines[params["line"] - 1]
        return saved_lines_check(state, params["path"], "\n".join(lines))


@register
class WriteNewFile(CodeEditorTask):
    template = "write_new_file"
    difficulty = COMPOSED
    max_steps = 14

    def sample(self, rng: random.Random) -> Params:
        files = content.workspace(rng)
        name = rng.choice([n for n in content.NEW_FILES if n.endswith(".mini") and n not in files])
        program = content.draw_program(rng)
        return {"files": files, "open": [sorted(files)[0]], "name": name, "line": f"print {program.va} * {program.vb}"}

    def goal(self, params: Params) -> str:
        return f"Create a file named {params['name']} whose only line is `{params['line']}`, and save it."

    def validate(self, state: Params, params: Params) -> tuple[float, bool, str]:
        text = saved(state, params["name"])
        ok = text is not None and text.strip() == params["line"]
        return verdict(ok, "file written", f"{params['name']} on disk is {text!r}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from command(obs, ui, "new_file")
        obs = yield from fill(obs, "File name", params["name"], "textbox")
        obs = yield from click(obs, "Create", "button")
        obs = yield from fill(obs, "Editor", params["line"] + "\n", "textbox")
        yield from command(obs, ui, "save")
        yield "finished()"


@register
class AppendPrintRun(CodeEditorTask):
    template = "append_print_run"
    difficulty = COMPOSED
    max_steps = 14

    def sample(self, rng: random.Random) -> Params:
        files = content.workspace(rng)
        path = rng.choice(sorted(p for p in files if p.endswith(".mini")))
        program = content.draw_program(rng)
        files[path] = program.source()
        factor = rng.randint(2, 9)
        return {"files": files, "open": [], "path": path, "expr": f"{program.c} * {factor}",
                "expected": str(program.value * factor)}

    def goal(self, params: Params) -> str:
        return (f"Add a line at the end of {params['path']} that prints the value of `{params['expr']}`, "
                "then run the program.")

    def validate(self, state: Params, params: Params) -> tuple[float, bool, str]:
        runs = content.successful_runs(state, params["path"])
        ok = bool(runs) and bool(runs[-1]["output"]) and runs[-1]["output"][-1] == params["expected"]
        last = runs[-1]["output"] if runs else None
        return verdict(ok, "printed and ran", f"last successful run printed {last}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from open_file(obs, params["path"])
        obs = yield from click(obs, "Editor", "textbox")
        obs = yield 'hotkey("Control+End")'
        obs = yield f'type("print {params["expr"]}")'
        yield from command(obs, ui, "run_file")
        yield "finished()"


@register
class SortAndSave(CodeEditorTask):
    template = "sort_save"
    difficulty = COMPOSED
    max_steps = 12

    def sample(self, rng: random.Random) -> Params:
        files = content.workspace(rng)
        path = rng.choice(["names.txt", "fruit.txt", "data/list.txt", "words.txt"])
        files[path] = content.word_list(rng, rng.randint(5, 8))
        return {"files": files, "open": [], "path": path}

    def goal(self, params: Params) -> str:
        return f"Sort the lines of {params['path']} alphabetically and save the file."

    def validate(self, state: Params, params: Params) -> tuple[float, bool, str]:
        words = params["files"][params["path"]].split()
        return saved_lines_check(state, params["path"], "\n".join(sorted(words)))

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from open_file(obs, params["path"])
        obs = yield from command(obs, ui, "sort_lines")
        yield from command(obs, ui, "save")
        yield "finished()"


@register
class ConfigureEditor(CodeEditorTask):
    template = "configure_editor"
    difficulty = COMPOSED
    max_steps = 16
    THEMES: ClassVar[dict[str, str]] = {"dark": "Dark", "light": "Light", "contrast": "High contrast"}

    def sample(self, rng: random.Random) -> Params:
        files = content.workspace(rng)
        return {"files": files, "open": [sorted(files)[0]], "tabSize": rng.choice([2, 8]),
                "wordWrap": rng.random() < 0.5, "theme": rng.choice(["light", "contrast"]),
                "fontSize": rng.choice([12, 16, 18, 20])}

    def goal(self, params: Params) -> str:
        wrap = "on" if params["wordWrap"] else "off"
        return (f"Configure the editor: tab size {params['tabSize']}, word wrap {wrap}, "
                f"the {self.THEMES[params['theme']]} theme and font size {params['fontSize']}.")

    def validate(self, state: Params, params: Params) -> tuple[float, bool, str]:
        settings = state.get("settings", {})
        wanted = {k: params[k] for k in ("tabSize", "wordWrap", "theme", "fontSize")}
        wrong = {k: settings.get(k) for k, v in wanted.items() if settings.get(k) != v}
        return verdict(not wrong, "editor configured", f"settings still differ: {wrong}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from command(obs, ui, "settings")
        obs = yield from choose(obs, "Tab size", str(params["tabSize"]))
        obs = yield from set_checkbox(obs, "Word wrap", params["wordWrap"])
        obs = yield from choose(obs, "Theme", self.THEMES[params["theme"]])
        obs = yield from fill(obs, "Font size", str(params["fontSize"]), "spinbutton")
        yield from click(obs, "Apply", "button")
        yield "finished()"
