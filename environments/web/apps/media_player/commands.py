"""The media player's menu commands (DocOS: with a UI seed other than 0, labels and menus move; the docs say where).

The transport bar's buttons (previous, play/pause, stop, next) take their names from the same spec, so a
randomized layout renames them too. Shortcuts are fixed.
"""

from __future__ import annotations

from raygent.environments.web.ui import Command

# fmt: off
COMMANDS: list[Command] = [
    Command(
        "add_tracks", "Add to Playlist…", "Media", "Choose tracks from the library to append to the playlist.",
        "Control+O", ("Enqueue Media…", "Import Tracks…"),
    ),
    Command(
        "save_playlist", "Save Playlist As…", "Media", "Save the playlist under a name in the player's library.",
        "Control+S", ("Export Playlist…", "Store Playlist…"), movable_to=("Playlist",),
    ),
    Command(
        "clear_playlist", "Clear Playlist", "Media", "Remove every track from the playlist.",
        alternatives=("Empty Playlist", "Remove All Tracks"), movable_to=("Playlist",),
    ),
    Command(
        "play_pause", "Play/Pause", "Playback", "Start playing the current track, or pause it.", "Space",
        ("Toggle Playback", "Start/Hold"),
    ),
    Command(
        "stop", "Stop", "Playback", "Stop playing and return to the start of the track.",
        alternatives=("Halt", "End Playback"),
    ),
    Command(
        "next_track", "Next Track", "Playback", "Skip to the next track of the playlist.", "Control+ArrowRight",
        ("Skip Forward", "Following Track"),
    ),
    Command(
        "prev_track", "Previous Track", "Playback", "Go back to the previous track of the playlist.",
        "Control+ArrowLeft", ("Skip Back", "Preceding Track"),
    ),
    Command(
        "jump_forward", "Jump Forward 10 s", "Playback", "Move 10 seconds ahead in the current track.",
        "Shift+ArrowRight", ("Ahead 10 s", "Skip 10 s"), movable_to=("Tools",),
    ),
    Command(
        "jump_back", "Jump Back 10 s", "Playback", "Move 10 seconds back in the current track.", "Shift+ArrowLeft",
        ("Rewind 10 s", "Back 10 s"), movable_to=("Tools",),
    ),
    Command(
        "go_to_time", "Go to Time…", "Playback", "Move to an exact time (minutes and seconds) of the current track.",
        "Control+T", ("Jump to Time…", "Seek To…"), movable_to=("Tools",),
    ),
    Command(
        "speed", "Playback Speed…", "Playback", "Choose how fast the track plays, from 0.25× to 2×.",
        alternatives=("Tempo…", "Play Rate…"), movable_to=("Audio", "Tools"),
    ),
    Command(
        "cycle_repeat", "Repeat Mode", "Playback",
        "Cycle the repeat mode: off, then the whole playlist, then the current track, then off again.",
        "Control+L", ("Loop Mode", "Cycle Looping"), movable_to=("Playlist",),
    ),
    Command(
        "shuffle", "Shuffle", "Playback", "Turn random playing order on or off.",
        alternatives=("Random Order", "Mix Tracks"), movable_to=("Playlist",),
    ),
    Command(
        "volume_up", "Volume Up", "Audio", "Raise the volume by 10.", "Control+ArrowUp", ("Louder", "Increase Volume"),
    ),
    Command(
        "volume_down", "Volume Down", "Audio", "Lower the volume by 10.", "Control+ArrowDown",
        ("Quieter", "Decrease Volume"),
    ),
    Command("mute", "Mute", "Audio", "Silence the sound, or bring it back.", "Control+M", ("Silence", "Toggle Sound")),
    Command(
        "subtitle_track", "Subtitle Track…", "Subtitles", "Choose the subtitle language of the current track, or none.",
        "Control+U", ("Captions…", "Subtitle Language…"), movable_to=("Tools",),
    ),
    Command(
        "subtitle_delay", "Subtitle Delay…", "Subtitles",
        "Show subtitles earlier or later than the sound, in half seconds from −10 to +10.",
        alternatives=("Caption Offset…", "Sync Subtitles…"), movable_to=("Tools",),
    ),
    Command(
        "search_subtitles", "Search Subtitles…", "Subtitles",
        "Find a spoken line in the subtitles of the playlist's tracks and jump to it.",
        "Control+F", ("Find Spoken Line…", "Search Captions…"), movable_to=("Tools",),
    ),
    Command(
        "sort_title", "Sort by Title", "Playlist", "Order the playlist alphabetically by title.",
        alternatives=("Order by Name", "Arrange by Title"),
    ),
    Command(
        "sort_artist", "Sort by Artist", "Playlist", "Order the playlist alphabetically by artist, then title.",
        alternatives=("Order by Performer", "Arrange by Artist"),
    ),
    Command(
        "sort_duration", "Sort by Duration", "Playlist", "Order the playlist from the shortest track to the longest.",
        alternatives=("Order by Length", "Arrange by Duration"),
    ),
    Command(
        "remove_track", "Remove Selected", "Playlist", "Remove the selected track from the playlist.", "Delete",
        ("Drop Selected", "Take Out Track"), movable_to=("Media",),
    ),
    Command(
        "move_up", "Move Up", "Playlist", "Move the selected track one place earlier in the playlist.",
        "Alt+ArrowUp", ("Raise Track", "Shift Earlier"),
    ),
    Command(
        "move_down", "Move Down", "Playlist", "Move the selected track one place later in the playlist.",
        "Alt+ArrowDown", ("Lower Track", "Shift Later"),
    ),
    Command(
        "track_info", "Track Properties…", "Playlist", "View and edit the selected track's title and artist.",
        "Control+I", ("Edit Tags…", "Media Information…"), movable_to=("Media", "Tools"),
    ),
    Command(
        "add_bookmark", "Add Bookmark…", "Tools", "Mark the current position of the current track under a name.",
        "Control+B", ("Mark Position…", "Set Marker…"), movable_to=("Playback",),
    ),
    Command(
        "bookmarks", "Bookmarks…", "Tools", "List the bookmarks; go to one or delete it.",
        alternatives=("Markers…", "Saved Positions…"), movable_to=("Playback",),
    ),
]
# fmt: on
