/* findreplace.js: the non-modal Find & Replace dialog. A match never crosses a paragraph or cell. Find Next
   makes the next match the document's remembered selection (highlighted; focus stays in the dialog), so a
   formatting command applied next acts on it. Replacing edits text nodes in place, keeping formatting. */

import {textBlocks} from './docmodel.js';

function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Replace a range's text within its text nodes (start and end must be text nodes). */
function replaceText(range, text) {
  const {startContainer: start, startOffset: so, endContainer: end, endOffset: eo} = range;
  if (start === end) {
    start.replaceData(so, eo - so, text);
    return [start, so + text.length];
  }
  const walker = document.createTreeWalker(range.commonAncestorContainer, NodeFilter.SHOW_TEXT);
  const middle = [];
  let inside = false;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node === end) break;
    if (inside) middle.push(node);
    if (node === start) inside = true;
  }
  start.replaceData(so, start.data.length - so, text);
  for (const node of middle) node.data = '';
  end.deleteData(0, eo);
  return [start, so + text.length];
}

export class FindReplace {
  constructor(editor, selection, {onChange, onEdit}) {
    Object.assign(this, {editor, selection, onChange, onEdit});
    const $ = (id) => document.getElementById(id);
    Object.assign(this, {dialog: $('dialog-find'), query: $('find-text'), replacement: $('replace-text'),
      matchCase: $('find-case'), wholeWords: $('find-words'), status: $('find-status')});
    $('find-next').addEventListener('click', () => this.next());
    $('replace-one').addEventListener('click', () => this.replaceOne());
    $('replace-all').addEventListener('click', () => this.replaceAll());
    $('find-close').addEventListener('click', () => this.close());
    this.dialog.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        this.close();
      } else if (e.key === 'Enter' && e.target.tagName === 'INPUT' && e.target.type === 'text') {
        e.preventDefault();
        if (e.target === this.replacement) this.replaceOne();
        else this.next();
      }
    });
    for (const input of [this.query, this.matchCase, this.wholeWords]) input.addEventListener('input', () => this.say(''));
  }

  get open() {
    return !this.dialog.hidden;
  }

  show() {
    const selected = this.selection.text();
    if (selected && !selected.includes('\n')) this.query.value = selected;
    this.dialog.hidden = false;
    this.say('');
    this.query.focus();
    this.query.select();
    this.onChange();
  }

  close() {
    this.dialog.hidden = true;
    CSS.highlights.delete('find-match');
    this.selection.restore();
    this.onChange();
  }

  say(text) {
    this.status.textContent = text;
  }

  /** Every match as a Range, in document order. */
  matches() {
    const query = this.query.value;
    if (!query) return [];
    const body = escapeRegExp(query);
    const pattern = new RegExp(this.wholeWords.checked ? `(?<![\\p{L}\\p{N}_])${body}(?![\\p{L}\\p{N}_])` : body,
      this.matchCase.checked ? 'gu' : 'giu');
    const ranges = [];
    for (const block of textBlocks(this.editor)) {
      const nodes = [];
      let text = '';
      const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        nodes.push({node, start: text.length});
        text += node.data;
      }
      for (const m of text.matchAll(pattern)) {
        if (!m[0]) continue;
        const at = (offset, isEnd) => {
          const hit = nodes.find(({node, start}) => (isEnd ? offset > start && offset <= start + node.data.length
            : offset >= start && offset < start + node.data.length));
          return [hit.node, offset - hit.start];
        };
        const range = document.createRange();
        range.setStart(...at(m.index, false));
        range.setEnd(...at(m.index + m[0].length, true));
        ranges.push(range);
      }
    }
    return ranges;
  }

  /** Select the next match after the remembered selection, wrapping at the end. */
  next() {
    const ranges = this.matches();
    if (!ranges.length) {
      CSS.highlights.delete('find-match');
      this.say('Search key not found');
      this.onChange();
      return false;
    }
    const current = this.selection.range();
    let index = 0;
    if (current) {
      const end = document.createRange();
      end.setStart(current.endContainer, current.endOffset);
      index = ranges.findIndex((r) => end.comparePoint(r.startContainer, r.startOffset) >= 0);
      if (index < 0) index = 0;
    }
    this.selection.set(ranges[index]);
    CSS.highlights.set('find-match', new Highlight(ranges[index]));
    ranges[index].startContainer.parentElement.scrollIntoView({block: 'nearest'});
    this.say(`Match ${index + 1} of ${ranges.length}`);
    this.onChange();
    return true;
  }

  /** Replace the selected match, then find the next one. */
  replaceOne() {
    const current = this.selection.range();
    const same = (r) => current && r.compareBoundaryPoints(Range.START_TO_START, current) === 0
      && r.compareBoundaryPoints(Range.END_TO_END, current) === 0;
    const match = this.matches().find(same);
    if (!match) return this.next();
    const [node, offset] = replaceText(match, this.replacement.value);
    const after = document.createRange();
    after.setStart(node, offset);
    this.selection.set(after);
    this.onEdit();
    if (!this.next()) this.say('Replaced the last match');
    return true;
  }

  replaceAll() {
    const ranges = this.matches();
    for (const range of ranges.reverse()) replaceText(range, this.replacement.value);
    CSS.highlights.delete('find-match');
    this.say(`${ranges.length} replacement${ranges.length === 1 ? '' : 's'} made`);
    if (ranges.length) this.onEdit();
    this.onChange();
  }

  state() {
    return {open: this.open, query: this.query.value, replacement: this.replacement.value,
      matchCase: this.matchCase.checked, wholeWords: this.wholeWords.checked, status: this.status.textContent};
  }

  reset() {
    this.dialog.hidden = true;
    this.query.value = '';
    this.replacement.value = '';
    this.matchCase.checked = false;
    this.wholeWords.checked = false;
    this.say('');
    CSS.highlights.delete('find-match');
  }
}
