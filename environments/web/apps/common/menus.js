// The suite's menu kit: the menu bar built from the seed's ui.json, keyboard shortcuts, the in-page context menu
// and modal dialogs, for every app (served at /common/menus.js). Two fronts over one chord matcher, one shortcut
// text and one `loadSpec`:
// - functions (the image editor, the slide editor, the media player): `buildMenubar` (items may be checkable,
//   `syncMenuChecks`), `bindShortcuts`, `openContextMenu` (spec commands, optionally after ad-hoc items) and
//   `openDialog`, a modal built from a field list;
// - `Shell` and `Dialogs` (the code editor, the word processor: text editors, whose menus keep the editor's focus
//   and selection, and whose dialogs are declared in the page's HTML, `#dialog-<name>`), with `el`.

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

/** A chord in Playwright notation (`Control+Shift+P`, `Space`, `Alt+ArrowUp`) as a matcher for keydown events:
 * the modifiers exactly, the key by `event.key` (any case) or by `event.code` (`KeyP`, `Digit1`). */
function chordMatcher(chord) {
  const parts = chord.split('+');
  const last = parts.pop();
  const key = last === 'Space' ? ' ' : last.toLowerCase();
  const mods = new Set(parts.map((part) => part.toLowerCase()));
  return (event) =>
    event.ctrlKey === mods.has('control') && event.altKey === mods.has('alt')
    && event.shiftKey === mods.has('shift') && event.metaKey === mods.has('meta')
    && (event.key.toLowerCase() === key || event.code.toLowerCase() === `key${key}`
      || event.code.toLowerCase() === `digit${key}`);
}

function isTextTarget(element) {
  if (!element) return false;
  const tag = element.tagName;
  return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || element.isContentEditable;
}

/** Whether one of the page's own `role=dialog`s is shown (a hidden one, such as a slide show's overlay, is not). */
function dialogShown() {
  return [...document.querySelectorAll('[role="dialog"]')].some((dialog) => !dialog.closest('[hidden]'));
}

/** Bind the spec's shortcuts. Plain keys (no Control/Alt/F-key) are left to text fields that have focus;
 * nothing fires while a dialog is open (this kit's or one of the page's own `role=dialog`s). */
export function bindShortcuts(spec, run) {
  const matchers = Object.fromEntries(
    Object.entries(spec.commands).filter(([, c]) => c.shortcut).map(([id, c]) => [id, chordMatcher(c.shortcut)]));
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      if (dialogState.close) { event.preventDefault(); dialogState.close(null); return; }
      if (openRoot || contextMenu) { closeMenus(); closeContextMenu(); return; }
    }
    if (dialogState.close || dialogShown()) return;
    for (const [id, matches] of Object.entries(matchers)) {
      if (!matches(event)) continue;
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

// ---- the Shell front: a class per app, dialogs declared in the page's HTML --------------------------------------

/** Create an element with attributes and children (strings become text). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) node.append(child);
  return node;
}

/**
 * The menu bar, shortcuts and context menu of one app.
 * `run(commandId, origin)` executes a command; origin is 'menu', 'shortcut' or 'context'.
 */
export class Shell {
  constructor(spec, run) {
    this.spec = spec;
    this.run = run;
    this.openMenu = null;
    this.contextMenu = null;
    this.shortcuts = Object.entries(spec.commands)
      .filter(([, c]) => c.shortcut)
      .map(([id, c]) => ({id, matches: chordMatcher(c.shortcut)}));
  }

  label(id) {
    return this.spec.commands[id].label;
  }

  /** One menu item button for a command. */
  item(id) {
    const command = this.spec.commands[id];
    const button = el('button', {type: 'button', role: 'menuitem', 'data-command': id, 'aria-label': command.label,
      title: command.doc}, el('span', {class: 'item-label', text: command.label}));
    if (command.shortcut) button.append(el('span', {class: 'shortcut', 'aria-hidden': 'true', text: shortcutText(command.shortcut)}));
    button.addEventListener('mousedown', (e) => e.preventDefault());
    return button;
  }

  /** Fill `bar` with one `aria-haspopup` button per menu, each opening a `role="menu"` list. */
  buildMenuBar(bar) {
    bar.replaceChildren();
    for (const menu of this.spec.menus) {
      const ids = Object.keys(this.spec.commands).filter((id) => this.spec.commands[id].menu === menu);
      if (!ids.length) continue;
      const button = el('button', {type: 'button', class: 'menu-button', 'aria-haspopup': 'menu', 'aria-expanded': 'false',
        text: menu});
      const list = el('div', {role: 'menu', class: 'menu-list', 'aria-label': menu, hidden: true}, ...ids.map((id) => this.item(id)));
      list.addEventListener('click', (e) => {
        const target = e.target.closest('[data-command]');
        if (!target) return;
        this.closeMenus();
        this.run(target.dataset.command, 'menu');
      });
      button.addEventListener('mousedown', (e) => e.preventDefault());
      button.addEventListener('click', () => (this.openMenu && this.openMenu.list === list ? this.closeMenus() : this.showMenu(button, list)));
      button.addEventListener('mouseenter', () => this.openMenu && this.openMenu.list !== list && this.showMenu(button, list));
      bar.append(el('div', {class: 'menu'}, button, list));
    }
    document.addEventListener('mousedown', (e) => {
      if (this.openMenu && !e.target.closest('.menu')) this.closeMenus();
      if (this.contextMenu && !this.contextMenu.contains(e.target)) this.closeContextMenu();
    });
    document.addEventListener('keydown', (e) => this.onKey(e), true);
  }

  showMenu(button, list) {
    this.closeMenus();
    this.closeContextMenu();
    list.hidden = false;
    button.setAttribute('aria-expanded', 'true');
    this.openMenu = {button, list};
  }

  closeMenus() {
    if (!this.openMenu) return;
    this.openMenu.list.hidden = true;
    this.openMenu.button.setAttribute('aria-expanded', 'false');
    this.openMenu = null;
  }

  /** A context menu at page coordinates with these commands; `null` entries become separators. */
  showContextMenu(x, y, ids) {
    this.closeMenus();
    this.closeContextMenu();
    const menu = el('div', {role: 'menu', class: 'menu-list context-menu', 'aria-label': 'Context menu'});
    for (const id of ids) {
      if (id === null) menu.append(el('div', {role: 'separator', class: 'separator'}));
      else if (this.spec.commands[id]) menu.append(this.item(id));
    }
    menu.addEventListener('click', (e) => {
      const target = e.target.closest('[data-command]');
      if (!target) return;
      this.closeContextMenu();
      this.run(target.dataset.command, 'context');
    });
    document.body.append(menu);
    const width = menu.offsetWidth;
    const height = menu.offsetHeight;
    menu.style.left = `${Math.max(0, Math.min(x, window.innerWidth - width - 4))}px`;
    menu.style.top = `${Math.max(0, Math.min(y, window.innerHeight - height - 4))}px`;
    this.contextMenu = menu;
  }

  closeContextMenu() {
    if (!this.contextMenu) return;
    this.contextMenu.remove();
    this.contextMenu = null;
  }

  /** Escape closes popups first; a chord from the spec runs its command, except the text-editing chords
      (select all, undo, clipboard) typed in a dialog's field, which act on the field. */
  onKey(event) {
    const inField = event.target instanceof Element && event.target.matches('input, select');
    if (inField && event.ctrlKey && !event.altKey && /^[acvxyz]$/i.test(event.key)) return;
    if (event.key === 'Escape' && (this.openMenu || this.contextMenu)) {
      this.closeMenus();
      this.closeContextMenu();
      event.preventDefault();
      event.stopPropagation();
      return;
    }
    for (const {id, matches} of this.shortcuts) {
      if (matches(event)) {
        event.preventDefault();
        event.stopPropagation();
        this.closeMenus();
        this.closeContextMenu();
        this.run(id, 'shortcut');
        return;
      }
    }
  }

  /** Every command (for a command palette): `[{id, label, menu}]` in spec order. */
  commandList() {
    return Object.entries(this.spec.commands).map(([id, c]) => ({id, label: c.label, menu: c.menu}));
  }
}

/** Show a dialog element and focus its first field; `values` pre-fills named fields. */
export function showDialog(dialog, values = {}) {
  for (const [name, value] of Object.entries(values)) {
    const field = dialog.querySelector(`[name="${name}"]`);
    if (!field) continue;
    if (field.type === 'checkbox') field.checked = Boolean(value);
    else field.value = String(value);
  }
  for (const message of dialog.querySelectorAll('.dialog-error')) message.textContent = '';
  dialog.hidden = false;
  const first = dialog.querySelector('input:not([type=hidden]), select, textarea, button');
  if (first) {
    first.focus();
    if (first.select) first.select();
  }
}

/** The named fields of a dialog as a plain object (checkboxes as booleans, radios as the checked value). */
export function dialogValues(dialog) {
  const values = {};
  for (const field of dialog.querySelectorAll('[name]')) {
    if (field.type === 'checkbox') values[field.name] = field.checked;
    else if (field.type === 'radio') {
      if (field.checked) values[field.name] = field.value;
    } else values[field.name] = field.value;
  }
  return values;
}

/** The app's modal dialogs: each an in-page `role="dialog"` element `#dialog-<name>` whose OK button (or Enter in
    a text field) calls its handler; a handler returns an error message to keep the dialog open. */
export class Dialogs {
  /** `handlers`: name -> (values, context) => '' | error message; `onClose` runs after a dialog closes (to give
      the focus back to the document). */
  constructor(handlers, onChange, onClose = () => {}) {
    this.handlers = handlers;
    this.onChange = onChange;
    this.onClose = onClose;
    this.current = null;
    this.context = null;
    for (const name of Object.keys(handlers)) {
      const dialog = this.element(name);
      dialog.addEventListener('click', (e) => {
        const action = e.target.closest('[data-action]')?.dataset.action;
        if (action === 'ok') this.submit();
        else if (action === 'cancel') this.close();
      });
      dialog.addEventListener('keydown', (e) => {
        if (e.key === 'Escape') {
          e.preventDefault();
          this.close();
        } else if (e.key === 'Enter' && e.target.tagName === 'INPUT' && e.target.type !== 'checkbox') {
          e.preventDefault();
          this.submit();
        }
      });
    }
  }

  element(name) {
    return document.getElementById(`dialog-${name}`);
  }

  open(name, values = {}, context = null) {
    if (this.current) this.element(this.current).hidden = true;
    this.current = name;
    this.context = context;
    showDialog(this.element(name), values);
    this.onChange();
  }

  submit() {
    if (!this.current) return;
    const dialog = this.element(this.current);
    const error = this.handlers[this.current](dialogValues(dialog), this.context);
    if (error) {
      const message = dialog.querySelector('.dialog-error');
      if (message) message.textContent = error;
      this.onChange();
      return;
    }
    this.close();
  }

  close() {
    if (!this.current) return;
    this.element(this.current).hidden = true;
    this.current = null;
    this.context = null;
    this.onClose();
    this.onChange();
  }
}
