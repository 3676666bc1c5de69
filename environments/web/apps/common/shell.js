/* shell.js: an application shell — the menu bar built from ui.json, keyboard shortcuts, the in-page context
   menu, dialogs declared in the page's HTML (`#dialog-<name>`) and small DOM helpers. Served at
   /common/shell.js; the code editor and the word processor import it (`import {Shell} from '../common/shell.js'`). */

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

/** The UI spec of this page's seed: `{app, seed, menus, commands: {id: {label, menu, shortcut, doc}}}`. */
export async function loadSpec() {
  const response = await fetch('ui.json' + location.search);
  if (!response.ok) throw new Error(`ui.json: HTTP ${response.status}`);
  return response.json();
}

/** A chord in Playwright notation (`Control+Shift+P`) as a matcher for keydown events. */
function parseChord(chord) {
  const parts = chord.split('+');
  const key = parts.pop().toLowerCase();
  const mods = new Set(parts.map((p) => p.toLowerCase()));
  return (event) =>
    event.ctrlKey === mods.has('control') &&
    event.altKey === mods.has('alt') &&
    event.shiftKey === mods.has('shift') &&
    event.metaKey === mods.has('meta') &&
    (event.key.toLowerCase() === key || event.code.toLowerCase() === `key${key}` || event.code.toLowerCase() === `digit${key}`);
}

/** Show a chord to people: `Control+Shift+P` -> `Ctrl+Shift+P`. */
function displayChord(chord) {
  return chord.replace('Control', 'Ctrl');
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
      .map(([id, c]) => ({id, matches: parseChord(c.shortcut)}));
  }

  label(id) {
    return this.spec.commands[id].label;
  }

  /** One menu item button for a command. */
  item(id) {
    const command = this.spec.commands[id];
    const button = el('button', {type: 'button', role: 'menuitem', 'data-command': id, 'aria-label': command.label,
      title: command.doc}, el('span', {class: 'item-label', text: command.label}));
    if (command.shortcut) button.append(el('span', {class: 'shortcut', 'aria-hidden': 'true', text: displayChord(command.shortcut)}));
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
export function openDialog(dialog, values = {}) {
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
    openDialog(this.element(name), values);
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
