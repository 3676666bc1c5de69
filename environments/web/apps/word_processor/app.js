/* app.js: Quill Writer, the word processor app — commands, dialogs, toolbar, and `window.raygent`.

   getState() -> {blocks, text, stats, fileName, format, saved: {name: {format, blocks, text, pageSetup}},
                  modified, pageSetup, selection, dialog, findReplace, menuOpen, contextMenu}
   setState({blocks, fileName?, format?, pageSetup?, saved?}) resets the app to that document. */

import {readBlocks, renderBlocks, normalize, statistics} from './docmodel.js';
import {FindReplace} from './findreplace.js';
import * as fmt from './formatting.js';
import {DocSelection, History} from './selection.js';
import {Dialogs, Shell, el, loadSpec} from '../common/menus.js';

const $ = (id) => document.getElementById(id);
const editor = $('doc');
const PAPER_MM = {A4: [210, 297], A5: [148, 210], Letter: [216, 279], Legal: [216, 356]};
const FORMATS = ['odt', 'docx', 'rtf', 'txt', 'pdf', 'html'];
const DEFAULT_PAGE = {paper: 'A4', orientation: 'portrait', margins: 2};
const TOOLBAR = [['bold', 'B'], ['italic', 'I'], ['underline', 'U'], ['strikethrough', 'S'], null, ['align_left', '⇤'],
  ['align_center', '↔'], ['align_right', '⇥'], ['justify', '☰'], null, ['bullet_list', '•'], ['numbered_list', '1.'], null,
  ['undo', '↶'], ['redo', '↷']];

let shell;
let fileName = null;
let format = null;
let saved = {};
let savedHtml = '';
let pageSetup = {...DEFAULT_PAGE};

const selection = new DocSelection(editor);
const history = new History(editor, selection, () => changed(false));
const find = new FindReplace(editor, selection, {onChange: () => updateChrome(), onEdit: () => changed()});

const dialogs = new Dialogs({
  save: ({name, format: chosen}) => {
    let base = name.trim();
    if (!base) return 'Enter a file name.';
    if (/[\\/:*?"<>|]/.test(base)) return 'A file name cannot contain \\ / : * ? " < > |';
    const typed = new RegExp(`\\.(${FORMATS.join('|')})$`, 'i').exec(base);
    if (typed) base = base.slice(0, -typed[0].length);
    saveTo(`${base}.${chosen}`, chosen);
    return '';
  },
  page: ({paper, orientation, margins}) => {
    const cm = Number(margins);
    if (!Number.isFinite(cm) || cm < 0.5 || cm > 5) return 'Margins must be between 0.5 and 5 cm.';
    applyPage({paper, orientation: orientation || 'portrait', margins: cm});
    changed();
    return '';
  },
  size: ({size}) => {
    const points = Number(size);
    if (!Number.isFinite(points) || points < 6 || points > 96) return 'Enter a size from 6 to 96 points.';
    fmt.fontSize(editor, selection, points);
    changed();
    return '';
  },
  table: ({rows, cols, header}) => {
    const [r, c] = [Number(rows), Number(cols)];
    if (!Number.isInteger(r) || r < 1 || r > 20) return 'Rows must be a whole number from 1 to 20.';
    if (!Number.isInteger(c) || c < 1 || c > 10) return 'Columns must be a whole number from 1 to 10.';
    fmt.insertTable(editor, selection, r, c, header);
    changed();
    return '';
  },
  count: () => '',
}, () => updateChrome(), () => selection.restore());

const HANDLERS = {
  new_document: () => setState({blocks: []}),
  save: () => (fileName ? saveTo(fileName, format) : openSaveAs()),
  save_as: () => openSaveAs(),
  page_setup: () => dialogs.open('page', pageSetup),
  undo: () => history.undo(),
  redo: () => history.redo(),
  select_all: () => {
    const range = document.createRange();
    range.selectNodeContents(editor);
    selection.set(range);
    selection.restore();
  },
  find_replace: () => find.show(),
  bold: () => fmt.inline(selection, 'bold'),
  italic: () => fmt.inline(selection, 'italic'),
  underline: () => fmt.inline(selection, 'underline'),
  strikethrough: () => fmt.inline(selection, 'strikeThrough'),
  clear_formatting: () => fmt.inline(selection, 'removeFormat'),
  font_size: () => dialogs.open('size', {size: currentSize()}),
  align_left: () => fmt.align(editor, selection, 'left'),
  align_center: () => fmt.align(editor, selection, 'center'),
  align_right: () => fmt.align(editor, selection, 'right'),
  justify: () => fmt.align(editor, selection, 'justify'),
  style_normal: () => fmt.setStyle(editor, selection, 'normal'),
  style_h1: () => fmt.setStyle(editor, selection, 'heading1'),
  style_h2: () => fmt.setStyle(editor, selection, 'heading2'),
  style_quote: () => fmt.setStyle(editor, selection, 'quote'),
  bullet_list: () => fmt.toggleList(editor, selection, 'UL'),
  numbered_list: () => fmt.toggleList(editor, selection, 'OL'),
  insert_table: () => dialogs.open('table', {rows: 2, cols: 2, header: false}),
  horizontal_rule: () => fmt.insertRule(editor, selection),
  table_insert_row: () => fmt.tableCommand(editor, selection, 'row'),
  table_delete_row: () => fmt.tableCommand(editor, selection, 'deleteRow'),
  table_insert_column: () => fmt.tableCommand(editor, selection, 'column'),
  table_delete: () => fmt.tableCommand(editor, selection, 'delete'),
  word_count: () => {
    const stats = statistics(editor);
    $('count-table').replaceChildren(...[['Words', stats.words], ['Characters', stats.characters],
      ['Characters excluding spaces', stats.charactersNoSpaces], ['Paragraphs', stats.paragraphs]]
      .flatMap(([k, v]) => [el('dt', {text: k}), el('dd', {text: String(v)})]));
    dialogs.open('count');
  },
};
const NO_EDIT = new Set(['save', 'save_as', 'page_setup', 'undo', 'redo', 'select_all', 'find_replace', 'font_size',
  'insert_table', 'word_count', 'new_document']);

function runCommand(id) {
  const handler = HANDLERS[id];
  if (!handler) return;
  handler();
  if (NO_EDIT.has(id)) updateChrome();
  else changed();
}

function openSaveAs() {
  const base = fileName ? fileName.replace(/\.[^.]+$/, '') : 'Untitled 1';
  dialogs.open('save', {name: base, format: format || 'odt'});
}

function plainText() {
  return readBlocks(editor).map((b) => (b.type === 'table' ? b.rows.map((r) => r.join('\t')).join('\n') : b.text || ''))
    .join('\n');
}

function saveTo(name, chosen) {
  saved[name] = {format: chosen, blocks: readBlocks(editor), text: plainText(), pageSetup: {...pageSetup}};
  fileName = name;
  format = chosen;
  savedHtml = editor.innerHTML;
  updateChrome();
}

function currentSize() {
  const range = selection.range();
  const node = range ? range.startContainer : editor;
  const element = node.nodeType === 1 ? node : node.parentElement;
  return Math.round(parseFloat(getComputedStyle(element).fontSize) * 0.75);
}

function applyPage(next) {
  pageSetup = {...pageSetup, ...next};
  const [w, h] = PAPER_MM[pageSetup.paper] || PAPER_MM.A4;
  document.documentElement.style.setProperty('--page-width', `${(pageSetup.orientation === 'landscape' ? h : w) * 3}px`);
  document.documentElement.style.setProperty('--page-margin', `${pageSetup.margins * 30}px`);
}

/** After an edit: keep the block structure, record undo history, refresh the chrome. */
function changed(record = true) {
  normalize(editor);
  if (record) history.record('command');
  updateChrome();
}

function formattingAtSelection() {
  const range = selection.range();
  if (!range) return {};
  const node = range.startContainer.nodeType === 1 ? range.startContainer : range.startContainer.parentElement;
  const style = getComputedStyle(node);
  let line = '';
  for (let e = node; e && e !== editor; e = e.parentElement) line += getComputedStyle(e).textDecorationLine;
  return {bold: Number(style.fontWeight) >= 600, italic: style.fontStyle === 'italic', underline: line.includes('underline'),
    strikethrough: line.includes('line-through')};
}

function updateChrome() {
  const stats = statistics(editor);
  const modified = editor.innerHTML !== savedHtml;
  $('title').textContent = `${fileName || 'Untitled 1'}${modified ? ' (modified)' : ''}`;
  $('statusbar').textContent = `Page 1 of 1 · ${stats.words} words, ${stats.characters} characters · ` +
    `${pageSetup.paper} ${pageSetup.orientation} · ${fileName || 'Untitled 1'}`;
  const pressed = formattingAtSelection();
  for (const button of $('toolbar').querySelectorAll('[aria-pressed]')) {
    button.setAttribute('aria-pressed', String(Boolean(pressed[button.dataset.command])));
  }
}

function buildToolbar() {
  const bar = $('toolbar');
  for (const entry of TOOLBAR) {
    if (!entry) {
      bar.append(el('span', {class: 'group-gap', 'aria-hidden': 'true'}));
      continue;
    }
    const [id, glyph] = entry;
    const command = shell.spec.commands[id];
    if (!command) continue;
    const toggle = ['bold', 'italic', 'underline', 'strikethrough'].includes(id);
    const button = el('button', {type: 'button', 'data-command': id, 'aria-label': command.label, title: command.label,
      'aria-pressed': toggle ? 'false' : false}, el('span', {'aria-hidden': 'true', text: glyph}));
    button.addEventListener('mousedown', (e) => e.preventDefault());
    button.addEventListener('click', () => runCommand(id));
    bar.append(button);
  }
}

function getState() {
  const offsets = selection.offsets();
  return {
    blocks: readBlocks(editor),
    text: plainText(),
    stats: statistics(editor),
    fileName,
    format,
    saved: JSON.parse(JSON.stringify(saved)),
    modified: editor.innerHTML !== savedHtml,
    pageSetup: {...pageSetup},
    selection: offsets ? {...offsets, text: selection.text()} : null,
    dialog: dialogs.current,
    findReplace: find.state(),
    menuOpen: shell && shell.openMenu ? shell.openMenu.button.textContent : null,
    contextMenu: Boolean(shell && shell.contextMenu),
  };
}

function setState(state) {
  dialogs.close();
  find.reset();
  if (shell) {
    shell.closeMenus();
    shell.closeContextMenu();
  }
  renderBlocks(editor, state.blocks || []);
  fileName = state.fileName || null;
  format = state.format || null;
  saved = JSON.parse(JSON.stringify(state.saved || {}));
  applyPage({...DEFAULT_PAGE, ...(state.pageSetup || {})});
  selection.saved = null;
  savedHtml = editor.innerHTML;
  history.clear();
  updateChrome();
}

function onKey(event) {
  if (event.key === 'Tab' && !event.ctrlKey && !event.altKey && !event.metaKey) {
    event.preventDefault();
    selection.capture();
    if (!fmt.tabInTable(editor, selection, event.shiftKey)) document.execCommand('insertText', false, '\t');
    changed();
  }
}

async function start() {
  document.execCommand('defaultParagraphSeparator', false, 'p');
  document.execCommand('styleWithCSS', false, false);
  const spec = await loadSpec();
  shell = new Shell(spec, runCommand);
  shell.buildMenuBar($('menubar'));
  buildToolbar();
  editor.addEventListener('keydown', onKey);
  editor.addEventListener('input', () => {
    selection.capture();
    const before = editor.innerHTML;
    const offsets = selection.offsets();
    normalize(editor);
    if (offsets && editor.innerHTML !== before) {
      selection.setOffsets(offsets);
      selection.restore();
    }
    history.record('typing');
    updateChrome();
  });
  editor.addEventListener('beforeinput', (e) => {
    if (e.inputType === 'historyUndo' || e.inputType === 'historyRedo') {
      e.preventDefault();
      runCommand(e.inputType === 'historyUndo' ? 'undo' : 'redo');
    }
  });
  editor.addEventListener('paste', (e) => {
    e.preventDefault();
    document.execCommand('insertText', false, e.clipboardData.getData('text/plain'));
  });
  editor.addEventListener('contextmenu', (e) => {
    e.preventDefault();
    selection.capture();
    const ids = ['bold', 'italic', 'underline', null, 'font_size', 'clear_formatting', null, 'style_normal', 'style_h1',
      'style_h2'];
    if (fmt.cellOf(editor, selection.range())) {
      ids.push(null, 'table_insert_row', 'table_delete_row', 'table_insert_column', 'table_delete');
    }
    shell.showContextMenu(e.clientX, e.clientY, ids);
  });
  document.addEventListener('selectionchange', () => requestAnimationFrame(updateChrome));
  setState({blocks: []});
}

window.raygent = {ready: start(), getState, setState};
