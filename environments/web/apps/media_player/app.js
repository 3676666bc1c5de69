// Tempo Media Player: the player's state, its commands and its simulated media clock.
//
// Headless Chromium may not decode audio or video, so nothing is decoded: a track is data (title, artist,
// duration, subtitle cues) and playback is a clock. While playing, `position` advances by the elapsed wall time
// times `speed` (a 100 ms timer reading performance.now()); at a track's end the repeat mode decides what comes
// next. The canvas draws a frame computed from the position. Checkers read `window.raygent.getState()`.
import {buildMenubar, bindShortcuts, closeMenus, openContextMenu} from "../common/menus.js";
import {openDialog, closeDialog, openDialogName} from "./dialogs.js";
import {render, renderClock} from "./view.js";

const DEFAULTS = {
  library: [], playlist: [], current: null, selected: null, playing: false, position: 0, speed: 1,
  volume: 80, muted: false, repeat: "off", shuffle: false, subtitle: null, subtitle_delay: 0,
  bookmarks: [], files: {}, fullscreen: false,
};
const REPEAT_CYCLE = {off: "all", all: "one", one: "off"};

export const player = {
  state: structuredClone(DEFAULTS),
  cues: {},        // track id -> language -> [[start, end, text], ...]
  spec: null,      // the seed's ui.json
  shuffleSeed: 7,  // deterministic "random" order
  lastTick: performance.now(),
};

export const track = (id) => player.state.library.find((t) => t.id === id) || null;
export const currentTrack = () => track(player.state.current);
export const label = (id) => (player.spec ? player.spec.commands[id].label : id);

export function formatTime(seconds) {
  const s = Math.max(0, Math.floor(seconds + 1e-6));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** "m:ss", "h:mm:ss" or plain seconds; NaN when unreadable. */
export function parseTime(text) {
  const parts = String(text).trim().split(":");
  if (!parts.length || parts.length > 3 || parts.some((p) => !/^\d+(\.\d+)?$/.test(p.trim()))) return NaN;
  return parts.reduce((total, part) => total * 60 + Number(part), 0);
}

export function seek(seconds) {
  const t = currentTrack();
  if (!t) return;
  player.state.position = Math.min(Math.max(0, seconds), t.duration);
}

export function playTrack(id, {position = 0, play = true} = {}) {
  if (!track(id)) return;
  player.state.current = id;
  player.state.position = 0;
  seek(position);
  player.state.playing = play;
  if (player.state.subtitle && !(player.cues[id] || {})[player.state.subtitle]) player.state.subtitle = null;
}

function neighbour(step) {
  const {playlist, current, shuffle} = player.state;
  if (!playlist.length) return null;
  const index = playlist.indexOf(current);
  if (shuffle && playlist.length > 1) {
    player.shuffleSeed = (player.shuffleSeed * 1103515245 + 12345) % 2147483648;
    const others = playlist.filter((id) => id !== current);
    return others[player.shuffleSeed % others.length];
  }
  const next = index + step;
  if (next < 0 || next >= playlist.length) {
    return player.state.repeat === "all" ? playlist[(next + playlist.length) % playlist.length] : null;
  }
  return playlist[next];
}

function moveSelected(step) {
  const list = player.state.playlist;
  const index = list.indexOf(player.state.selected);
  const target = index + step;
  if (index < 0 || target < 0 || target >= list.length) return;
  [list[index], list[target]] = [list[target], list[index]];
}

function sortBy(key) {
  const byText = (a, b) => a.localeCompare(b, "en", {sensitivity: "base"});
  const compare = {
    title: (a, b) => byText(a.title, b.title),
    artist: (a, b) => byText(a.artist, b.artist) || byText(a.title, b.title),
    duration: (a, b) => a.duration - b.duration,
  }[key];
  player.state.playlist.sort((a, b) => compare(track(a), track(b)));
}

export function removeFromPlaylist(id) {
  const s = player.state;
  s.playlist = s.playlist.filter((other) => other !== id);
  if (s.current === id) Object.assign(s, {current: null, playing: false, position: 0});
  if (s.selected === id) s.selected = null;
}

const COMMANDS = {
  add_tracks: () => openDialog("add_tracks"),
  save_playlist: () => openDialog("save_playlist"),
  clear_playlist: () => Object.assign(player.state, {playlist: [], current: null, selected: null, playing: false,
    position: 0}),
  play_pause: () => {
    const s = player.state;
    if (!s.current) {
      const first = s.selected || s.playlist[0];
      if (first) playTrack(first);
      return;
    }
    if (!s.playing && s.position >= currentTrack().duration) s.position = 0;
    s.playing = !s.playing;
  },
  stop: () => Object.assign(player.state, {playing: false, position: 0}),
  next_track: () => {
    const next = neighbour(1);
    if (next) playTrack(next, {play: player.state.playing});
  },
  prev_track: () => {
    if (player.state.position > 3) return seek(0);
    const previous = neighbour(-1);
    if (previous) playTrack(previous, {play: player.state.playing});
  },
  jump_forward: () => seek(player.state.position + 10),
  jump_back: () => seek(player.state.position - 10),
  go_to_time: () => openDialog("go_to_time"),
  speed: () => openDialog("speed"),
  cycle_repeat: () => { player.state.repeat = REPEAT_CYCLE[player.state.repeat]; },
  shuffle: () => { player.state.shuffle = !player.state.shuffle; },
  volume_up: () => { player.state.volume = Math.min(100, player.state.volume + 10); },
  volume_down: () => { player.state.volume = Math.max(0, player.state.volume - 10); },
  mute: () => { player.state.muted = !player.state.muted; },
  subtitle_track: () => openDialog("subtitle_track"),
  subtitle_delay: () => openDialog("subtitle_delay"),
  search_subtitles: () => openDialog("search_subtitles"),
  sort_title: () => sortBy("title"),
  sort_artist: () => sortBy("artist"),
  sort_duration: () => sortBy("duration"),
  remove_track: () => { if (player.state.selected) removeFromPlaylist(player.state.selected); },
  move_up: () => moveSelected(-1),
  move_down: () => moveSelected(1),
  track_info: () => { if (player.state.selected || player.state.current) openDialog("track_info"); },
  add_bookmark: () => { if (player.state.current) openDialog("add_bookmark"); },
  bookmarks: () => openDialog("bookmarks"),
};

/** The menu items that show a check: shuffle and mute, from the player's state. */
const CHECKABLE = {shuffle: (s) => s.shuffle, mute: (s) => s.muted};

/** Run a command by id (menus, shortcuts, context menus and transport buttons all come here). */
export function run(id) {
  const command = COMMANDS[id];
  if (!command) return;
  closeMenus();
  command();
  render();
}

function tick() {
  const now = performance.now();
  const elapsed = (now - player.lastTick) / 1000;
  player.lastTick = now;
  const s = player.state;
  const t = currentTrack();
  if (!s.playing || !t) return;
  s.position += elapsed * s.speed;
  if (s.position >= t.duration) {
    if (s.repeat === "one") {
      s.position = 0;
    } else {
      const next = neighbour(1);
      if (next) playTrack(next);
      else Object.assign(s, {position: t.duration, playing: false});
    }
    render();
  }
  renderClock();
}

function setState(given) {
  const incoming = structuredClone(given || {});
  player.cues = {};
  const library = (incoming.library || []).map((t) => {
    player.cues[t.id] = t.subtitles || {};
    const {subtitles, ...rest} = t;
    return {...rest, languages: Object.keys(t.subtitles || {})};
  });
  player.state = {...structuredClone(DEFAULTS), ...incoming, library};
  player.shuffleSeed = 7;
  player.lastTick = performance.now();
  closeDialog();
  closeMenus();
  render();
}

function getState() {
  tick(); // the position as of now, not as of the last timer tick
  const s = player.state;
  return {
    ...structuredClone(s),
    position: Math.round(s.position * 100) / 100,
    dialog: openDialogName(),
    menu_open: document.querySelector('.menu-root > [role="menu"]:not([hidden])')?.getAttribute("aria-label") || null,
  };
}

async function start() {
  const response = await fetch("ui.json" + location.search);
  if (!response.ok) throw new Error(`ui.json: HTTP ${response.status}`);
  player.spec = await response.json();
  buildMenubar(document.getElementById("menubar"), player.spec, run, {checkable: CHECKABLE});
  bindShortcuts(player.spec, run);
  for (const button of document.querySelectorAll(".transport button[data-command]")) {
    button.addEventListener("click", () => run(button.dataset.command));
  }
  document.getElementById("seek").addEventListener("input", (event) => {
    seek(Number(event.target.value));
    render();
  });
  document.getElementById("volume").addEventListener("input", (event) => {
    player.state.volume = Number(event.target.value);
    render();
  });
  const video = document.getElementById("video");
  video.addEventListener("click", () => run("play_pause"));
  video.addEventListener("dblclick", () => { player.state.fullscreen = !player.state.fullscreen; render(); });
  video.addEventListener("contextmenu", (event) => {
    event.preventDefault();
    openContextMenu(event.clientX, event.clientY, ["play_pause", "speed", "subtitle_track", "add_bookmark"], player.spec, run);
  });
  setInterval(tick, 100);
  render();
}

const ready = start();
window.raygent = {ready, getState, setState};
