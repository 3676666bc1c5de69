/* docmodel.js: the document as data. The editor's top-level children are blocks — P, H1, H2, BLOCKQUOTE,
   UL/OL (of LI), TABLE and HR — kept that way by `normalize`. `readBlocks` turns the DOM into the list of blocks
   checkers read (paragraphs with formatted runs, tables, rules); `renderBlocks` builds the DOM from such a list
   (`setState`). Formatting in runs is what is rendered: bold/italic/size come from computed style. */

const STYLE_OF = {P: 'normal', H1: 'heading1', H2: 'heading2', H3: 'heading2', BLOCKQUOTE: 'quote'};
const TAG_OF = {normal: 'P', heading1: 'H1', heading2: 'H2', quote: 'BLOCKQUOTE'};
const INLINE_DISPLAY = new Set(['inline', 'inline-block', 'contents']);

/** The paragraph-like units in document order: top-level P, H1, H2, BLOCKQUOTE and the LIs of top-level lists. */
export function units(editor) {
  const out = [];
  for (const child of editor.children) {
    if (child.tagName === 'UL' || child.tagName === 'OL') out.push(...[...child.children].filter((c) => c.tagName === 'LI'));
    else if (child.tagName in STYLE_OF) out.push(child);
  }
  return out;
}

/** Every text container (paragraph unit or table cell), in document order. */
export function textBlocks(editor) {
  const out = [];
  for (const child of editor.children) {
    if (child.tagName === 'TABLE') out.push(...child.querySelectorAll('td, th'));
    else if (child.tagName === 'UL' || child.tagName === 'OL') out.push(...[...child.children].filter((c) => c.tagName === 'LI'));
    else if (child.tagName !== 'HR') out.push(child);
  }
  return out;
}

export function tagFor(style) {
  return TAG_OF[style] || 'P';
}

/** Replace `el` by a new element `tag` holding its children and text-align; returns the new element. */
export function retag(el, tag) {
  if (el.tagName === tag) return el;
  const next = document.createElement(tag);
  while (el.firstChild) next.append(el.firstChild);
  if (el.style.textAlign) next.style.textAlign = el.style.textAlign;
  el.replaceWith(next);
  return next;
}

/** Keep the editor a flat sequence of blocks: wrap stray inline content and turn DIVs into Ps. */
export function normalize(editor) {
  let pending = null;
  for (const node of [...editor.childNodes]) {
    const isBlock = node.nodeType === 1 && !INLINE_DISPLAY.has(getComputedStyle(node).display) && node.tagName !== 'BR';
    if (node.nodeType === 3 && !node.data.trim() && !pending) {
      node.remove();
      continue;
    }
    if (!isBlock) {
      if (!pending) {
        pending = document.createElement('p');
        node.before(pending);
      }
      pending.append(node);
      continue;
    }
    pending = null;
    if (node.tagName === 'DIV' || /^H[3-6]$/.test(node.tagName)) retag(node, node.tagName === 'DIV' ? 'P' : 'H2');
  }
  for (const block of textBlocks(editor)) {
    if (!block.textContent && !block.querySelector('br')) block.append(document.createElement('br'));
  }
  if (!editor.firstElementChild) editor.append(Object.assign(document.createElement('p'), {innerHTML: '<br>'}));
  const last = editor.lastElementChild;
  if (last.tagName === 'TABLE' || last.tagName === 'HR') editor.append(Object.assign(document.createElement('p'), {innerHTML: '<br>'}));
}

function alignOf(el) {
  const align = getComputedStyle(el).textAlign;
  if (align === 'center' || align === '-webkit-center') return 'center';
  if (align === 'right' || align === 'end' || align === '-webkit-right') return 'right';
  if (align === 'justify') return 'justify';
  return 'left';
}

/** The formatting of a text node as rendered. */
function formatOf(textNode, block) {
  const parent = textNode.parentElement;
  const style = getComputedStyle(parent);
  let underline = false;
  let strike = false;
  for (let el = parent; el && el !== block.parentElement; el = el.parentElement) {
    const line = getComputedStyle(el).textDecorationLine;
    underline = underline || line.includes('underline');
    strike = strike || line.includes('line-through');
    if (el === block) break;
  }
  return {
    bold: Number(style.fontWeight) >= 600,
    italic: style.fontStyle === 'italic',
    underline,
    strike,
    size: Math.round(parseFloat(style.fontSize) * 0.75 * 2) / 2,
  };
}

/** The runs of a text container: maximal stretches of text with one formatting. */
export function runsOf(block) {
  const runs = [];
  const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.data) continue;
    const format = formatOf(node, block);
    const last = runs[runs.length - 1];
    if (last && Object.keys(format).every((k) => last[k] === format[k])) last.text += node.data;
    else runs.push({text: node.data, ...format});
  }
  return runs;
}

export function textOf(block) {
  return block.textContent.replace(/\u00a0/g, ' ');
}

/** The document as checkers read it. */
export function readBlocks(editor) {
  const blocks = [];
  for (const child of editor.children) {
    if (child.tagName === 'TABLE') {
      const rows = [...child.rows].map((row) => [...row.cells].map((cell) => textOf(cell).trim()));
      blocks.push({type: 'table', rows, header: Boolean(child.querySelector('th'))});
    } else if (child.tagName === 'HR') {
      blocks.push({type: 'rule'});
    } else if (child.tagName === 'UL' || child.tagName === 'OL') {
      for (const item of child.children) {
        if (item.tagName !== 'LI') continue;
        blocks.push({type: 'paragraph', style: 'normal', align: alignOf(item), list: child.tagName === 'UL' ? 'bullet' : 'number',
          text: textOf(item), runs: runsOf(item)});
      }
    } else {
      blocks.push({type: 'paragraph', style: STYLE_OF[child.tagName] || 'normal', align: alignOf(child), list: null,
        text: textOf(child), runs: runsOf(child)});
    }
  }
  return blocks;
}

/** A run as DOM: text wrapped in B/I/U/S and a sized span as its flags say. */
function runNode(run) {
  let node = document.createTextNode(run.text);
  for (const [flag, tag] of [['strike', 's'], ['underline', 'u'], ['italic', 'i'], ['bold', 'b']]) {
    if (!run[flag]) continue;
    const wrap = document.createElement(tag);
    wrap.append(node);
    node = wrap;
  }
  if (run.size) {
    const span = document.createElement('span');
    span.style.fontSize = `${run.size}pt`;
    span.append(node);
    node = span;
  }
  return node;
}

function fillBlock(el, block) {
  const runs = block.runs || [{text: block.text || ''}];
  for (const run of runs) if (run.text) el.append(runNode(run));
  if (block.align && block.align !== 'left') el.style.textAlign = block.align;
  if (!el.textContent) el.append(document.createElement('br'));
  return el;
}

/** Build the editor's content from blocks: `{type: 'paragraph', style, align, list, text | runs}`,
    `{type: 'table', rows, header}`, `{type: 'rule'}`. Runs given to setState set only the flags they name. */
export function renderBlocks(editor, blocks) {
  editor.replaceChildren();
  let list = null;
  for (const block of blocks) {
    if (block.type === 'paragraph' && block.list) {
      const tag = block.list === 'number' ? 'OL' : 'UL';
      if (!list || list.tagName !== tag) {
        list = document.createElement(tag);
        editor.append(list);
      }
      list.append(fillBlock(document.createElement('li'), block));
      continue;
    }
    list = null;
    if (block.type === 'table') editor.append(makeTable(block.rows, block.header));
    else if (block.type === 'rule') editor.append(document.createElement('hr'));
    else editor.append(fillBlock(document.createElement(tagFor(block.style)), block));
  }
  normalize(editor);
}

/** A table element; `rows` is a list of rows of cell texts. */
export function makeTable(rows, header = false) {
  const table = document.createElement('table');
  const body = document.createElement('tbody');
  rows.forEach((cells, r) => {
    const tr = document.createElement('tr');
    for (const text of cells) {
      const cell = document.createElement(header && r === 0 ? 'th' : 'td');
      if (text) cell.textContent = text;
      else cell.append(document.createElement('br'));
      tr.append(cell);
    }
    body.append(tr);
  });
  table.append(body);
  return table;
}

/** Plain-text statistics as a word processor counts them. */
export function statistics(editor) {
  const texts = textBlocks(editor).map(textOf);
  const all = texts.join(' ');
  return {
    words: all.split(/\s+/).filter(Boolean).length,
    characters: texts.join('').length,
    charactersNoSpaces: texts.join('').replace(/\s/g, '').length,
    paragraphs: units(editor).filter((u) => textOf(u).trim()).length,
  };
}
