/* selection.js: the document's remembered selection and its undo history.

   Menus, dialogs and the find box take the focus from the document, so the app remembers the last selection
   made inside it as static boundary points (text nodes survive the block restructuring commands do, unlike
   live ranges) and puts it back before each command. The history stores snapshots of the document's HTML with
   the selection as character offsets; typing bursts coalesce into one step. */

export class DocSelection {
  constructor(editor) {
    this.editor = editor;
    this.saved = null;
    document.addEventListener('selectionchange', () => this.capture());
  }

  /** Remember the window's selection if it lies in the document. */
  capture() {
    const selection = getSelection();
    if (!selection.rangeCount) return;
    const range = selection.getRangeAt(0);
    if (!this.editor.contains(range.startContainer) || !this.editor.contains(range.endContainer)) return;
    this.saved = {sc: range.startContainer, so: range.startOffset, ec: range.endContainer, eo: range.endOffset};
  }

  /** The remembered selection as a Range, or null when there is none (or it left the document). */
  range() {
    const s = this.saved;
    if (!s || !this.editor.contains(s.sc) || !this.editor.contains(s.ec)) return null;
    const range = document.createRange();
    try {
      range.setStart(s.sc, Math.min(s.so, length(s.sc)));
      range.setEnd(s.ec, Math.min(s.eo, length(s.ec)));
    } catch {
      return null;
    }
    return range;
  }

  set(range) {
    this.saved = {sc: range.startContainer, so: range.startOffset, ec: range.endContainer, eo: range.endOffset};
  }

  /** Focus the document and make the remembered selection the real one (caret at the start if none). */
  restore() {
    let range = this.range();
    if (!range) {
      range = document.createRange();
      range.setStart(firstPosition(this.editor), 0);
      range.collapse(true);
    }
    this.editor.focus({preventScroll: true});
    const selection = getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    this.set(range);
    return range;
  }

  /** Character offsets of the remembered selection from the document's start. */
  offsets() {
    const range = this.range();
    if (!range) return null;
    return {start: offsetOf(this.editor, range.startContainer, range.startOffset),
      end: offsetOf(this.editor, range.endContainer, range.endOffset)};
  }

  /** Select by character offsets (the inverse of `offsets`). */
  setOffsets({start, end}) {
    const range = document.createRange();
    range.setStart(...pointAt(this.editor, start));
    range.setEnd(...pointAt(this.editor, end));
    this.set(range);
  }

  text() {
    const range = this.range();
    return range ? range.toString() : '';
  }
}

function length(node) {
  return node.nodeType === 3 ? node.data.length : node.childNodes.length;
}

function firstPosition(editor) {
  const walker = document.createTreeWalker(editor, NodeFilter.SHOW_TEXT);
  const text = walker.nextNode();
  if (text) return text;
  return editor.querySelector('p, h1, h2, blockquote, li, td, th') || editor;
}

function offsetOf(editor, node, offset) {
  const range = document.createRange();
  range.setStart(editor, 0);
  range.setEnd(node, offset);
  return range.toString().length;
}

function pointAt(editor, offset) {
  const walker = document.createTreeWalker(editor, NodeFilter.SHOW_TEXT);
  let left = offset;
  let last = null;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (left <= node.data.length) return [node, left];
    left -= node.data.length;
    last = node;
  }
  return last ? [last, last.data.length] : [firstPosition(editor), 0];
}

/** Undo/redo over document snapshots. */
export class History {
  constructor(editor, selection, onRestore) {
    Object.assign(this, {editor, selection, onRestore});
    this.clear();
  }

  clear() {
    this.stack = [];
    this.index = -1;
    this.lastTyping = 0;
    this.record('reset');
  }

  /** Store the document after a change; `typing` changes within a second merge into one step. */
  record(kind = 'command') {
    const snapshot = {html: this.editor.innerHTML, selection: this.selection.offsets()};
    const now = Date.now();
    if (this.stack[this.index] && this.stack[this.index].html === snapshot.html) return;
    this.stack.length = this.index + 1;
    if (kind === 'typing' && now - this.lastTyping < 1000 && this.stack[this.index].kind === 'typing') {
      this.stack[this.index] = {...snapshot, kind};
    } else {
      this.stack.push({...snapshot, kind});
      if (this.stack.length > 200) this.stack.shift();
      this.index = this.stack.length - 1;
    }
    this.lastTyping = kind === 'typing' ? now : 0;
  }

  undo() {
    if (this.index <= 0) return false;
    this.index -= 1;
    this.apply();
    return true;
  }

  redo() {
    if (this.index >= this.stack.length - 1) return false;
    this.index += 1;
    this.apply();
    return true;
  }

  apply() {
    const snapshot = this.stack[this.index];
    this.editor.innerHTML = snapshot.html;
    this.lastTyping = 0;
    if (snapshot.selection) this.selection.setOffsets(snapshot.selection);
    this.onRestore();
  }
}
