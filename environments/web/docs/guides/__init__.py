"""The apps' guides, one module per app, in the order the documentation's index lists them."""

from __future__ import annotations

from raygent.environments.web.docs.guides import code_editor, image_editor, media_player, slide_editor, word_processor
from raygent.environments.web.docs.model import Guide

GUIDES: dict[str, Guide] = {
    module.GUIDE.app: module.GUIDE
    for module in (code_editor, image_editor, word_processor, slide_editor, media_player)
}
"""app -> its guide."""
