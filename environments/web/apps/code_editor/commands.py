"""The code editor's menu commands: ids the page binds to, default labels and menus, and what the randomizer
may change (DocOS: with a seed other than 0, labels and menus move, and only the docs say where)."""

from __future__ import annotations

from raygent.environments.web.ui import Command

COMMANDS: list[Command] = [
    Command(
        "new_file", "New File…", "File", "Create a new, empty file in the workspace and open it.",
        alternatives=("Add File…", "Create File…"),
    ),
    Command(
        "save", "Save", "File", "Write the active editor's text to its file.", "Control+S", ("Write File", "Store"),
    ),
    Command(
        "save_all", "Save All", "File", "Write every modified editor to its file.",
        alternatives=("Write All", "Store Everything"), movable_to=("Workspace",),
    ),
    Command(
        "rename_file", "Rename File…", "File",
        "Give the active file (or the one right-clicked in the explorer) a new name.",
        alternatives=("Change File Name…", "Move File…"), movable_to=("Workspace",),
    ),
    Command(
        "delete_file", "Delete File", "File",
        "Remove the active file (or the one right-clicked in the explorer) from the workspace.",
        alternatives=("Remove File", "Trash File"), movable_to=("Workspace",),
    ),
    Command(
        "close_tab", "Close Editor", "File", "Close the active editor tab; the file stays in the workspace.",
        alternatives=("Close Tab", "Dismiss Editor"), movable_to=("View",),
    ),
    Command(
        "find", "Find", "Edit", "Open the find widget to search the active editor.", "Control+F",
        ("Search", "Locate Text"),
    ),
    Command(
        "replace", "Replace", "Edit", "Open the find widget with its replace row to replace text in the active editor.",
        "Control+H", ("Substitute", "Find and Change"), movable_to=("Selection",),
    ),
    Command(
        "goto_line", "Go to Line…", "Edit", "Move the cursor to the start of a line by its number.", "Control+G",
        ("Jump to Line…", "Navigate to Line…"), movable_to=("Selection", "View"),
    ),
    Command(
        "toggle_comment", "Toggle Line Comment", "Edit", "Comment out the current line(s), or uncomment them.",
        "Control+/", ("Comment Line", "Flip Comment"), movable_to=("Selection",),
    ),
    Command(
        "duplicate_line", "Duplicate Line", "Selection", "Copy the current line(s) below themselves.",
        alternatives=("Copy Line Down", "Clone Line"), movable_to=("Edit",),
    ),
    Command(
        "delete_line", "Delete Line", "Selection", "Remove the current line(s).", "Control+Shift+K",
        ("Remove Line", "Drop Line"), movable_to=("Edit",),
    ),
    Command(
        "sort_lines", "Sort Lines Ascending", "Selection",
        "Sort the selected lines alphabetically, or every line of the file when nothing is selected.",
        alternatives=("Order Lines A–Z", "Alphabetize Lines"), movable_to=("Edit",),
    ),
    Command(
        "upper_case", "Transform to Uppercase", "Selection", "Turn the selected text into capital letters.",
        alternatives=("Make Uppercase", "Capitalize Selection"), movable_to=("Edit",),
    ),
    Command(
        "trim_whitespace", "Trim Trailing Whitespace", "Selection", "Remove spaces at the ends of all lines.",
        alternatives=("Strip Line Ends", "Clean Line Endings"), movable_to=("Edit",),
    ),
    Command(
        "command_palette", "Command Palette…", "View", "Search every command by name and run it.",
        "Control+Shift+P", ("Show All Commands…", "Quick Commands…"),
    ),
    Command(
        "toggle_sidebar", "Toggle Explorer", "View", "Show or hide the file explorer.",
        alternatives=("Explorer Panel", "Show/Hide Files"), movable_to=("Workspace",),
    ),
    Command(
        "toggle_console", "Toggle Console", "View", "Show or hide the console panel.",
        alternatives=("Console Panel", "Show/Hide Output"), movable_to=("Run",),
    ),
    Command(
        "toggle_word_wrap", "Word Wrap", "View", "Switch word wrap in the editor on or off.", "Alt+Z",
        ("Wrap Long Lines", "Soft Wrap"), movable_to=("Preferences",),
    ),
    Command(
        "settings", "Settings…", "File",
        "Open the settings: tab size, spaces, word wrap, theme, font size and line numbers.",
        "Control+,", ("Preferences…", "Options…"), movable_to=("Preferences", "View"),
    ),
    Command(
        "run_file", "Run File", "Run", "Run the active .mini file; its output appears in the console.", "F5",
        ("Execute File", "Start Program"),
    ),
    Command(
        "clear_console", "Clear Console", "Run", "Erase the console's output.",
        alternatives=("Empty Output", "Reset Console"), movable_to=("View",),
    ),
]
