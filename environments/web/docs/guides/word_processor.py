"""The documentation of Quill Writer, the word processor (`apps/word_processor`)."""

from __future__ import annotations

from raygent.environments.web.docs.model import CommandHelp, Guide, Procedure, Section

_SELECT = (
    "Select the text: {do:find_replace}, type it into **Find** and press **Find Next**; the match is selected "
    "in the document."
)
_PARAGRAPH = "Put the cursor in the paragraph: click it, or find a word of it with **Find Next**."
_TEXT_FORMAT = CommandHelp(before=(_SELECT,), remarks=("The same command on text that has it already takes it away.",))
_PARAGRAPH_FORMAT = CommandHelp(before=(_PARAGRAPH,), remarks=("Select several paragraphs to change them all.",))
_TABLE = CommandHelp(before=("Click into a cell of the table.",))

GUIDE = Guide(
    app="word_processor",
    product="Quill Writer",
    kind="word processor",
    summary="Write and format documents: character formats, paragraph styles, lists, tables and page setup.",
    overview=(
        Section(
            "The window",
            (
                "The menu bar is at the top, a formatting toolbar below it, and the page in the middle: the text "
                "box named **Document**. Click into it and type; Enter starts a new paragraph.",
                "Toolbar buttons carry the same names as the menu commands. Right-click the document for the "
                "character formats and styles (and, inside a table, the table commands).",
            ),
        ),
        Section(
            "Selecting text",
            (
                "Character formats act on the selected text, paragraph styles and alignment on the paragraphs "
                "the selection touches.",
                "The Find & Replace panel selects text for you: **Find Next** selects the next match, and the "
                "next command applies to it.",
                "Ctrl+End moves the cursor to the end of the document; {do:select_all} selects everything.",
            ),
        ),
        Section(
            "Files",
            (
                "To save the document under a name and a format, {do:save_as}.",
                "To save it again under the same name, {do:save}.",
            ),
        ),
    ),
    commands={
        "save": CommandHelp(remarks=("The first time, it asks for a name and a format like {label:save_as}.",)),
        "save_as": CommandHelp(
            after=(
                "Type the name without extension into **File name**.",
                "Choose the format in **File type**, e.g. Plain Text (.txt), Rich Text Format (.rtf) or HTML "
                "Page (.html).",
                "Press **Save**.",
            ),
        ),
        "page_setup": CommandHelp(
            after=(
                "Choose **Paper size** (A4, A5, Letter or Legal), click **Portrait** or **Landscape**, and type "
                "the margins into **Margins (cm)** (0.5 to 5, in steps of 0.5).",
                "Press **OK**.",
            ),
        ),
        "find_replace": CommandHelp(
            after=(
                "Type into **Find**; **Find Next** selects the next match. To replace, type the new text into "
                "**Replace with** and press **Replace** (this match) or **Replace All**.",
                "**Close search** closes the panel.",
            ),
            remarks=("**Match case** and **Whole words only** narrow the search.",),
        ),
        "bold": _TEXT_FORMAT,
        "italic": _TEXT_FORMAT,
        "underline": _TEXT_FORMAT,
        "strikethrough": _TEXT_FORMAT,
        "font_size": CommandHelp(
            before=(_SELECT,),
            remarks=("This sets the font size of the selected text only.",),
            after=("Type the size into **Size (pt)** (6 to 96) and press **Apply**.",),
        ),
        "clear_formatting": CommandHelp(before=(_SELECT,)),
        "align_left": _PARAGRAPH_FORMAT,
        "align_center": _PARAGRAPH_FORMAT,
        "align_right": _PARAGRAPH_FORMAT,
        "justify": _PARAGRAPH_FORMAT,
        "style_normal": _PARAGRAPH_FORMAT,
        "style_h1": _PARAGRAPH_FORMAT,
        "style_h2": _PARAGRAPH_FORMAT,
        "style_quote": _PARAGRAPH_FORMAT,
        "bullet_list": CommandHelp(
            before=("Select the paragraphs (from the first to the last), or put the cursor in one.",),
            remarks=("In a list, Enter after an item starts the next item.",),
        ),
        "numbered_list": CommandHelp(
            before=("Select the paragraphs (from the first to the last), or put the cursor in one.",),
        ),
        "insert_table": CommandHelp(
            before=("Put the cursor where the table goes, e.g. at the end: click the **Document**, press Ctrl+End.",),
            after=(
                "Type **Rows** and **Columns**; tick **Header row** for a heading row.",
                "Press **Insert Table**. The cursor is in the first cell: type, and press Tab for the next cell.",
            ),
        ),
        "horizontal_rule": CommandHelp(before=(_PARAGRAPH,)),
        "table_insert_row": _TABLE,
        "table_delete_row": _TABLE,
        "table_insert_column": _TABLE,
        "table_delete": _TABLE,
        "word_count": CommandHelp(after=("Read the counts in the dialog and press **Close**.",)),
    },
    procedures=(
        Procedure(
            "format-a-word",
            "Make a word bold, italic, underlined, or change its font size",
            "Select a word or phrase and give it a character format or a font size in points.",
            (
                "{do:find_replace}.",
                "Type the word into **Find** and press **Find Next**: the word is selected.",
                "Apply the format: choose {path:bold}, {path:italic} or {path:underline}.",
                "For a size, {do:font_size}, type it into **Size (pt)** and press **Apply**.",
            ),
        ),
        Procedure(
            "replace-a-word",
            "Replace a word everywhere in a document",
            "Find every occurrence of a text and replace it with another.",
            (
                "{do:find_replace}.",
                "Type the old text into **Find** and the new text into **Replace with**.",
                "Press **Replace All**, then **Close search**.",
            ),
        ),
        Procedure(
            "style-a-paragraph",
            "Make a paragraph a heading, a quotation or centered",
            "Change a paragraph's style or alignment.",
            (
                "Put the cursor in the paragraph (find one of its words with **Find Next**, or click it).",
                "For a heading, choose {path:style_h1} or {path:style_h2}; for a quotation, {path:style_quote}.",
                "To center it, {do:align_center}; other alignments: {path:align_right}, {path:justify}.",
            ),
        ),
        Procedure(
            "make-a-list",
            "Turn paragraphs into a list",
            "Make paragraphs a bulleted or numbered list, or add a new list at the end.",
            (
                "Put the cursor in the first paragraph: find one of its words with **Find Next**.",
                "{do:bullet_list}, or {do:numbered_list}.",
                "Repeat for each further paragraph; neighbouring list paragraphs form one list.",
            ),
            (
                "A new list at the end: press Ctrl+End and Enter, type the first item, choose the list command, "
                "then press Enter and type each next item.",
            ),
        ),
        Procedure(
            "insert-a-table",
            "Insert a table and fill its first row",
            "Add a table at the end of the document and type into its cells.",
            (
                "Click the **Document** and press Ctrl+End.",
                "{do:insert_table}.",
                "Type **Rows** and **Columns** and press **Insert Table**.",
                "Type the first cell's text, press Tab, type the next cell, and so on.",
            ),
        ),
        Procedure(
            "save-in-another-format",
            "Save a document under a name and format",
            "Save the document as Plain Text, Rich Text, HTML, PDF, Word or ODF.",
            (
                "{do:save_as}.",
                "Type the name into **File name** and choose the format in **File type**.",
                "Press **Save**.",
            ),
        ),
        Procedure(
            "set-up-the-page",
            "Set paper size, orientation and margins",
            "Lay out the page: paper, portrait or landscape, margins.",
            (
                "{do:page_setup}.",
                "Choose **Paper size**, click **Portrait** or **Landscape**, type **Margins (cm)**.",
                "Press **OK**.",
            ),
        ),
    ),
)
