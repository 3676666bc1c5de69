"""The documentation of Deckhand, the slide editor (`apps/slide_editor`)."""

from __future__ import annotations

from raygent.environments.web.docs.model import CommandHelp, Guide, Procedure, Section

_SLIDE = "Select the slide: click its thumbnail in the slide sorter on the left (named “Slide N: title”)."
_BOX = "Select the text box: click it on the slide (boxes are named **Title**, **Content**, **Text box 1**, …)."
_BOX_FORMAT = CommandHelp(before=(_SLIDE, _BOX), remarks=("Right-click a text box for its formatting commands.",))
_SLIDE_COMMAND = CommandHelp(before=(_SLIDE,), remarks=("Right-click a thumbnail for the slide commands.",))

GUIDE = Guide(
    app="slide_editor",
    product="Deckhand",
    kind="slide editor",
    summary="Build presentations: slides with layouts and text boxes, their order, formatting, theme and slide show.",
    overview=(
        Section(
            "The window",
            (
                "The menu bar is at the top. The slide sorter on the left lists the slides as thumbnails named "
                "“Slide N: title”; the selected slide is shown large in the middle, with the **Speaker notes** "
                "field below it.",
                "A slide's text boxes are text fields named after their role: **Title**, **Subtitle**, "
                "**Content**, **Left content**, **Right content**, or **Text box 1**, **Text box 2** for added "
                "boxes.",
                "Click a box to select it; type into it to replace its text. Drag a box to move it.",
            ),
        ),
        Section(
            "Layouts and positions",
            (
                "A layout decides the placeholders: Title Slide (title, subtitle), Title and Content, Two Content "
                "and Blank. Positions and sizes are in percent of the slide, from its top-left corner.",
            ),
        ),
    ),
    commands={
        "save_as": CommandHelp(
            after=(
                "Type the name into **File name**, choose **Format** (ODP, PPTX or PDF), and press **Save**.",
            ),
        ),
        "delete_box": CommandHelp(before=(_SLIDE, _BOX)),
        "new_slide": CommandHelp(
            before=("Select the slide the new one should follow.",),
            remarks=("The new slide has the Title and Content layout and becomes the selected slide.",),
        ),
        "duplicate_slide": _SLIDE_COMMAND,
        "delete_slide": _SLIDE_COMMAND,
        "move_slide_up": _SLIDE_COMMAND,
        "move_slide_down": _SLIDE_COMMAND,
        "slide_layout": CommandHelp(
            before=(_SLIDE,),
            after=("Choose the layout in **Layout** and press **Apply**; existing text is kept where it fits.",),
        ),
        "insert_text_box": CommandHelp(
            before=(_SLIDE,),
            after=("The new box is selected and ready: type its text.",),
            remarks=("Move it with {path:position_size} or by dragging it.",),
        ),
        "format_text": CommandHelp(
            before=(_SLIDE, _BOX),
            after=(
                "Set **Font size** (8 to 96), **Font color** (e.g. Blue), **Alignment**, and tick **Bold** or "
                "**Italic**.",
                "Press **OK**.",
            ),
        ),
        "bold": _BOX_FORMAT,
        "italic": _BOX_FORMAT,
        "position_size": CommandHelp(
            before=(_SLIDE, _BOX),
            after=(
                "Type **X (%)** and **Y (%)** for the top-left corner and **Width (%)** and **Height (%)** for "
                "the size, in percent of the slide.",
                "Press **OK**.",
            ),
        ),
        "theme": CommandHelp(
            after=(
                "Choose the theme in **Theme** (Plain, Ocean, Forest, Sunset, Midnight or Paper) and press "
                "**Apply**.",
            ),
        ),
        "start_show": CommandHelp(
            after=("Advance with ArrowRight, Space or Enter, go back with ArrowLeft; Escape ends the show.",),
        ),
        "start_current": CommandHelp(
            before=(_SLIDE,),
            after=("Advance with ArrowRight, Space or Enter, go back with ArrowLeft; Escape ends the show.",),
        ),
    },
    procedures=(
        Procedure(
            "reorder-slides",
            "Reorder slides",
            "Move a slide to another place in the presentation.",
            (
                _SLIDE,
                "{do:move_slide_up} or {do:move_slide_down}; repeat until the slide is in place.",
            ),
            ("You can also drag a thumbnail up or down in the sorter and drop it between two others.",),
        ),
        Procedure(
            "add-a-slide",
            "Add a slide with a title and text",
            "Insert a slide after another one, pick its layout and fill in its text.",
            (
                "Select the slide the new one should follow (for the end, the last slide).",
                "{do:new_slide}.",
                "To change its layout, {do:slide_layout}, choose **Layout** and press **Apply**.",
                "Type the title into **Title** and the text into **Content** (or **Subtitle**).",
            ),
        ),
        Procedure(
            "edit-slide-text",
            "Change a title or add speaker notes",
            "Replace the text of a slide's box, or write its speaker notes.",
            (
                _SLIDE,
                "Type the new text into the box (e.g. **Title**); the old text is replaced.",
                "For notes, type into **Speaker notes** below the slide.",
            ),
        ),
        Procedure(
            "format-text",
            "Format a text box: size, color, bold",
            "Give a text box a font size, color, alignment, bold or italic.",
            (_SLIDE, _BOX, "{do:format_text}.", "Set **Font size**, **Font color**, tick **Bold**, and press **OK**."),
            ("Bold and italic alone: {path:bold}, {path:italic}.",),
        ),
        Procedure(
            "place-a-text-box",
            "Add a text box and place it",
            "Add a text box with some text at a given place on the slide.",
            (
                _SLIDE,
                "{do:insert_text_box} and type the text.",
                "{do:position_size}, type **X (%)** and **Y (%)** (and the size), press **OK**.",
            ),
        ),
        Procedure(
            "change-the-theme",
            "Apply a theme or save the presentation",
            "Give every slide a color theme, or save the presentation as a file.",
            (
                "{do:theme}, choose **Theme** and press **Apply**.",
                "To save, {do:save_as}, type **File name**, choose **Format**, press **Save**.",
            ),
        ),
        Procedure(
            "present",
            "Present from a given slide",
            "Start the slide show from the beginning or from the selected slide, and move through it.",
            (
                "From the beginning: {do:start_show}.",
                "From a slide: select its thumbnail, then {do:start_current}.",
                "Press ArrowRight for the next slide, ArrowLeft for the previous one, Escape to stop.",
            ),
        ),
        Procedure(
            "duplicate-or-delete-slides",
            "Duplicate or delete a slide",
            "Copy a slide (the copy follows it) or remove it.",
            (_SLIDE, "To copy it, {do:duplicate_slide}.", "To remove it, {do:delete_slide}."),
        ),
    ),
)
