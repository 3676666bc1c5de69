// The menu bar (built from the seed's ui.json), the in-page context menu and the keyboard shortcuts.
const CHECKABLE = {shuffle: (s) => s.shuffle, mute: (s) => s.muted};
let openRoot = null;
let spec = null; // the seed's ui.json, kept by buildMenubar for the context menu

function contextMenu() {
  return document.getElementById("context-menu");
}

export function closeMenus() {
  if (openRoot) {
    openRoot.querySelector('[role="menu"]').hidden = true;
    openRoot.querySelector("button[aria-haspopup]").setAttribute("aria-expanded", "false");
    openRoot = null;
  }
  contextMenu().hidden = true;
}

function shortcutText(chord) {
  return chord.replace("Control", "Ctrl").replace("Arrow", "");
}

function menuItem(id, command, run) {
  const item = document.createElement("button");
  item.type = "button";
  item.setAttribute("role", id in CHECKABLE ? "menuitemcheckbox" : "menuitem");
  item.dataset.command = id;
  item.setAttribute("aria-label", command.label);
  const text = document.createElement("span");
  text.textContent = command.label;
  item.append(text);
  if (command.shortcut) {
    item.setAttribute("aria-keyshortcuts", command.shortcut);
    const hint = document.createElement("span");
    hint.className = "shortcut";
    hint.setAttribute("aria-hidden", "true");
    hint.textContent = shortcutText(command.shortcut);
    item.append(hint);
  }
  item.addEventListener("click", (event) => {
    event.stopPropagation();
    closeMenus();
    run(id);
  });
  return item;
}

/** Mark checkable items (shuffle, mute) with the player's state. */
export function syncMenuChecks(state) {
  for (const [id, checked] of Object.entries(CHECKABLE)) {
    for (const item of document.querySelectorAll(`[role="menuitemcheckbox"][data-command="${id}"]`)) {
      item.setAttribute("aria-checked", String(Boolean(checked(state))));
    }
  }
}

/** One `button[aria-haspopup=menu]` per menu of the spec, each opening a `role=menu` of its commands. */
export function buildMenubar(container, uiSpec, run) {
  spec = uiSpec;
  container.replaceChildren();
  for (const name of spec.menus) {
    const ids = Object.keys(spec.commands).filter((id) => spec.commands[id].menu === name);
    if (!ids.length) continue;
    const root = document.createElement("div");
    root.className = "menu-root";
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = name;
    button.setAttribute("aria-haspopup", "menu");
    button.setAttribute("aria-expanded", "false");
    const list = document.createElement("div");
    list.setAttribute("role", "menu");
    list.setAttribute("aria-label", name);
    list.hidden = true;
    for (const id of ids) list.append(menuItem(id, spec.commands[id], run));
    button.addEventListener("click", (event) => {
      event.stopPropagation();
      const wasOpen = openRoot === root;
      closeMenus();
      if (!wasOpen) {
        list.hidden = false;
        button.setAttribute("aria-expanded", "true");
        openRoot = root;
      }
    });
    root.append(button, list);
    container.append(root);
  }
  document.addEventListener("click", () => closeMenus());
}

/** Show the context menu at (x, y) with these commands (labels from the spec), plus `extra` items first. */
export function openContextMenu(x, y, ids, run, extra = []) {
  closeMenus();
  const menu = contextMenu();
  menu.replaceChildren();
  for (const {label, action} of extra) {
    const item = document.createElement("button");
    item.type = "button";
    item.setAttribute("role", "menuitem");
    item.textContent = label;
    item.addEventListener("click", (event) => {
      event.stopPropagation();
      closeMenus();
      action();
    });
    menu.append(item);
  }
  for (const id of ids) menu.append(menuItem(id, spec.commands[id], run));
  menu.style.left = `${Math.min(x, window.innerWidth - 240)}px`;
  menu.style.top = `${Math.min(y, window.innerHeight - 40 * (ids.length + extra.length))}px`;
  menu.hidden = false;
}

/** The chord of a keydown event in the spec's notation: `Control+Shift+S`, `Space`, `Alt+ArrowUp`. */
export function chordOf(event) {
  const key = event.key === " " ? "Space" : event.key.length === 1 ? event.key.toUpperCase() : event.key;
  const mods = [["Control", event.ctrlKey], ["Alt", event.altKey], ["Shift", event.shiftKey], ["Meta", event.metaKey]];
  return [...mods.filter(([, on]) => on).map(([name]) => name), key].join("+");
}

function normalizeChord(chord) {
  return chord.split("+").map((part) => (part.length === 1 ? part.toUpperCase() : part)).join("+");
}

/** Bind the spec's shortcuts; they are ignored while typing in a field or while a dialog is open. */
export function bindShortcuts(uiSpec, run) {
  const byChord = {};
  for (const [id, command] of Object.entries(uiSpec.commands)) {
    if (command.shortcut) byChord[normalizeChord(command.shortcut)] = id;
  }
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      closeMenus();
      return;
    }
    const target = event.target;
    const typing = target.closest && target.closest("input, textarea, select, [contenteditable]");
    if (typing || document.querySelector('[role="dialog"]')) return;
    const id = byChord[chordOf(event)];
    if (!id) return;
    event.preventDefault();
    run(id);
  });
}
