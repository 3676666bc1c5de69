"""The word processor's menu commands: ids the page binds to, default labels and menus, and what the randomizer
may change (DocOS: with a seed other than 0, labels and menus move, and only the docs say where)."""

from __future__ import annotations

from raygent.environments.web.ui import Command

COMMANDS: list[Command] = [
    Command(
        "new_document", "New Document", "File", "Start over with an empty, untitled document.",
        alternatives=("Blank Document", "Fresh Document"),
    ),
    Command(
        "save", "Save", "File", "Save the document under its current name (asks for one the first time).",
        "Control+S", ("Store", "Keep Changes"),
    ),
    Command(
        "save_as", "Save As…", "File", "Save the document under a new file name and format.", "Control+Shift+S",
        ("Save a Copy…", "Export As…"), movable_to=("Tools",),
    ),
    Command(
        "page_setup", "Page Setup…", "File", "Choose the paper size, orientation and margins.",
        alternatives=("Page Layout…", "Paper Settings…"), movable_to=("Format", "Tools"),
    ),
    Command("undo", "Undo", "Edit", "Take back the last change.", "Control+Z", ("Revert Edit", "Step Back")),
    Command("redo", "Redo", "Edit", "Redo the change just undone.", "Control+Y", ("Repeat Edit", "Step Forward")),
    Command(
        "select_all", "Select All", "Edit", "Select the whole document.", "Control+A",
        ("Select Everything", "Mark All"),
    ),
    Command(
        "find_replace", "Find & Replace…", "Edit", "Search the document for text and replace it.", "Control+H",
        ("Search and Replace…", "Find and Substitute…"), movable_to=("Tools",),
    ),
    Command("bold", "Bold", "Format", "Make the selected text bold, or not bold.", "Control+B", ("Strong", "Heavy")),
    Command(
        "italic", "Italic", "Format", "Make the selected text italic, or not italic.", "Control+I",
        ("Emphasis", "Slanted"),
    ),
    Command(
        "underline", "Underline", "Format", "Underline the selected text, or remove its underline.", "Control+U",
        ("Underscore", "Line Below"),
    ),
    Command(
        "strikethrough", "Strikethrough", "Format", "Draw a line through the selected text.",
        alternatives=("Cross Out", "Strike"),
    ),
    Command(
        "font_size", "Font Size…", "Format", "Set the size in points of the selected text.",
        alternatives=("Text Size…", "Character Size…"),
    ),
    Command(
        "clear_formatting", "Clear Direct Formatting", "Format", "Remove bold, italic, underline and sizes.",
        "Control+M", ("Remove Formatting", "Plain Characters"),
    ),
    Command(
        "align_left", "Align Left", "Format", "Align the paragraph to the left margin.", "Control+L",
        ("Left Justify", "Flush Left"), movable_to=("Paragraph",),
    ),
    Command(
        "align_center", "Center", "Format", "Center the paragraph between the margins.", "Control+E",
        ("Align Center", "Centre Text"), movable_to=("Paragraph",),
    ),
    Command(
        "align_right", "Align Right", "Format", "Align the paragraph to the right margin.", "Control+R",
        ("Right Justify", "Flush Right"), movable_to=("Paragraph",),
    ),
    Command(
        "justify", "Justify", "Format", "Stretch the paragraph's lines to both margins.", "Control+J",
        ("Justified", "Full Justification"), movable_to=("Paragraph",),
    ),
    Command(
        "style_normal", "Normal Text", "Styles", "Give the paragraph the normal body style.", "Control+0",
        ("Body Text", "Default Paragraph"), movable_to=("Format",),
    ),
    Command(
        "style_h1", "Heading 1", "Styles", "Make the paragraph a level-1 heading.", "Control+1",
        ("Title Heading", "Chapter Heading"), movable_to=("Format",),
    ),
    Command(
        "style_h2", "Heading 2", "Styles", "Make the paragraph a level-2 heading.", "Control+2",
        ("Section Heading", "Subheading"), movable_to=("Format",),
    ),
    Command(
        "style_quote", "Quotation", "Styles", "Give the paragraph the indented quotation style.",
        alternatives=("Block Quote", "Quote Paragraph"), movable_to=("Format",),
    ),
    Command(
        "bullet_list", "Bulleted List", "Insert", "Turn the selected paragraphs into a bulleted list, or back.",
        alternatives=("Bullets", "Unordered List"), movable_to=("Format", "Paragraph"),
    ),
    Command(
        "numbered_list", "Numbered List", "Insert", "Turn the selected paragraphs into a numbered list, or back.",
        alternatives=("Numbering", "Ordered List"), movable_to=("Format", "Paragraph"),
    ),
    Command(
        "insert_table", "Table…", "Insert", "Insert a table with a chosen number of rows and columns.",
        "Control+F12", ("Insert Table…", "Grid…"), movable_to=("Table",),
    ),
    Command(
        "horizontal_rule", "Horizontal Line", "Insert", "Insert a horizontal line below the paragraph.",
        alternatives=("Divider", "Separator Line"),
    ),
    Command(
        "table_insert_row", "Insert Row Below", "Table", "Add a row below the table row with the cursor.",
        alternatives=("Add Row", "New Row Below"),
    ),
    Command(
        "table_delete_row", "Delete Row", "Table", "Remove the table row with the cursor.",
        alternatives=("Remove Row", "Drop Row"),
    ),
    Command(
        "table_insert_column", "Insert Column Right", "Table", "Add a column right of the cursor's column.",
        alternatives=("Add Column", "New Column Right"),
    ),
    Command(
        "table_delete", "Delete Table", "Table", "Remove the table with the cursor.",
        alternatives=("Remove Table", "Drop Table"),
    ),
    Command(
        "word_count", "Word Count", "Tools", "Show how many words, characters and paragraphs the document has.",
        alternatives=("Document Statistics", "Count Words"), movable_to=("File", "Edit"),
    ),
]
