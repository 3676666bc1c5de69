// Rendering: the playlist, the transport bar, the status lines, the subtitle line and the video canvas.
import {player, track, currentTrack, label, formatTime, playTrack, run} from "./app.js";
import {openContextMenu, syncMenuChecks} from "../common/menus.js";

const $ = (id) => document.getElementById(id);

function currentCue() {
  const s = player.state;
  if (!s.current || !s.subtitle) return "";
  const cues = (player.cues[s.current] || {})[s.subtitle] || [];
  const t = s.position - s.subtitle_delay;
  const cue = cues.find(([start, end]) => start <= t && t < end);
  return cue ? cue[2] : "";
}

function drawFrame() {
  const canvas = $("video");
  const g = canvas.getContext("2d");
  const t = currentTrack();
  g.fillStyle = "#000";
  g.fillRect(0, 0, canvas.width, canvas.height);
  if (!t) {
    g.fillStyle = "#555";
    g.font = "20px sans-serif";
    g.fillText("No track", 270, 185);
    return;
  }
  const p = player.state.position;
  const hue = (t.id.length * 47 + t.title.length * 13) % 360;
  if (t.kind === "video") {
    for (let i = 0; i < 8; i++) {
      g.fillStyle = `hsl(${(hue + i * 30 + p * 10) % 360}, 60%, ${30 + (i % 3) * 12}%)`;
      g.fillRect(i * 80, 0, 80, canvas.height);
    }
  } else {
    g.fillStyle = `hsl(${hue}, 70%, 55%)`;
    for (let i = 0; i < 64; i++) {
      const h = 40 + 120 * Math.abs(Math.sin(i * 0.7 + p * 2.3));
      g.fillRect(i * 10, 200 - h / 2, 6, h);
    }
  }
  g.fillStyle = "#fff";
  g.font = "18px sans-serif";
  g.fillText(`${t.title} — ${t.artist}`, 16, 340);
}

/** The fast path the clock calls: time, seek bar, subtitle and frame. */
export function renderClock() {
  const t = currentTrack();
  const s = player.state;
  const seekBar = $("seek");
  seekBar.max = String(t ? t.duration : 0);
  seekBar.value = String(Math.floor(s.position));
  const text = `${formatTime(s.position)} / ${formatTime(t ? t.duration : 0)}`;
  seekBar.setAttribute("aria-valuetext", text);
  $("clock").textContent = text;
  $("subtitle").textContent = currentCue();
  drawFrame();
}

function selectRow(id) {
  player.state.selected = id;
}

function renderPlaylist() {
  const list = $("playlist");
  const s = player.state;
  list.replaceChildren();
  s.playlist.forEach((id, index) => {
    const t = track(id);
    if (!t) return;
    const row = document.createElement("div");
    row.className = "track" + (id === s.current ? " current" : "");
    row.setAttribute("role", "option");
    row.setAttribute("aria-selected", String(id === s.selected));
    row.tabIndex = -1;
    const marker = id === s.current ? (s.playing ? "▶ " : "❚❚ ") : "";
    row.setAttribute("aria-label", `${index + 1}. ${marker}${t.title} — ${t.artist} (${formatTime(t.duration)})`);
    row.textContent = `${index + 1}. ${marker}${t.title} — ${t.artist}`;
    const duration = document.createElement("span");
    duration.textContent = formatTime(t.duration);
    row.append(duration);
    row.addEventListener("click", () => { selectRow(id); renderPlaylist(); });
    row.addEventListener("dblclick", () => { selectRow(id); playTrack(id); render(); });
    row.addEventListener("contextmenu", (event) => {
      event.preventDefault();
      event.stopPropagation();
      selectRow(id);
      renderPlaylist();
      const play = {label: "Play", action: () => { playTrack(id); render(); }};
      openContextMenu(event.clientX, event.clientY, ["remove_track", "move_up", "move_down", "track_info"], player.spec, run, [play]);
    });
    list.append(row);
  });
  if (!s.playlist.length) list.textContent = "The playlist is empty.";
}

/** Redraw everything from `player.state`. */
export function render() {
  const s = player.state;
  for (const button of document.querySelectorAll(".transport button[data-command]")) {
    button.textContent = label(button.dataset.command);
  }
  $("btn-play").setAttribute("aria-pressed", String(s.playing));
  $("btn-mute").setAttribute("aria-pressed", String(s.muted));
  $("volume").value = String(s.volume);
  $("volume").setAttribute("aria-valuetext", `${s.volume}%`);
  const t = currentTrack();
  $("now-playing").textContent = t
    ? `${s.playing ? "Playing" : "Paused"}: ${t.title} — ${t.artist}`
    : "Nothing is playing.";
  const parts = [
    `Speed ${s.speed}×`,
    `Volume ${s.volume}%${s.muted ? " (muted)" : ""}`,
    `Repeat: ${s.repeat}`,
    `Shuffle: ${s.shuffle ? "on" : "off"}`,
    `Subtitles: ${s.subtitle || "off"}${s.subtitle_delay ? ` (${s.subtitle_delay > 0 ? "+" : ""}${s.subtitle_delay} s)` : ""}`,
  ];
  $("statusbar").textContent = parts.join(" · ");
  document.body.classList.toggle("fullscreen", s.fullscreen);
  syncMenuChecks(s);
  renderPlaylist();
  renderClock();
}
