"""The documentation of Tempo Media Player (`apps/media_player`)."""

from __future__ import annotations

from raygent.environments.web.docs.model import CommandHelp, Guide, Procedure, Section

_TRACK = "Select the track: click its row in the **Playlist** (rows read “title — artist”)."
_LOADED = "The command acts on the current track (the one loaded in the player)."
_ROW = CommandHelp(before=(_TRACK,), remarks=("Right-clicking a row offers this command for that track.",))

GUIDE = Guide(
    app="media_player",
    product="Tempo Media Player",
    kind="media player",
    summary="Play tracks from a playlist: seek, speed, volume, subtitles, bookmarks and saved playlists.",
    overview=(
        Section(
            "The window",
            (
                "The menu bar is at the top. The video area is in the middle: click it to play or pause, "
                "double-click it to fill the whole window (again to go back), right-click it for playback "
                "commands. Subtitles show under the video.",
                "The transport bar has previous, play/pause, stop and next buttons, the **Seek** slider, the "
                "clock, the mute button and the **Volume** slider (0 to 100; type a number into it to set it).",
                "The **Playlist** is on the right. Click a row to select it, double-click it to play it, "
                "right-click it for Play, remove, move and properties.",
            ),
        ),
        Section(
            "Times",
            ("Times are written m:ss, e.g. 3:34 is three minutes and 34 seconds.",),
        ),
    ),
    commands={
        "add_tracks": CommandHelp(
            after=(
                "Tick the tracks of the library to add, in the order they should be added.",
                "Press **Add**: they are appended to the playlist.",
            ),
        ),
        "save_playlist": CommandHelp(
            after=("Type the name into **Playlist name** and press **Save**.",),
        ),
        "play_pause": CommandHelp(remarks=("Clicking the video area does the same.",)),
        "go_to_time": CommandHelp(
            before=("Load the track first: double-click its row.",),
            after=("Type the time into **Time (m:ss)**, e.g. `1:05`, and press **Go**.",),
            remarks=(_LOADED,),
        ),
        "speed": CommandHelp(
            after=("Choose the speed in **Speed** (0.25× to 2×) and press **Apply**.",),
        ),
        "cycle_repeat": CommandHelp(
            remarks=(
                "Each use moves one step: off → whole playlist (all) → current track (one) → off. The status line "
                "shows “Repeat: off”, “all” or “one”.",
            ),
        ),
        "subtitle_track": CommandHelp(
            before=("Load the track first: double-click its row.",),
            after=("Click the language (or Off) in **Subtitle language** and press **Apply**.",),
            remarks=(_LOADED,),
        ),
        "subtitle_delay": CommandHelp(
            after=(
                "Type the delay into **Delay in seconds** (−10 to 10, in steps of 0.5). A negative delay shows "
                "subtitles earlier than the sound, a positive one later.",
                "Press **Apply**.",
            ),
        ),
        "search_subtitles": CommandHelp(
            after=(
                "Type words of the line into **Find line** and press **Search**.",
                "Click a match (“title · time · language: line”): the player loads that track, goes to the line "
                "and stays paused, with that language's subtitles on.",
            ),
        ),
        "remove_track": _ROW,
        "move_up": _ROW,
        "move_down": _ROW,
        "track_info": CommandHelp(
            before=(_TRACK,),
            after=("Change **Title** and **Artist** and press **Save**.",),
            remarks=("Right-clicking a row offers this command for that track.",),
        ),
        "add_bookmark": CommandHelp(
            before=("Go to the moment first (see {path:go_to_time}).",),
            after=("Type the name into **Bookmark name** and press **Save**.",),
        ),
        "bookmarks": CommandHelp(after=("Press **Go to** plus a bookmark's name to jump there, or **Delete**.",)),
    },
    procedures=(
        Procedure(
            "play-a-track",
            "Play a track",
            "Start a given track of the playlist.",
            (
                "Double-click the track's row in the **Playlist** (or right-click it and choose Play).",
                "To pause or go on, {do:play_pause}.",
            ),
        ),
        Procedure(
            "pause-at-a-time",
            "Go to a time and pause there",
            "Open a track and leave it paused at an exact time.",
            (
                "Double-click the track's row to load it.",
                "{do:go_to_time}, type the time into **Time (m:ss)** and press **Go**.",
                "If it is playing, {do:play_pause} to pause.",
            ),
        ),
        Procedure(
            "show-subtitles",
            "Show subtitles, earlier or later",
            "Turn on subtitles in a language and shift them in time.",
            (
                "Double-click the track's row to load it.",
                "{do:subtitle_track}, click the language, press **Apply**.",
                "To shift them, {do:subtitle_delay}, type **Delay in seconds** (negative: earlier), press **Apply**.",
            ),
        ),
        Procedure(
            "edit-the-playlist",
            "Add, remove and reorder tracks",
            "Change which tracks the playlist holds and their order.",
            (
                "To add tracks, {do:add_tracks}, tick them in order, press **Add**.",
                "To remove one, select its row and {do:remove_track}. To empty the list, {do:clear_playlist}.",
                "To move one, select it and {do:move_up} or {do:move_down}.",
                "To sort, choose {path:sort_title}, {path:sort_artist} or {path:sort_duration}.",
            ),
        ),
        Procedure(
            "save-a-playlist",
            "Save the playlist",
            "Keep the current playlist under a name.",
            ("{do:save_playlist}.", "Type the name into **Playlist name** and press **Save**."),
        ),
        Procedure(
            "speed-and-volume",
            "Change speed, volume or mute",
            "Set playback speed and loudness.",
            (
                "For speed, {do:speed}, choose **Speed**, press **Apply**.",
                "For volume, type the number into the **Volume** slider, or use {path:volume_up} and "
                "{path:volume_down}.",
                "To silence it or bring the sound back, {do:mute}.",
            ),
        ),
        Procedure(
            "repeat-and-shuffle",
            "Repeat or shuffle the playlist",
            "Make the playlist or one track repeat, or play in random order.",
            (
                "{do:cycle_repeat} until the status shows the mode you want (off, all, one).",
                "To switch random order on or off, {do:shuffle}.",
            ),
        ),
        Procedure(
            "find-a-spoken-line",
            "Find where a line is spoken",
            "Search the subtitles of the playlist's tracks for a sentence and jump to it.",
            (
                "{do:search_subtitles}.",
                "Type words of the sentence into **Find line** and press **Search**.",
                "Click the match: the player stays paused on that line.",
            ),
        ),
        Procedure(
            "bookmark-a-moment",
            "Bookmark a moment",
            "Mark a time of a track under a name, and come back to it later.",
            (
                "Load the track and go to the time ({path:go_to_time}).",
                "{do:add_bookmark}, type **Bookmark name**, press **Save**.",
                "Later, {do:bookmarks} and press **Go to** plus the name.",
            ),
        ),
    ),
)
