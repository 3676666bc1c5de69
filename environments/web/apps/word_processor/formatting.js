/* formatting.js: the word processor's editing commands over the remembered selection (`selection.js`).
   Character formatting goes through the browser's editing commands; paragraph styles, alignment, lists and
   tables restructure the blocks directly, moving (never recreating) text nodes so the selection survives. */

import {makeTable, normalize, tagFor, units} from './docmodel.js';

/** The paragraph units a range touches; a selection ending at the very start of a unit leaves that one out. */
export function selectedUnits(editor, range) {
  const hit = units(editor).filter((u) => range.intersectsNode(u));
  if (hit.length > 1 && !range.collapsed) {
    const tail = document.createRange();
    tail.setStart(hit[hit.length - 1], 0);
    tail.setEnd(range.endContainer, range.endOffset);
    if (!tail.toString()) hit.pop();
  }
  return hit;
}

/** The editor child that contains `node`. */
export function topBlock(editor, node) {
  let el = node;
  while (el && el.parentNode !== editor) el = el.parentNode;
  return el;
}

export function cellOf(editor, range) {
  const node = range && range.startContainer;
  const el = node && (node.nodeType === 1 ? node : node.parentElement);
  const cell = el && el.closest('td, th');
  return cell && editor.contains(cell) ? cell : null;
}

/** A new element `tag` holding `el`'s children and alignment; `moved` maps old elements to new ones. */
function swap(el, tag, moved) {
  if (el.tagName === tag) return el;
  const next = document.createElement(tag);
  while (el.firstChild) next.append(el.firstChild);
  if (el.style.textAlign) next.style.textAlign = el.style.textAlign;
  moved.set(el, next);
  return next;
}

/** Rebuild the editor from a flat item list `[{el, list: 'UL'|'OL'|null, tag}]`, regrouping list items. */
function rebuild(editor, items, selection) {
  const moved = new Map();
  const children = [];
  let container = null;
  for (const item of items) {
    if (item.list) {
      const li = swap(item.el, 'LI', moved);
      if (!container || container.tagName !== item.list) {
        container = document.createElement(item.list);
        children.push(container);
      }
      container.append(li);
    } else {
      container = null;
      children.push(item.tag ? swap(item.el, item.tag, moved) : item.el);
    }
  }
  editor.replaceChildren(...children);
  const saved = selection.saved;
  if (saved) {
    saved.sc = moved.get(saved.sc) || saved.sc;
    saved.ec = moved.get(saved.ec) || saved.ec;
  }
  normalize(editor);
}

function flatItems(editor) {
  const items = [];
  for (const child of [...editor.children]) {
    if (child.tagName === 'UL' || child.tagName === 'OL') {
      for (const li of [...child.children]) items.push({el: li, list: child.tagName, tag: null});
    } else items.push({el: child, list: null, tag: null});
  }
  return items;
}

/** Give the selected paragraphs a style (`normal`, `heading1`, `heading2`, `quote`); list items leave their list. */
export function setStyle(editor, selection, style) {
  const targets = new Set(selectedUnits(editor, selection.restore()));
  if (!targets.size) return;
  const items = flatItems(editor);
  for (const item of items) {
    if (!targets.has(item.el)) continue;
    item.list = null;
    item.tag = tagFor(style);
  }
  rebuild(editor, items, selection);
  selection.restore();
}

/** Turn the selected paragraphs into a list of `type` ('UL' or 'OL'), or back into paragraphs when they all
    already are one. */
export function toggleList(editor, selection, type) {
  const targets = new Set(selectedUnits(editor, selection.restore()));
  if (!targets.size) return;
  const items = flatItems(editor);
  const chosen = items.filter((i) => targets.has(i.el));
  const undo = chosen.every((i) => i.list === type);
  for (const item of chosen) {
    item.list = undo ? null : type;
    item.tag = undo ? 'P' : null;
  }
  rebuild(editor, items, selection);
  selection.restore();
}

export function align(editor, selection, how) {
  for (const unit of selectedUnits(editor, selection.restore())) unit.style.textAlign = how === 'left' ? '' : how;
  for (const el of editor.querySelectorAll('[style=""]')) el.removeAttribute('style');
}

/** Bold, italic, underline, strikethrough and removeFormat through the browser's editing commands. */
export function inline(selection, command) {
  selection.restore();
  document.execCommand(command);
  selection.capture();
}

/** Set the selected text's size in points. */
export function fontSize(editor, selection, points) {
  selection.restore();
  document.execCommand('fontSize', false, '7');
  selection.capture();
  const moved = new Map();
  for (const font of editor.querySelectorAll('font[size="7"]')) {
    const span = document.createElement('span');
    span.style.fontSize = `${points}pt`;
    while (font.firstChild) span.append(font.firstChild);
    for (const inner of span.querySelectorAll('[style*="font-size"]')) inner.style.fontSize = '';
    font.replaceWith(span);
    moved.set(font, span);
  }
  const saved = selection.saved;
  if (saved) {
    saved.sc = moved.get(saved.sc) || saved.sc;
    saved.ec = moved.get(saved.ec) || saved.ec;
  }
  selection.restore();
}

function caretInto(selection, node) {
  const range = document.createRange();
  range.setStart(node, 0);
  range.collapse(true);
  selection.set(range);
  selection.restore();
}

/** Insert a rows x cols table after the selected paragraph (replacing it when empty); caret in the first cell. */
export function insertTable(editor, selection, rows, cols, header) {
  const range = selection.range();
  const block = range ? topBlock(editor, range.startContainer) : null;
  const table = makeTable(Array.from({length: rows}, () => Array(cols).fill('')), header);
  if (block && block !== editor && block.tagName === 'P' && !block.textContent.trim()) block.replaceWith(table);
  else if (block && block !== editor) block.after(table);
  else editor.append(table);
  normalize(editor);
  caretInto(selection, table.querySelector('td, th'));
}

export function insertRule(editor, selection) {
  const range = selection.range();
  const block = range ? topBlock(editor, range.startContainer) : null;
  const rule = document.createElement('hr');
  if (block && block !== editor) block.after(rule);
  else editor.append(rule);
  normalize(editor);
  caretInto(selection, rule.nextElementSibling);
}

/** Table commands at the cell holding the selection: 'row', 'column', 'deleteRow' and 'delete' (the table;
    deleting the only row deletes the table too). */
export function tableCommand(editor, selection, what) {
  const cell = cellOf(editor, selection.range());
  if (!cell) return false;
  const row = cell.parentElement;
  const table = cell.closest('table');
  if (what === 'row') {
    const next = row.cloneNode(false);
    for (const c of row.cells) next.append(Object.assign(document.createElement('td'), {innerHTML: '<br>'}, {className: c.className}));
    row.after(next);
    caretInto(selection, next.cells[cell.cellIndex]);
  } else if (what === 'column') {
    const index = cell.cellIndex;
    for (const r of table.rows) {
      const fresh = document.createElement(r.cells[0] && r.cells[0].tagName === 'TH' ? 'th' : 'td');
      fresh.append(document.createElement('br'));
      r.cells[Math.min(index, r.cells.length - 1)].after(fresh);
    }
    caretInto(selection, row.cells[index + 1]);
  } else if (what === 'deleteRow' && table.rows.length > 1) {
    const sibling = row.nextElementSibling || row.previousElementSibling;
    const index = cell.cellIndex;
    row.remove();
    caretInto(selection, sibling.cells[Math.min(index, sibling.cells.length - 1)]);
  } else {
    const after = table.nextElementSibling;
    table.remove();
    normalize(editor);
    caretInto(selection, after && editor.contains(after) ? after : editor.lastElementChild);
  }
  normalize(editor);
  return true;
}

/** Tab moves to the next cell (adding a row after the last one); Shift+Tab to the previous cell. */
export function tabInTable(editor, selection, backwards) {
  const cell = cellOf(editor, selection.range());
  if (!cell) return false;
  const cells = [...cell.closest('table').querySelectorAll('td, th')];
  const index = cells.indexOf(cell) + (backwards ? -1 : 1);
  if (index < 0) return true;
  if (index >= cells.length) {
    tableCommand(editor, selection, 'row');
    const rows = cell.closest('table').rows;
    caretInto(selection, rows[rows.length - 1].cells[0]);
    return true;
  }
  const target = cells[index];
  const range = document.createRange();
  range.selectNodeContents(target);
  if (!target.textContent) range.collapse(true);
  selection.set(range);
  selection.restore();
  return true;
}
