"""The image editor's menu commands (GIMP-like): what `ui.json` randomizes and the docs describe.

Tool commands double as the toolbox buttons (their accessible names follow the seed's labels), so choosing a
tool also needs the docs. Single-key shortcuts only fire when no text field has focus.
"""

from __future__ import annotations

from raygent.environments.web.ui import Command

COMMANDS: list[Command] = [
    # File
    Command(
        "new_image",
        "New Image…",
        "File",
        "Start a new blank image of a chosen width, height and background.",
        None,
        ("Create Image…", "Blank Canvas…", "New Picture…"),
        ("Image",),
    ),
    Command(
        "export",
        "Export As…",
        "File",
        "Export the visible image to a file with a name and a format.",
        "Control+Shift+E",
        ("Save Copy As…", "Export Image…", "Write Image…"),
        ("Image",),
    ),
    # Edit
    Command(
        "undo", "Undo", "Edit", "Undo the last change to the image.", "Control+Z", ("Step Back", "Revert Last Step")
    ),
    Command("redo", "Redo", "Edit", "Redo the change that was last undone.", "Control+Y", ("Step Forward", "Reapply")),
    Command(
        "fg_color",
        "Foreground Color…",
        "Edit",
        "Choose the color that the brush, rectangle and fill tools use.",
        None,
        ("Paint Color…", "Ink Color…", "Set Color…"),
        ("Tools", "Colors"),
    ),
    # Image
    Command(
        "canvas_size",
        "Canvas Size…",
        "Image",
        "Change the canvas width and height; the image stays anchored at the top-left corner.",
        None,
        ("Resize Canvas…", "Image Dimensions…", "Canvas Extent…"),
        ("Layer",),
    ),
    Command(
        "crop",
        "Crop…",
        "Image",
        "Cut the image down to a rectangle given by its left, top, width and height.",
        None,
        ("Trim Image…", "Crop to Rectangle…", "Cut to Size…"),
        ("Layer",),
    ),
    Command(
        "flip_horizontal",
        "Flip Horizontally",
        "Image",
        "Mirror every layer left to right.",
        None,
        ("Mirror", "Flip Left-Right"),
        ("Layer",),
    ),
    # Layer
    Command(
        "new_layer",
        "New Layer…",
        "Layer",
        "Add a new transparent layer above the active layer.",
        "Control+Shift+N",
        ("Add Layer…", "Create Layer…", "Insert Layer…"),
    ),
    Command(
        "rename_layer",
        "Rename Layer…",
        "Layer",
        "Give the active layer a new name.",
        None,
        ("Layer Name…", "Edit Layer Name…", "Layer Attributes…"),
    ),
    Command(
        "duplicate_layer",
        "Duplicate Layer",
        "Layer",
        "Copy the active layer, placing the copy above it.",
        None,
        ("Copy Layer", "Clone Layer"),
    ),
    Command(
        "delete_layer",
        "Delete Layer",
        "Layer",
        "Remove the active layer (an image keeps at least one).",
        None,
        ("Remove Layer", "Discard Layer"),
    ),
    Command(
        "raise_layer",
        "Raise Layer",
        "Layer",
        "Move the active layer one step up in the stack.",
        None,
        ("Move Layer Up", "Bring Forward"),
        ("Image",),
    ),
    Command(
        "lower_layer",
        "Lower Layer",
        "Layer",
        "Move the active layer one step down in the stack.",
        None,
        ("Move Layer Down", "Send Backward"),
        ("Image",),
    ),
    Command(
        "layer_opacity",
        "Layer Opacity…",
        "Layer",
        "Set the active layer's opacity in percent.",
        None,
        ("Opacity…", "Layer Transparency…", "Blend Amount…"),
    ),
    Command(
        "toggle_visibility",
        "Show/Hide Layer",
        "Layer",
        "Hide the active layer, or show it if it is hidden.",
        None,
        ("Toggle Visibility", "Layer Visibility"),
    ),
    # Tools
    Command(
        "tool_brush",
        "Paintbrush",
        "Tools",
        "Paint freehand strokes by dragging on the canvas.",
        "b",
        ("Brush", "Pencil", "Paint Tool"),
    ),
    Command(
        "tool_rectangle",
        "Rectangle",
        "Tools",
        "Drag on the canvas to paint a filled rectangle.",
        "r",
        ("Box Tool", "Rectangle Tool", "Filled Box"),
    ),
    Command(
        "tool_fill",
        "Bucket Fill",
        "Tools",
        "Click a region to flood it with the foreground color.",
        "g",
        ("Fill", "Paint Bucket", "Flood Fill"),
    ),
    Command(
        "tool_eraser",
        "Eraser",
        "Tools",
        "Drag to erase pixels of the active layer to transparency.",
        "e",
        ("Rubber", "Erase Tool"),
    ),
    Command(
        "tool_picker",
        "Color Picker",
        "Tools",
        "Click the canvas to take the visible color there as the foreground color.",
        "o",
        ("Eyedropper", "Pick Color", "Sample Color"),
    ),
    # Filters
    Command(
        "filter_invert",
        "Invert",
        "Filters",
        "Invert the colors of the active layer.",
        None,
        ("Invert Colors", "Negative", "Color Inversion"),
        ("Colors",),
    ),
    Command(
        "filter_grayscale",
        "Desaturate",
        "Filters",
        "Turn the active layer into shades of gray.",
        None,
        ("Grayscale", "Remove Color", "Monochrome"),
        ("Colors",),
    ),
    Command(
        "filter_blur",
        "Blur…",
        "Filters",
        "Soften the active layer with a box blur of a chosen radius.",
        None,
        ("Soften…", "Box Blur…", "Smooth…"),
    ),
    Command(
        "filter_brightness",
        "Brightness…",
        "Filters",
        "Make the active layer lighter or darker by an amount from -100 to 100.",
        None,
        ("Lighten/Darken…", "Exposure…", "Light Level…"),
        ("Colors",),
    ),
]
"""In menu order; `randomize` deals labels and menus per seed."""
