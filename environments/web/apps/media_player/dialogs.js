// The player's modal dialogs: in-page `role="dialog"` forms with labeled fields (never alert/prompt/confirm).
import {player, track, currentTrack, label, formatTime, parseTime, seek, playTrack} from "./app.js";
import {render} from "./view.js";

let openName = null;

export const openDialogName = () => openName;

export function closeDialog() {
  const layer = document.getElementById("dialog-layer");
  layer.replaceChildren();
  layer.hidden = true;
  openName = null;
}

function el(tag, props = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

function field(text, input) {
  return el("label", {}, [el("span", {text}), input]);
}

function button(text, onclick) {
  return el("button", {type: "button", text, onclick});
}

/** A dialog titled with the command's label; `build(body, fail)` fills it and returns the OK handler. */
function dialog(name, okText, build) {
  closeDialog();
  const layer = document.getElementById("dialog-layer");
  const title = el("h2", {id: "dialog-title", text: label(name).replace(/…$/, "")});
  const error = el("div", {class: "dialog-error", role: "alert"});
  const body = el("div", {class: "dialog-body"});
  const fail = (message) => { error.textContent = message; };
  const ok = build(body, fail);
  const buttons = el("div", {class: "dialog-buttons"});
  if (ok) {
    buttons.append(button(okText, () => {
      if (ok() !== false) {
        closeDialog();
        render();
      }
    }));
  }
  buttons.append(button(ok ? "Cancel" : "Close", () => closeDialog()));
  const box = el("div", {role: "dialog", "aria-modal": "true", "aria-labelledby": "dialog-title"},
    [title, body, error, buttons]);
  box.addEventListener("keydown", (event) => {
    if (event.key === "Escape") closeDialog();
    if (event.key === "Enter" && event.target.tagName === "INPUT" && ok) buttons.firstChild.click();
  });
  layer.append(box);
  layer.hidden = false;
  openName = name;
  const first = box.querySelector("input, select");
  if (first) first.focus();
}

const BUILDERS = {
  add_tracks: (body) => {
    const order = [];
    for (const t of player.state.library) {
      const box = el("input", {type: "checkbox"});
      box.addEventListener("change", () => {
        const at = order.indexOf(t.id);
        if (box.checked && at < 0) order.push(t.id);
        if (!box.checked && at >= 0) order.splice(at, 1);
      });
      body.append(field(`${t.title} — ${t.artist} (${formatTime(t.duration)})`, box));
    }
    body.append(el("p", {text: "Checked tracks are appended in the order you check them."}));
    return () => { player.state.playlist.push(...order); };
  },
  save_playlist: (body, fail) => {
    const name = el("input", {type: "text"});
    body.append(field("Playlist name", name));
    return () => {
      const text = name.value.trim();
      if (!text) return fail("Enter a name."), false;
      const file = text.toLowerCase().endsWith(".m3u") ? text : `${text}.m3u`;
      player.state.files[file] = [...player.state.playlist];
    };
  },
  go_to_time: (body, fail) => {
    const time = el("input", {type: "text", placeholder: "m:ss"});
    body.append(field("Time (m:ss)", time));
    return () => {
      const seconds = parseTime(time.value);
      const t = currentTrack();
      if (!t) return fail("No track is loaded."), false;
      if (Number.isNaN(seconds) || seconds > t.duration) return fail(`Enter a time from 0:00 to ${formatTime(t.duration)}.`), false;
      seek(seconds);
    };
  },
  speed: (body) => {
    const speeds = [0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2];
    const select = el("select", {}, speeds.map((v) => el("option", {value: String(v), text: `${v}×`})));
    select.value = String(player.state.speed);
    body.append(field("Speed", select));
    return () => { player.state.speed = Number(select.value); };
  },
  subtitle_track: (body) => {
    const t = currentTrack();
    if (!t) {
      body.append(el("p", {text: "No track is loaded."}));
      return null;
    }
    const group = el("div", {role: "radiogroup", "aria-label": "Subtitle language"});
    const choices = ["Off", ...t.languages];
    for (const choice of choices) {
      const radio = el("input", {type: "radio", name: "subtitle-language", value: choice});
      radio.checked = (player.state.subtitle || "Off") === choice;
      group.append(field(choice, radio));
    }
    body.append(group);
    return () => {
      const chosen = group.querySelector("input:checked");
      player.state.subtitle = !chosen || chosen.value === "Off" ? null : chosen.value;
    };
  },
  subtitle_delay: (body, fail) => {
    const delay = el("input", {type: "number", min: "-10", max: "10", step: "0.5"});
    delay.value = String(player.state.subtitle_delay);
    body.append(field("Delay in seconds", delay));
    return () => {
      const value = Number(delay.value);
      if (delay.value.trim() === "" || !Number.isFinite(value) || Math.abs(value) > 10 || Math.round(value * 2) !== value * 2) {
        return fail("Enter a delay from -10 to 10 in steps of 0.5."), false;
      }
      player.state.subtitle_delay = value;
    };
  },
  search_subtitles: (body) => {
    const query = el("input", {type: "search"});
    const results = el("div", {class: "results", role: "group", "aria-label": "Matches"});
    const search = () => {
      results.replaceChildren();
      const needle = query.value.trim().toLowerCase();
      if (!needle) return;
      for (const id of player.state.playlist) {
        for (const [language, cues] of Object.entries(player.cues[id] || {})) {
          for (const [start, , text] of cues) {
            if (!text.toLowerCase().includes(needle)) continue;
            results.append(button(`${track(id).title} · ${formatTime(start)} · ${language}: ${text}`, () => {
              playTrack(id, {position: start, play: false});
              player.state.subtitle = language;
              closeDialog();
              render();
            }));
          }
        }
      }
      if (!results.children.length) results.append(el("p", {text: "No line matches."}));
    };
    query.addEventListener("keydown", (event) => { if (event.key === "Enter") { event.stopPropagation(); search(); } });
    body.append(field("Find line", query), button("Search", search), results);
    return null;
  },
  track_info: (body) => {
    const t = track(player.state.selected || player.state.current);
    const title = el("input", {type: "text"});
    const artist = el("input", {type: "text"});
    title.value = t.title;
    artist.value = t.artist;
    body.append(field("Title", title), field("Artist", artist),
      el("p", {text: `Duration ${formatTime(t.duration)} · ${t.kind} · subtitles: ${t.languages.join(", ") || "none"}`}));
    return () => {
      if (title.value.trim()) t.title = title.value.trim();
      if (artist.value.trim()) t.artist = artist.value.trim();
    };
  },
  add_bookmark: (body, fail) => {
    const name = el("input", {type: "text"});
    body.append(field("Bookmark name", name), el("p", {text: `At ${formatTime(player.state.position)} of ${currentTrack().title}`}));
    return () => {
      if (!name.value.trim()) return fail("Enter a name."), false;
      player.state.bookmarks.push({name: name.value.trim(), track: player.state.current,
        time: Math.round(player.state.position * 10) / 10});
    };
  },
  bookmarks: (body) => {
    const list = el("div", {class: "results"});
    player.state.bookmarks.forEach((mark, index) => {
      const row = el("div", {class: "dialog-buttons"}, [
        el("span", {text: `${mark.name} — ${(track(mark.track) || {title: "?"}).title} at ${formatTime(mark.time)}`}),
        el("button", {type: "button", text: "Go", "aria-label": `Go to ${mark.name}`, onclick: () => {
          playTrack(mark.track, {position: mark.time, play: false});
          closeDialog();
          render();
        }}),
        el("button", {type: "button", text: "Delete", "aria-label": `Delete ${mark.name}`, onclick: () => {
          player.state.bookmarks.splice(index, 1);
          openDialog("bookmarks");
          render();
        }}),
      ]);
      list.append(row);
    });
    if (!player.state.bookmarks.length) list.append(el("p", {text: "No bookmarks yet."}));
    body.append(list);
    return null;
  },
};

const OK_TEXT = {add_tracks: "Add", save_playlist: "Save", go_to_time: "Go", add_bookmark: "Save", track_info: "Save"};

export function openDialog(name) {
  dialog(name, OK_TEXT[name] || "Apply", BUILDERS[name]);
}
