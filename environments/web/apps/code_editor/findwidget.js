/* findwidget.js: the editor's find/replace widget (a panel over the editor, as in VS Code). Next/previous
   select the match in the editor; Replace replaces the selected match; Replace all replaces every match. */

import {findAll, replaceAll} from './editing.js';

export class FindWidget {
  constructor(workspace, onChange) {
    this.workspace = workspace;
    this.onChange = onChange;
    const $ = (id) => document.getElementById(id);
    Object.assign(this, {
      panel: $('find-widget'), query: $('find-input'), replacement: $('replace-input'), matchCase: $('find-case'),
      wholeWord: $('find-word'), count: $('find-count'), replaceRow: $('replace-row'),
    });
    this.message = '';
    const edited = () => {
      this.message = '';
      this.refresh();
    };
    this.query.addEventListener('input', edited);
    for (const box of [this.matchCase, this.wholeWord]) box.addEventListener('change', edited);
    this.query.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        this.step(e.shiftKey ? -1 : 1);
      }
    });
    this.replacement.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        this.replaceOne();
      }
    });
    for (const input of [this.query, this.replacement]) {
      input.addEventListener('keydown', (e) => {
        if (e.key === 'Escape') {
          e.preventDefault();
          this.close();
        }
      });
    }
    $('find-next').addEventListener('click', () => this.step(1));
    $('find-prev').addEventListener('click', () => this.step(-1));
    $('find-close').addEventListener('click', () => this.close());
    $('replace-one').addEventListener('click', () => this.replaceOne());
    $('replace-all').addEventListener('click', () => this.replaceEvery());
  }

  options() {
    return {matchCase: this.matchCase.checked, wholeWord: this.wholeWord.checked};
  }

  matches() {
    const path = this.workspace.active;
    return path === null ? [] : findAll(this.workspace.editor.value, this.query.value, this.options());
  }

  /** Open the widget (with the replace row for `withReplace`), seeded with the editor's selected text. */
  open(withReplace) {
    const editor = this.workspace.editor;
    const selected = editor.value.slice(editor.selectionStart, editor.selectionEnd);
    if (selected && !selected.includes('\n')) this.query.value = selected;
    this.replaceRow.hidden = !withReplace;
    this.panel.hidden = false;
    this.message = '';
    (withReplace && this.query.value ? this.replacement : this.query).focus();
    this.query.select();
    this.refresh();
  }

  close() {
    this.panel.hidden = true;
    if (this.workspace.active !== null) this.workspace.editor.focus();
    this.onChange();
  }

  /** Index of the match the editor's selection sits on, or -1. */
  current(matches) {
    const {selectionStart: s, selectionEnd: e} = this.workspace.editor;
    return matches.findIndex(([a, b]) => a === s && b === e);
  }

  refresh() {
    const matches = this.matches();
    const k = this.current(matches);
    if (this.message) this.count.textContent = this.message;
    else if (!this.query.value || !matches.length) this.count.textContent = 'No results';
    else this.count.textContent = `${k < 0 ? '?' : k + 1} of ${matches.length}`;
    this.onChange();
  }

  step(direction) {
    this.message = '';
    const matches = this.matches();
    if (!matches.length) return this.refresh();
    const {selectionStart: s, selectionEnd: e} = this.workspace.editor;
    let index;
    if (direction > 0) {
      index = matches.findIndex(([a]) => a >= e);
      if (index < 0) index = 0;
    } else {
      index = matches.map(([a]) => a < s).lastIndexOf(true);
      if (index < 0) index = matches.length - 1;
    }
    this.workspace.select(...matches[index]);
    return this.refresh();
  }

  replaceOne() {
    const matches = this.matches();
    const k = this.current(matches);
    if (k < 0) return this.step(1);
    const [a, b] = matches[k];
    const text = this.workspace.editor.value;
    const next = text.slice(0, a) + this.replacement.value + text.slice(b);
    const caret = a + this.replacement.value.length;
    this.workspace.replaceText(next, caret, caret);
    return this.step(1);
  }

  replaceEvery() {
    if (this.workspace.active === null || !this.query.value) return;
    const result = replaceAll(this.workspace.editor.value, this.query.value, this.replacement.value, this.options());
    if (result.count) this.workspace.replaceText(result.text, 0, 0);
    this.message = `Replaced ${result.count} occurrence${result.count === 1 ? '' : 's'}`;
    this.refresh();
  }

  state() {
    return {open: !this.panel.hidden, replaceOpen: !this.panel.hidden && !this.replaceRow.hidden, query: this.query.value,
      replacement: this.replacement.value, matchCase: this.matchCase.checked, wholeWord: this.wholeWord.checked,
      matches: this.matches().length};
  }

  reset() {
    this.panel.hidden = true;
    this.query.value = '';
    this.replacement.value = '';
    this.matchCase.checked = false;
    this.wholeWord.checked = false;
    this.message = '';
  }
}
