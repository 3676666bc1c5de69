"""Reading the observation text (`environments/web/observe.py`): where attention is (`focus`) and how
`click_label("name")` finds its element (`find_label`). No browser."""

from __future__ import annotations

import pytest

from raygent.environments.web.observe import find_label, focus, parse

SCREEN = """banner
  menubar
    [1] button "Media"
    [2] button "Playback" expanded focused
      menu "Playback"
        [3] menuitem "Play/Pause"
        [4] menuitem "Play Rate…"
    [5] button "Playlist"
main
  [6] button "Play/Pause"
  [7] listbox "Playlist"
    [8] option "1. Northern Lanterns"
  [9] button "Next"
  [10] button "Next"
"""


def test_focus_is_the_open_menu_with_its_menu_bar_or_the_last_dialog() -> None:
    assert [e.id for e in focus(parse(SCREEN)) if e.id] == [1, 2, 3, 4, 5]
    dialog = SCREEN + 'dialog "Play Rate"\n  [11] combobox "Speed"\n  [12] button "Apply"\n'
    assert [e.id for e in focus(parse(dialog)) if e.id] == [11, 12]
    closed = "\n".join(line for line in SCREEN.splitlines() if "menu" not in line)
    assert len(focus(parse(closed))) == len(parse(closed))


@pytest.mark.parametrize(
    ("label", "element"),
    [
        ("Play Rate…", 4),
        ("  “play rate…” ", 4),  # case, curly quotes copied from a doc page, spaces
        ("Play/Pause", 3),  # the open menu's item, not the button behind it
        ("Playlist", 5),  # the control, not the listbox of the same name
        ("1. Northern Lanterns", 8),  # outside the menu: the whole screen
        ("1. North…", 8),  # a name a compact screen cut
    ],
)
def test_find_label_looks_where_attention_is_then_everywhere(label: str, element: int) -> None:
    assert find_label(SCREEN, label) == element
    assert find_label(parse(SCREEN), label) == element  # a screen already parsed: the same element


def test_find_label_refuses_an_absent_an_ambiguous_or_an_empty_name() -> None:
    with pytest.raises(LookupError, match=r"no element named 'Shuffle'.*'Play Rate…'"):
        find_label(SCREEN, "Shuffle")
    with pytest.raises(LookupError, match=r"2 elements are named 'Next': \[9, 10\]"):
        find_label(SCREEN, "Next")
    with pytest.raises(LookupError, match="empty label"):
        find_label(SCREEN, ' "" ')
