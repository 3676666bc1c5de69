// The suite's menu kit, functions over the seed's ui.json: the menu bar (items may be checkable, `syncMenuChecks`),
// keyboard shortcuts, an in-page context menu (spec commands, optionally after ad-hoc items) and modal dialogs built
// from field lists. Served at /common/menus.js; the image editor, the slide editor and the media player import it.

/** Fetch the seed's UI spec (`ui.json?seed=N`, same query string as the page). */
export async function loadSpec() {
  const response = await fetch('ui.json' + location.search);
  if (!response.ok) throw new Error('ui.json: HTTP ' + response.status);
  return response.json();
}

let openRoot = null;
let hovered = null; // the menu a hover opened, which the click that follows keeps open
let checkable = {}; // command id -> (state) => checked, for `menuitemcheckbox` items

/** Close the open menu of the bar and the context menu. */
export function closeMenus() {
  closeContextMenu();
  if (!openRoot) return;
  openRoot.querySelector('[role="menu"]').hidden = true;
  openRoot.querySelector('button[aria-haspopup]').setAttribute('aria-expanded', 'false');
  openRoot = null;
}

function openMenu(root) {
  closeMenus();
  closeContextMenu();
  root.querySelector('[role="menu"]').hidden = false;
  root.querySelector('button[aria-haspopup]').setAttribute('aria-expanded', 'true');
  openRoot = root;
}

function shortcutText(chord) {
  return chord.replace('Control', 'Ctrl').replace('Arrow', '').replace(/\+([a-z])$/, (m, k) => '+' + k.toUpperCase());
}

function menuItem(id, command, run) {
  const item = document.createElement('button');
  item.type = 'button';
  item.setAttribute('role', id in checkable ? 'menuitemcheckbox' : 'menuitem');
  item.dataset.command = id;
  item.setAttribute('aria-label', command.label);
  const label = document.createElement('span');
  label.textContent = command.label;
  item.append(label);
  if (command.shortcut) {
    item.setAttribute('aria-keyshortcuts', command.shortcut);
    const hint = document.createElement('span');
    hint.className = 'shortcut';
    hint.setAttribute('aria-hidden', 'true');
    hint.textContent = shortcutText(command.shortcut);
    item.append(hint);
  }
  item.addEventListener('click', (event) => {
    event.stopPropagation();
    closeMenus();
    closeContextMenu();
    run(id);
  });
  return item;
}

/** One `button[aria-haspopup=menu]` per menu, each opening a `role=menu` of `role=menuitem` buttons;
 * `checkable` (command id -> (state) => checked) makes those commands' items `menuitemcheckbox`es. */
export function buildMenubar(container, spec, run, { checkable: checks = {} } = {}) {
  checkable = checks;
  container.setAttribute('role', 'menubar');
  container.replaceChildren();
  for (const menuName of spec.menus) {
    const ids = Object.keys(spec.commands).filter((id) => spec.commands[id].menu === menuName);
    if (!ids.length) continue;
    const root = document.createElement('div');
    root.className = 'menu-root';
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = menuName;
    button.setAttribute('aria-haspopup', 'menu');
    button.setAttribute('aria-expanded', 'false');
    const list = document.createElement('div');
    list.setAttribute('role', 'menu');
    list.setAttribute('aria-label', menuName);
    list.hidden = true;
    for (const id of ids) list.append(menuItem(id, spec.commands[id], run));
    button.addEventListener('click', (event) => {
      event.stopPropagation();
      if (hovered === root) hovered = null;
      else if (openRoot === root) closeMenus();
      else openMenu(root);
    });
    button.addEventListener('mouseenter', () => {
      if (openRoot && openRoot !== root) { openMenu(root); hovered = root; }
    });
    button.addEventListener('mouseleave', () => { if (hovered === root) hovered = null; });
    root.append(button, list);
    container.append(root);
  }
  document.addEventListener('click', () => { closeMenus(); closeContextMenu(); });
}

/** Mark the checkable items (of the bar and the context menu) with the app's state. */
export function syncMenuChecks(state) {
  for (const [id, checked] of Object.entries(checkable)) {
    for (const item of document.querySelectorAll(`[role="menuitemcheckbox"][data-command="${id}"]`)) {
      item.setAttribute('aria-checked', String(Boolean(checked(state))));
    }
  }
}

// ---- keyboard shortcuts -------------------------------------------------------------------------------------

function parseChord(chord) {
  const parts = chord.split('+');
  const key = parts.pop();
  return { key: key === 'Space' ? ' ' : key.toLowerCase(), mods: new Set(parts) };
}

function eventMatches(event, chord) {
  const { key, mods } = parseChord(chord);
  const pressed = event.key.length === 1 ? event.key.toLowerCase() : event.key.toLowerCase();
  return pressed === key && event.ctrlKey === mods.has('Control') && event.altKey === mods.has('Alt')
    && event.shiftKey === mods.has('Shift') && event.metaKey === mods.has('Meta');
}

function isTextTarget(element) {
  if (!element) return false;
  const tag = element.tagName;
  return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || element.isContentEditable;
}

/** Bind the spec's shortcuts. Plain keys (no Control/Alt/F-key) are left to text fields that have focus;
 * nothing fires while a dialog is open (this kit's or one of the page's own `role=dialog`s). */
export function bindShortcuts(spec, run) {
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      if (dialogState.close) { event.preventDefault(); dialogState.close(null); return; }
      if (openRoot || contextMenu) { closeMenus(); closeContextMenu(); return; }
    }
    if (dialogState.close || document.querySelector('[role="dialog"]')) return;
    for (const [id, command] of Object.entries(spec.commands)) {
      if (!command.shortcut || !eventMatches(event, command.shortcut)) continue;
      const plain = !event.ctrlKey && !event.altKey && !event.metaKey && !/^F\d+$/.test(event.key);
      if (plain && isTextTarget(document.activeElement)) return;
      event.preventDefault();
      closeMenus();
      closeContextMenu();
      run(id);
      return;
    }
  });
}

// ---- context menu -------------------------------------------------------------------------------------------

let contextMenu = null;

export function closeContextMenu() {
  if (contextMenu) contextMenu.remove();
  contextMenu = null;
}

/** Show a context menu of spec commands at viewport point (x, y), after the `extra` items (`{label, action}`:
 * ones that are no command of the spec). */
export function openContextMenu(x, y, ids, spec, run, extra = []) {
  closeMenus();
  closeContextMenu();
  const menu = document.createElement('div');
  menu.setAttribute('role', 'menu');
  menu.setAttribute('aria-label', 'Context menu');
  menu.className = 'context-menu';
  for (const { label, action } of extra) {
    menu.append(menuItem(label, { label }, () => action()));
    delete menu.lastChild.dataset.command;
  }
  for (const id of ids) if (spec.commands[id]) menu.append(menuItem(id, spec.commands[id], run));
  const rows = ids.length + extra.length;
  menu.style.left = Math.min(x, innerWidth - 220) + 'px';
  menu.style.top = Math.min(y, innerHeight - 30 * rows - 10) + 'px';
  document.body.append(menu);
  contextMenu = menu;
}

// ---- text fields select their content on focus, so typing replaces it ----------------------------------------

export function selectOnFocus(input) {
  let justFocused = false;
  input.addEventListener('focus', () => { input.select?.(); justFocused = true; });
  input.addEventListener('mouseup', (event) => { if (justFocused) event.preventDefault(); justFocused = false; });
}

// ---- modal dialogs ------------------------------------------------------------------------------------------

const dialogState = { title: null, close: null };

/** The title of the open dialog, or null. */
export function openDialogTitle() {
  return dialogState.title;
}

function fieldElement(field, id) {
  let input;
  if (field.type === 'select') {
    input = document.createElement('select');
    for (const option of field.options) {
      const element = document.createElement('option');
      element.value = option;
      element.textContent = option;
      input.append(element);
    }
    input.value = String(field.value ?? field.options[0]);
  } else {
    input = document.createElement('input');
    input.type = field.type || 'text';
    if (input.type === 'checkbox') input.checked = Boolean(field.value);
    else input.value = String(field.value ?? '');
    if (field.min !== undefined) input.min = String(field.min);
    if (field.max !== undefined) input.max = String(field.max);
    if (input.type !== 'checkbox') selectOnFocus(input);
  }
  input.id = id;
  input.name = field.name;
  return input;
}

function readField(field, input) {
  if (field.type === 'checkbox') return input.checked;
  if (field.type === 'number') {
    const value = Number(input.value);
    if (input.value.trim() === '' || !Number.isFinite(value)) throw new Error(field.label + ' must be a number');
    if (field.min !== undefined && value < field.min) throw new Error(`${field.label} must be at least ${field.min}`);
    if (field.max !== undefined && value > field.max) throw new Error(`${field.label} must be at most ${field.max}`);
    return value;
  }
  return input.value;
}

/**
 * Open a modal `role=dialog` with labeled fields and OK/Cancel; resolves to {name: value} or null (cancelled).
 * `validate(values)` may return an error message that keeps the dialog open. `extra(form, inputs)` may add
 * widgets (e.g. color swatches).
 */
export function openDialog({ title, fields, okLabel = 'OK', validate, extra }) {
  if (dialogState.close) dialogState.close(null);
  closeMenus();
  closeContextMenu();
  return new Promise((resolve) => {
    const overlay = document.createElement('div');
    overlay.className = 'dialog-overlay';
    const dialog = document.createElement('div');
    dialog.setAttribute('role', 'dialog');
    dialog.setAttribute('aria-modal', 'true');
    dialog.setAttribute('aria-labelledby', 'dialog-title');
    const heading = document.createElement('h2');
    heading.id = 'dialog-title';
    heading.textContent = title;
    const form = document.createElement('form');
    const inputs = {};
    fields.forEach((field, index) => {
      const row = document.createElement('div');
      row.className = 'field';
      const label = document.createElement('label');
      const input = fieldElement(field, 'dialog-field-' + index);
      label.htmlFor = input.id;
      label.textContent = field.label;
      if (field.type === 'checkbox') row.append(input, label); else row.append(label, input);
      form.append(row);
      inputs[field.name] = input;
    });
    if (extra) extra(form, inputs);
    const error = document.createElement('p');
    error.className = 'dialog-error';
    error.setAttribute('role', 'alert');
    const buttons = document.createElement('div');
    buttons.className = 'dialog-buttons';
    const ok = document.createElement('button');
    ok.type = 'submit';
    ok.textContent = okLabel;
    const cancel = document.createElement('button');
    cancel.type = 'button';
    cancel.textContent = 'Cancel';
    buttons.append(cancel, ok);
    form.append(error, buttons);
    dialog.append(heading, form);
    overlay.append(dialog);
    document.body.append(overlay);
    overlay.addEventListener('click', (event) => event.stopPropagation());
    overlay.addEventListener('contextmenu', (event) => { event.preventDefault(); event.stopPropagation(); });

    const close = (result) => {
      overlay.remove();
      dialogState.title = null;
      dialogState.close = null;
      resolve(result);
    };
    dialogState.title = title;
    dialogState.close = close;
    cancel.addEventListener('click', () => close(null));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      try {
        const values = {};
        for (const field of fields) values[field.name] = readField(field, inputs[field.name]);
        const message = validate ? validate(values) : null;
        if (message) throw new Error(message);
        close(values);
      } catch (problem) {
        error.textContent = problem.message;
      }
    });
    const first = form.querySelector('input:not([type=checkbox]), select');
    if (first) first.focus();
  });
}
