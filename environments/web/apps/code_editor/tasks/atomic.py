"""The code editor's atomic task templates: one command each (open, create, rename, delete, settings, run)."""

from __future__ import annotations

import random
from typing import Any

from raygent.environments.web.apps.code_editor import content
from raygent.environments.web.apps.code_editor.expert import LOOK, choose, click, command, fill, open_file
from raygent.environments.web.task import ATOMIC, Solver, WebTask, register
from raygent.environments.web.ui import UISpec

Params = dict[str, Any]


def verdict(ok: bool, success: str, failure: str) -> tuple[float, bool, str]:
    return (1.0, True, success) if ok else (0.0, False, failure)


class CodeEditorTask(WebTask):
    """Shared setup: the workspace in `params["files"]`, with `params["open"]` tabs, the first one active."""

    app = "code_editor"

    def initial_state(self, params: Params) -> Params:
        tabs = params.get("open", [])
        return {"files": params["files"], "tabs": tabs, "active": tabs[0] if tabs else None,
                "settings": params.get("settings", {})}


@register
class OpenFile(CodeEditorTask):
    template = "open_file"
    difficulty = ATOMIC
    max_steps = 8

    def sample(self, rng: random.Random) -> Params:
        files = content.workspace(rng, programs=2, texts=2)
        target, other = rng.sample(sorted(files), 2)
        return {"files": files, "open": [other], "target": target}

    def goal(self, params: Params) -> str:
        return f"Open the file {params['target']} in the editor."

    def validate(self, state: Params, params: Params) -> tuple[float, bool, str]:
        return verdict(state.get("active") == params["target"], "file open", f"active editor: {state.get('active')}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        yield from open_file(obs, params["target"])
        yield "finished()"


@register
class CreateFile(CodeEditorTask):
    template = "create_file"
    difficulty = ATOMIC
    max_steps = 10

    def sample(self, rng: random.Random) -> Params:
        files = content.workspace(rng)
        return {"files": files, "open": [rng.choice(sorted(files))], "name": content.new_name(rng, files)}

    def goal(self, params: Params) -> str:
        return f"Create a new, empty file named {params['name']}."

    def validate(self, state: Params, params: Params) -> tuple[float, bool, str]:
        files = state.get("files", {})
        return verdict(params["name"] in files, "file created", f"no file {params['name']} among {sorted(files)}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from command(obs, ui, "new_file")
        obs = yield from fill(obs, "File name", params["name"], "textbox")
        yield from click(obs, "Create", "button")
        yield "finished()"


@register
class RenameFile(CodeEditorTask):
    template = "rename_file"
    difficulty = ATOMIC
    max_steps = 10

    def sample(self, rng: random.Random) -> Params:
        files = content.workspace(rng)
        old = rng.choice(sorted(files))
        stem, _, ext = old.rpartition(".")
        new = f"{rng.choice(['old', 'backup', 'v2', 'final', 'copy'])}_{stem}.{ext}"
        return {"files": files, "open": [], "old": old, "new": new}

    def goal(self, params: Params) -> str:
        return f"Rename the file {params['old']} to {params['new']}."

    def validate(self, state: Params, params: Params) -> tuple[float, bool, str]:
        files = state.get("files", {})
        ok = params["new"] in files and params["old"] not in files
        ok = ok and files[params["new"]] == params["files"][params["old"]]
        return verdict(ok, "file renamed", f"files: {sorted(files)}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from open_file(obs, params["old"])
        obs = yield from command(obs, ui, "rename_file")
        obs = yield from fill(obs, "New name", params["new"], "textbox")
        yield from click(obs, "Rename", "button")
        yield "finished()"


@register
class DeleteFile(CodeEditorTask):
    template = "delete_file"
    difficulty = ATOMIC
    max_steps = 10

    def sample(self, rng: random.Random) -> Params:
        files = content.workspace(rng, programs=2, texts=2)
        return {"files": files, "open": [], "target": rng.choice(sorted(files))}

    def goal(self, params: Params) -> str:
        return f"Delete the file {params['target']} from the workspace, keeping the other files."

    def validate(self, state: Params, params: Params) -> tuple[float, bool, str]:
        files = set(state.get("files", {}))
        expected = set(params["files"]) - {params["target"]}
        return verdict(files == expected, "file deleted", f"files: {sorted(files)}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from open_file(obs, params["target"])
        obs = yield from command(obs, ui, "delete_file")
        yield from click(obs, "Delete", "button")
        yield "finished()"


@register
class SetTabSize(CodeEditorTask):
    template = "set_tab_size"
    difficulty = ATOMIC
    max_steps = 10

    def sample(self, rng: random.Random) -> Params:
        files = content.workspace(rng)
        return {"files": files, "open": [sorted(files)[0]], "size": rng.choice([2, 8])}

    def goal(self, params: Params) -> str:
        return f"Change the editor's tab size to {params['size']}."

    def validate(self, state: Params, params: Params) -> tuple[float, bool, str]:
        size = state.get("settings", {}).get("tabSize")
        return verdict(size == params["size"], "tab size set", f"tab size is {size}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from command(obs, ui, "settings")
        obs = yield from choose(obs, "Tab size", str(params["size"]))
        yield from click(obs, "Apply", "button")
        yield "finished()"


@register
class ToggleWordWrap(CodeEditorTask):
    template = "word_wrap"
    difficulty = ATOMIC
    max_steps = 8

    def sample(self, rng: random.Random) -> Params:
        files = content.workspace(rng)
        on = rng.random() < 0.5
        return {"files": files, "open": [sorted(files)[-1]], "on": on, "settings": {"wordWrap": not on}}

    def goal(self, params: Params) -> str:
        return f"Turn word wrap {'on' if params['on'] else 'off'} in the editor."

    def validate(self, state: Params, params: Params) -> tuple[float, bool, str]:
        wrap = state.get("settings", {}).get("wordWrap")
        return verdict(wrap == params["on"], "word wrap set", f"word wrap is {wrap}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        yield from command(obs, ui, "toggle_word_wrap")
        yield "finished()"


@register
class RunFile(CodeEditorTask):
    template = "run_file"
    difficulty = ATOMIC
    max_steps = 10

    def sample(self, rng: random.Random) -> Params:
        files = content.workspace(rng, programs=3)
        programs = sorted(p for p in files if p.endswith(".mini"))
        target = rng.choice(programs)
        return {"files": files, "open": [p for p in programs if p != target][:1], "target": target}

    def goal(self, params: Params) -> str:
        return f"Run the program {params['target']} so that its output appears in the console."

    def validate(self, state: Params, params: Params) -> tuple[float, bool, str]:
        ran = content.successful_runs(state, params["target"])
        return verdict(bool(ran), "program ran", f"no successful run of {params['target']}")

    def solve(self, params: Params, ui: UISpec) -> Solver:
        obs = yield LOOK
        obs = yield from open_file(obs, params["target"])
        yield from command(obs, ui, "run_file")
        yield "finished()"
