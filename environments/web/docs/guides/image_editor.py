"""The documentation of Pixel Studio, the image editor (`apps/image_editor`)."""

from __future__ import annotations

from raygent.environments.web.docs.model import CommandHelp, Guide, Procedure, Section

_LAYER = "Select the layer: click its name in the **Layers** panel."
_COLOR = "Set the color: {do:fg_color}, type it into **Hex color** (e.g. `#8030c0`) and press **OK**."
_FILTER = CommandHelp(before=(_LAYER,), remarks=("Filters act on the active layer only.",))
_LAYER_COMMAND = CommandHelp(before=(_LAYER,), remarks=("Right-click a layer in the panel for the layer commands.",))
_TOOL = "The tools are also buttons in the **Tools** bar, named like the menu commands."

GUIDE = Guide(
    app="image_editor",
    product="Pixel Studio",
    kind="image editor",
    summary="Paint on layered images with a brush, rectangles and fills, apply filters, and export the result.",
    overview=(
        Section(
            "The window",
            (
                "The menu bar is at the top; below it the tool options (**Brush size**, the **Foreground color** "
                "button) and the **Tools** bar.",
                "The canvas is in the middle, the **Layers** panel and the list of exported files on the right, "
                "the status bar (size, layer, tool) at the bottom.",
                "In the **Layers** panel the top row is the top layer. Click a layer's name to make it active; "
                "the checkbox **Show** plus the layer's name shows or hides it. Right-click a layer for its commands.",
            ),
        ),
        Section(
            "Pointing at pixels",
            (
                "Pixel (0, 0) is the top-left corner. In the page's element list the canvas line ends with "
                "box=(left,top,right,bottom) on the 0–1000 grid.",
                "Pixel (x, y) of a W×H image is centred at left + (right − left)(x + 0.5)/W, "
                "top + (bottom − top)(y + 0.5)/H.",
                "Drag with the rectangle tool from one corner pixel to the opposite one: both corners are painted.",
            ),
        ),
    ),
    commands={
        "new_image": CommandHelp(
            after=("Type **Width** and **Height** (4 to 240), choose **Background**, and press **OK**.",),
        ),
        "export": CommandHelp(
            after=(
                "Type the name into **File name** and choose **Format**: PNG, JPEG or WebP. A name without an "
                "extension gets the format's.",
                "Press **Export**. The file appears under **Exported files**.",
            ),
            remarks=("Export writes what is visible: hidden layers are left out, opacity is applied.",),
        ),
        "fg_color": CommandHelp(
            after=("Type the color into **Hex color** as `#rrggbb` and press **OK**.",),
            remarks=("The **Foreground color** button next to **Brush size** opens the same dialog.",),
        ),
        "canvas_size": CommandHelp(
            after=("Type the new **Width** and **Height** in pixels and press **Resize**.",),
            remarks=("The picture stays at the top-left; new area is transparent.",),
        ),
        "crop": CommandHelp(
            after=("Type **Left**, **Top**, **Width** and **Height** of the rectangle to keep and press **Crop**.",),
        ),
        "new_layer": CommandHelp(
            after=(
                "Type the name into **Layer name** and choose **Fill with**: Transparent, White or Foreground "
                "(the foreground color).",
                "Press **OK**. The new layer goes above the active one and becomes active.",
            ),
        ),
        "rename_layer": CommandHelp(
            before=(_LAYER,),
            after=("Type the new name into **Layer name** and press **OK**.",),
        ),
        "duplicate_layer": _LAYER_COMMAND,
        "delete_layer": _LAYER_COMMAND,
        "raise_layer": _LAYER_COMMAND,
        "lower_layer": _LAYER_COMMAND,
        "layer_opacity": CommandHelp(
            before=(_LAYER,),
            after=("Type the percentage into **Opacity (%)** (0 to 100) and press **OK**.",),
        ),
        "toggle_visibility": CommandHelp(
            before=(_LAYER,),
            remarks=("The layer's **Show** checkbox in the panel does the same.",),
        ),
        "tool_brush": CommandHelp(
            after=("Set **Brush size** in pixels, then drag on the canvas to paint with the foreground color.",),
            remarks=(_TOOL,),
        ),
        "tool_rectangle": CommandHelp(
            after=("Drag on the canvas from one corner to the opposite corner; the rectangle is filled.",),
            remarks=(_TOOL,),
        ),
        "tool_fill": CommandHelp(
            after=("Click inside the region; every connected pixel of that color takes the foreground color.",),
            remarks=(_TOOL,),
        ),
        "tool_eraser": CommandHelp(
            after=("Set **Brush size**, then drag over the pixels to erase them to transparency.",),
            remarks=(_TOOL,),
        ),
        "tool_picker": CommandHelp(
            after=("Click a pixel: its visible color becomes the foreground color.",),
            remarks=(_TOOL,),
        ),
        "filter_invert": _FILTER,
        "filter_grayscale": _FILTER,
        "filter_blur": CommandHelp(
            before=(_LAYER,),
            after=("Type **Radius** (1 to 10) and press **Apply**.",),
        ),
        "filter_brightness": CommandHelp(
            before=(_LAYER,),
            after=("Type **Amount** (−100 darker to 100 lighter) and press **Apply**.",),
        ),
    },
    procedures=(
        Procedure(
            "export-an-image",
            "Export an image as PNG or JPEG",
            "Write the visible image to a PNG, JPEG or WebP file.",
            (
                "{do:export}.",
                "Type the name into **File name**, e.g. `icon.png`.",
                "Choose PNG, JPEG or WebP in **Format**.",
                "Press **Export**.",
            ),
        ),
        Procedure(
            "paint-a-rectangle",
            "Paint a filled rectangle",
            "Paint a rectangle of a given color on a given layer.",
            (
                _LAYER,
                _COLOR,
                "Choose the rectangle tool: {do:tool_rectangle}.",
                "Drag on the canvas from the top-left pixel of the rectangle to its bottom-right pixel.",
            ),
        ),
        Procedure(
            "fill-a-region",
            "Fill a shape with a color",
            "Recolor a region of one color with the bucket fill tool.",
            (
                _LAYER,
                _COLOR,
                "Choose the fill tool: {do:tool_fill}.",
                "Click inside the shape.",
            ),
            ("To take a color from the image first, use {path:tool_picker} and click a pixel of that color.",),
        ),
        Procedure(
            "paint-a-stroke",
            "Paint or erase a line",
            "Paint a straight brush stroke, or erase a band, along a row of pixels.",
            (
                _LAYER,
                "For paint, set the color ({path:fg_color}) and choose {path:tool_brush}; to erase, choose "
                "{path:tool_eraser}.",
                "Type the thickness into **Brush size**.",
                "Drag from the first pixel of the line to the last.",
            ),
        ),
        Procedure(
            "work-with-layers",
            "Add, rename, hide or reorder layers",
            "Manage the layer stack: new layers, names, opacity, visibility and order.",
            (
                "To add one, select the layer it goes above, {do:new_layer}, type **Layer name**, choose "
                "**Fill with** and press **OK**.",
                "To rename the active layer, {do:rename_layer}; for its opacity, {do:layer_opacity}.",
                "To hide or show a layer, click its **Show** checkbox in the **Layers** panel.",
                "To move the active layer, {do:raise_layer} or {do:lower_layer}.",
            ),
        ),
        Procedure(
            "apply-filters",
            "Blur, brighten, desaturate or invert a layer",
            "Apply filters to one layer.",
            (
                _LAYER,
                "For gray, {do:filter_grayscale}; for a negative, {do:filter_invert}.",
                "For blur, {do:filter_blur}, type **Radius**, press **Apply**.",
                "For brightness, {do:filter_brightness}, type **Amount** (negative darkens), press **Apply**.",
            ),
        ),
        Procedure(
            "resize-or-crop",
            "Resize the canvas or crop the image",
            "Change the canvas size or cut the image down to a rectangle.",
            (
                "To enlarge or shrink the canvas, {do:canvas_size}, type **Width** and **Height**, press **Resize**.",
                "To crop, {do:crop}, type **Left**, **Top**, **Width**, **Height**, press **Crop**.",
                "To mirror it, {do:flip_horizontal}.",
            ),
        ),
    ),
)
