"""The slide editor's menu commands (Impress-like): what `ui.json` randomizes and the docs describe."""

from __future__ import annotations

from raygent.environments.web.ui import Command

COMMANDS: list[Command] = [
    # File
    Command(
        "save_as",
        "Save As…",
        "File",
        "Save the presentation under a file name and format.",
        "Control+Shift+S",
        ("Save a Copy…", "Store As…", "Write Presentation…"),
    ),
    # Edit
    Command("undo", "Undo", "Edit", "Undo the last change.", "Control+Z", ("Step Back", "Revert Last Step")),
    Command("redo", "Redo", "Edit", "Redo the change that was last undone.", "Control+Y", ("Step Forward", "Reapply")),
    Command(
        "delete_box",
        "Delete Text Box",
        "Edit",
        "Remove the selected text box from the slide.",
        "Delete",
        ("Remove Text Box", "Discard Text Frame"),
        ("Format",),
    ),
    # Slide
    Command(
        "new_slide",
        "New Slide",
        "Slide",
        "Insert a new slide after the current one.",
        "Control+M",
        ("Add Slide", "Insert Slide", "Append Slide"),
        ("Insert",),
    ),
    Command(
        "duplicate_slide",
        "Duplicate Slide",
        "Slide",
        "Copy the current slide; the copy follows it.",
        None,
        ("Clone Slide", "Copy Slide"),
        ("Insert", "Edit"),
    ),
    Command(
        "delete_slide",
        "Delete Slide",
        "Slide",
        "Remove the current slide.",
        None,
        ("Remove Slide", "Discard Slide"),
        ("Edit",),
    ),
    Command(
        "move_slide_up",
        "Move Slide Up",
        "Slide",
        "Move the current slide one place earlier.",
        None,
        ("Slide Earlier", "Shift Slide Up"),
        ("Edit",),
    ),
    Command(
        "move_slide_down",
        "Move Slide Down",
        "Slide",
        "Move the current slide one place later.",
        None,
        ("Slide Later", "Shift Slide Down"),
        ("Edit",),
    ),
    Command(
        "slide_layout",
        "Slide Layout…",
        "Slide",
        "Choose the current slide's layout: Title Slide, Title and Content, Two Content or Blank.",
        None,
        ("Layout…", "Page Layout…", "Arrange Placeholders…"),
        ("Format",),
    ),
    # Insert
    Command(
        "insert_text_box",
        "Text Box",
        "Insert",
        "Add a new text box to the current slide, ready for typing.",
        None,
        ("Insert Text Box", "Text Frame", "New Text Box"),
    ),
    # Format
    Command(
        "format_text",
        "Text Format…",
        "Format",
        "Set the selected text box's font size, color, bold, italic and alignment.",
        None,
        ("Character…", "Font…", "Text Attributes…"),
    ),
    Command("bold", "Bold", "Format", "Toggle bold for the selected text box.", "Control+B", ("Strong", "Heavy")),
    Command(
        "italic", "Italic", "Format", "Toggle italic for the selected text box.", "Control+I", ("Slanted", "Oblique")
    ),
    Command(
        "position_size",
        "Position and Size…",
        "Format",
        "Set the selected text box's position and size in percent of the slide.",
        "F4",
        ("Geometry…", "Placement…", "Box Position…"),
    ),
    Command(
        "theme",
        "Slide Theme…",
        "Format",
        "Apply a color theme to every slide.",
        None,
        ("Design…", "Master Theme…", "Color Scheme…"),
        ("Slide",),
    ),
    # Slide Show
    Command(
        "start_show",
        "Start from First Slide",
        "Slide Show",
        "Present the slides full screen from the first one.",
        "F5",
        ("Play from Start", "Present from Beginning"),
    ),
    Command(
        "start_current",
        "Start from Current Slide",
        "Slide Show",
        "Present the slides from the current one.",
        "Shift+F5",
        ("Play from Here", "Present from This Slide"),
    ),
]
"""In menu order; `randomize` deals labels and menus per seed."""
