/* workspace.js: the code editor's files, open tabs and the editor surface.

   `files` is the virtual file system (what Save writes); `buffers` holds the editor text of every file opened
   in this episode, saved or not, so closing a tab keeps unsaved edits (like VS Code's hot exit). */

import {el} from '../common/menus.js';

const NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*(\/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*$/;

/** Why a file name is not acceptable, or '' when it is. */
export function nameProblem(name, files, except = null) {
  if (!name) return 'A file name is required.';
  if (!NAME.test(name)) return 'Use letters, digits, "_", "-", "." and "/" only.';
  if (name in files && name !== except) return `A file named ${name} already exists.`;
  return '';
}

export class Workspace {
  constructor({fileList, tabs, editor, gutter, wrap, empty, onChange, onContextMenu}) {
    Object.assign(this, {fileList, tabsEl: tabs, editor, gutter, wrap, empty, onChange, onContextMenu});
    this.reset({});
    editor.addEventListener('input', () => {
      if (this.active !== null) this.buffers[this.active] = editor.value;
      this.renderTabs();
      this.renderGutter();
      this.onChange();
    });
    editor.addEventListener('scroll', () => (gutter.scrollTop = editor.scrollTop));
    for (const type of ['keyup', 'mouseup', 'select', 'focus']) editor.addEventListener(type, () => this.onChange());
  }

  /** Replace everything: `files` saved, `tabs` opened in order, `active` shown. */
  reset(files, tabs = [], active = null) {
    this.files = {...files};
    this.buffers = {};
    this.tabs = [];
    this.active = null;
    this.cursors = {};
    for (const path of tabs) if (path in this.files) this.open(path);
    if (active !== null && active in this.files) this.open(active);
    this.render();
  }

  text(path) {
    return path in this.buffers ? this.buffers[path] : this.files[path];
  }

  isDirty(path) {
    return path in this.buffers && path in this.files && this.buffers[path] !== this.files[path];
  }

  /** Remember the active tab's text and selection before switching away. */
  stash() {
    if (this.active === null) return;
    this.buffers[this.active] = this.editor.value;
    this.cursors[this.active] = [this.editor.selectionStart, this.editor.selectionEnd, this.editor.scrollTop];
  }

  open(path) {
    if (!(path in this.files)) return;
    this.stash();
    if (!(path in this.buffers)) this.buffers[path] = this.files[path];
    if (!this.tabs.includes(path)) this.tabs.push(path);
    this.active = path;
    this.editor.value = this.buffers[path];
    const [start, end, scroll] = this.cursors[path] || [0, 0, 0];
    this.editor.setSelectionRange(start, end);
    this.editor.scrollTop = scroll;
    this.render();
  }

  close(path) {
    const index = this.tabs.indexOf(path);
    if (index < 0) return;
    this.stash();
    this.tabs.splice(index, 1);
    if (this.active === path) {
      this.active = null;
      const next = this.tabs[Math.min(index, this.tabs.length - 1)];
      if (next !== undefined) this.open(next);
    }
    this.render();
  }

  save(path) {
    this.stash();
    if (path === null || !(path in this.files)) return false;
    this.files[path] = this.text(path);
    this.render();
    return true;
  }

  saveAll() {
    this.stash();
    const saved = Object.keys(this.buffers).filter((p) => this.isDirty(p));
    for (const path of saved) this.files[path] = this.buffers[path];
    this.render();
    return saved;
  }

  create(path) {
    this.files[path] = '';
    this.open(path);
  }

  rename(from, to) {
    this.stash();
    const remap = (obj) => {
      if (from in obj) {
        obj[to] = obj[from];
        delete obj[from];
      }
    };
    remap(this.files);
    remap(this.buffers);
    remap(this.cursors);
    this.tabs = this.tabs.map((p) => (p === from ? to : p));
    if (this.active === from) this.active = to;
    this.render();
  }

  remove(path) {
    this.close(path);
    delete this.files[path];
    delete this.buffers[path];
    delete this.cursors[path];
    this.render();
  }

  /** Put new text in the active editor through the browser's editing so Undo works; then select [start, end]. */
  replaceText(text, start, end) {
    if (this.active === null) return;
    const previous = document.activeElement;
    this.editor.focus();
    this.editor.select();
    const ok = text ? document.execCommand('insertText', false, text) : document.execCommand('delete');
    if (!ok || this.editor.value !== text) this.editor.value = text;
    this.editor.setSelectionRange(start, end);
    this.buffers[this.active] = this.editor.value;
    if (previous && previous !== this.editor && previous !== document.body && previous.isConnected) previous.focus();
    this.render();
    this.onChange();
  }

  /** Select a range in the active editor and scroll it into view (focus stays where it is unless `focus`). */
  select(start, end, focus = false) {
    if (focus) this.editor.focus();
    this.editor.setSelectionRange(start, end);
    const line = this.editor.value.slice(0, start).split('\n').length - 1;
    const lineHeight = parseFloat(getComputedStyle(this.editor).lineHeight) || 20;
    const top = line * lineHeight;
    if (top < this.editor.scrollTop || top > this.editor.scrollTop + this.editor.clientHeight - 2 * lineHeight) {
      this.editor.scrollTop = Math.max(0, top - this.editor.clientHeight / 3);
    }
    this.gutter.scrollTop = this.editor.scrollTop;
    this.onChange();
  }

  render() {
    this.renderFiles();
    this.renderTabs();
    const open = this.active !== null;
    this.wrap.hidden = !open;
    this.empty.hidden = open;
    if (!open) this.editor.value = '';
    this.renderGutter();
  }

  renderFiles() {
    const paths = Object.keys(this.files).sort((a, b) => {
      const [da, db] = [a.includes('/'), b.includes('/')];
      return da !== db ? (da ? -1 : 1) : a < b ? -1 : a > b ? 1 : 0;
    });
    const items = [];
    let folder = null;
    for (const path of paths) {
      const slash = path.lastIndexOf('/');
      const dir = slash < 0 ? null : path.slice(0, slash);
      if (dir !== null && dir !== folder) items.push(el('li', {class: 'folder', text: `▾ ${dir}`}));
      folder = dir;
      const button = el('button', {type: 'button', class: `file${dir ? ' nested' : ''}${path === this.active ? ' active' : ''}`,
        'aria-label': path, 'aria-current': path === this.active ? 'true' : false, text: path.slice(slash + 1)});
      button.addEventListener('click', () => this.open(path));
      button.addEventListener('contextmenu', (e) => {
        e.preventDefault();
        this.onContextMenu('file', path, e.clientX, e.clientY);
      });
      items.push(el('li', {}, button));
    }
    this.fileList.replaceChildren(...items);
  }

  renderTabs() {
    this.tabsEl.replaceChildren(...this.tabs.map((path) => {
      const active = path === this.active;
      const tab = el('button', {type: 'button', role: 'tab', 'aria-selected': String(active), 'aria-label': path,
        text: path.slice(path.lastIndexOf('/') + 1)});
      tab.addEventListener('click', () => this.open(path));
      tab.addEventListener('contextmenu', (e) => {
        e.preventDefault();
        this.open(path);
        this.onContextMenu('tab', path, e.clientX, e.clientY);
      });
      const close = el('button', {type: 'button', class: 'tab-close', 'aria-label': `Close ${path}`, text: '✕'});
      close.addEventListener('click', () => {
        this.close(path);
        this.onChange();
      });
      const dot = el('span', {class: 'dirty-dot', 'aria-hidden': 'true', text: this.isDirty(path) ? '●' : ''});
      return el('div', {class: `tab-wrap${active ? ' active' : ''}`}, tab, dot, close);
    }));
  }

  renderGutter() {
    const count = this.editor.value.split('\n').length;
    this.gutter.textContent = Array.from({length: count}, (_, k) => k + 1).join('\n');
    this.gutter.scrollTop = this.editor.scrollTop;
  }
}
