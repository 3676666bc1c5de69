"""The documentation of Codex Studio, the code editor (`apps/code_editor`)."""

from __future__ import annotations

from raygent.environments.web.docs.model import CommandHelp, Guide, Procedure, Section

_OPEN = "Open the file: click its name in the **Explorer** (or its tab, if it is already open)."

GUIDE = Guide(
    app="code_editor",
    product="Codex Studio",
    kind="code editor",
    summary="Edit the files of a workspace, search and replace in them, and run programs written in Mini.",
    overview=(
        Section(
            "The window",
            (
                "The menu bar is at the top. The **Explorer** on the left lists the workspace's files as buttons; "
                "click one to open it in a tab. The open files are tabs above the **Editor**, the text area where "
                "you type.",
                "The **Console** panel below the editor shows what programs print. The status bar shows the cursor "
                "position, the indentation and whether word wrap is on. A tab marked ● has unsaved changes.",
                "Right-click a file in the Explorer for rename and delete, right-click a tab for save and close, "
                "right-click the editor for find, replace, go to line, comments and run.",
            ),
        ),
        Section(
            "Saving",
            (
                "Typing changes the open editor only; a file in the workspace changes when you save it.",
                "To save the active file, {do:save}.",
                "To save every modified file, {do:save_all}.",
            ),
        ),
        Section(
            "The Mini language",
            (
                "Files ending in .mini are Mini programs. One statement per line: `let name = 5` defines a "
                "variable, `name = name + 1` changes it, `print name` prints (several values: `print a, b`).",
                "Blocks: `if x > 3` … `else` … `end`, `while x < 9` … `end`, `repeat 4` … `end`. A line starting "
                "with `#` is a comment. Strings use double quotes and join with +: `print \"Total: \" + total`.",
            ),
        ),
    ),
    commands={
        "new_file": CommandHelp(
            after=(
                "In the dialog, type the name into **File name** (a folder path such as `src/app.mini` is fine).",
                "Press **Create**. The new, empty file opens in a tab.",
            ),
        ),
        "save": CommandHelp(before=(_OPEN,)),
        "rename_file": CommandHelp(
            before=(_OPEN,),
            after=(
                "In the dialog, replace the text in **New name** with the new name. A name with a folder, such "
                "as `archive/notes.txt`, moves the file.",
                "Press **Rename**.",
            ),
            remarks=("Right-clicking a file in the Explorer offers the same command for that file.",),
        ),
        "delete_file": CommandHelp(
            before=(_OPEN,),
            after=("Confirm with **Delete** in the dialog. This cannot be undone.",),
            remarks=("Right-clicking a file in the Explorer offers the same command for that file.",),
        ),
        "close_tab": CommandHelp(before=(_OPEN,)),
        "find": CommandHelp(
            before=(_OPEN,),
            after=(
                "Type the text into **Find**. **Next match** and **Previous match** move between matches; "
                "**Match case** and **Whole word** narrow the search.",
            ),
        ),
        "replace": CommandHelp(
            before=(_OPEN,),
            after=(
                "Type the text to look for into **Find** and the new text into **Replace with**.",
                "Press **Replace all** to replace every match in the file, or **Replace** for the current one.",
            ),
            remarks=("Replacing changes the editor only; save the file afterwards.",),
        ),
        "goto_line": CommandHelp(
            before=(_OPEN,),
            after=("Type the number into **Line number** and press **Go** (or Enter).",),
        ),
        "toggle_comment": CommandHelp(
            before=(_OPEN, "Put the cursor on the line (see {path:goto_line}), or select several lines."),
            remarks=("Mini and text files comment with `#`, JavaScript with `//`.",),
        ),
        "duplicate_line": CommandHelp(before=(_OPEN, "Put the cursor on the line or select several lines.")),
        "delete_line": CommandHelp(before=(_OPEN, "Put the cursor on the line or select several lines.")),
        "sort_lines": CommandHelp(
            before=(_OPEN, "Select lines to sort only those; with no selection every line is sorted."),
        ),
        "upper_case": CommandHelp(before=(_OPEN, "Select the text in the **Editor**.")),
        "trim_whitespace": CommandHelp(before=(_OPEN,)),
        "command_palette": CommandHelp(
            after=(
                "Type part of a command's name into **Command**; the list below shows the matches.",
                "Click a command in the list (or press Enter for the first one) to run it.",
            ),
        ),
        "settings": CommandHelp(
            after=(
                "Choose **Tab size** (2, 4 or 8) and **Theme** (Dark, Light or High contrast); tick or clear "
                "**Insert spaces**, **Word wrap** and **Line numbers**; type **Font size** (8 to 32).",
                "Press **Apply**.",
            ),
        ),
        "run_file": CommandHelp(
            before=(_OPEN,),
            after=("The output appears in the **Console**; the last line says the exit code (0 means no error).",),
            remarks=("Only .mini files run. The editor's text runs, saved or not.",),
        ),
    },
    procedures=(
        Procedure(
            "replace-text-in-a-file",
            "Replace text in a file",
            "Replace every occurrence of a word in one file and save the result.",
            (
                _OPEN,
                "{do:replace}.",
                "Type the old text into **Find** and the new text into **Replace with**.",
                "Press **Replace all**.",
                "{do:save}.",
            ),
            ("To rename a variable in several files, repeat the steps per file, then {do:save_all}.",),
        ),
        Procedure(
            "create-a-file",
            "Create a file and write in it",
            "Add a new file to the workspace, type its text and save it.",
            (
                "{do:new_file}.",
                "Type the name into **File name** and press **Create**.",
                "Click into the **Editor** and type the text; Enter starts a new line.",
                "{do:save}.",
            ),
        ),
        Procedure(
            "run-a-program",
            "Run a program and read its output",
            "Run a .mini program and see what it prints in the console.",
            (
                _OPEN,
                "{do:run_file}.",
                "Read the output in the **Console**. If the panel is hidden, {do:toggle_console}.",
            ),
            ("To add a line at the end, click into the **Editor**, press Ctrl+End, then Enter, and type.",),
        ),
        Procedure(
            "edit-one-line",
            "Comment out, duplicate or delete a line",
            "Go to a line by its number and change it, then save.",
            (
                _OPEN,
                "{do:goto_line}, type the number into **Line number** and press **Go**.",
                "To comment it out (or back in), {do:toggle_comment}.",
                "To copy it below itself, {do:duplicate_line}; to remove it, {do:delete_line}.",
                "{do:save}.",
            ),
        ),
        Procedure(
            "rename-move-or-delete-a-file",
            "Rename, move or delete a file",
            "Give a file a new name or folder, or remove it from the workspace.",
            (
                "Click the file in the **Explorer** (or right-click it to get a menu with both commands).",
                "To rename or move it, {do:rename_file}, type the new name into **New name** and press **Rename**.",
                "To delete it, {do:delete_file} and press **Delete**.",
            ),
        ),
        Procedure(
            "change-editor-settings",
            "Change the tab size, theme, font size or word wrap",
            "Set how the editor shows and indents text.",
            (
                "{do:settings}.",
                "Set **Tab size**, **Theme**, **Font size**, and the **Word wrap**, **Insert spaces** and "
                "**Line numbers** boxes.",
                "Press **Apply**.",
            ),
            ("Word wrap alone can also be switched with {do:toggle_word_wrap}.",),
        ),
        Procedure(
            "sort-lines",
            "Sort the lines of a file",
            "Put a file's lines in alphabetical order and save it.",
            (_OPEN, "Click into the **Editor** without selecting anything.", "{do:sort_lines}.", "{do:save}."),
        ),
    ),
)
