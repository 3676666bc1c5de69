/* app.js: Codex Studio, the code editor app — commands, settings, the console, and `window.raygent`.

   getState() -> {files, buffers, dirty, tabs, active, cursor, console, runs, settings, sidebarVisible,
                  consoleVisible, find, dialog, menuOpen, contextMenu}
   setState({files, tabs?, active?, settings?}) resets the app to that workspace. */

import {renderPalette} from './palette.js';
import * as edit from './editing.js';
import {FindWidget} from './findwidget.js';
import {run as runMini} from './interpreter.js';
import {Dialogs, Shell, el, loadSpec} from '../common/menus.js';
import {Workspace, nameProblem} from './workspace.js';

const DEFAULT_SETTINGS = {tabSize: 4, insertSpaces: true, wordWrap: false, lineNumbers: true, theme: 'dark', fontSize: 14};
const $ = (id) => document.getElementById(id);

let shell;
let settings = {...DEFAULT_SETTINGS};
let consoleLines = [];
let runs = [];
let contextTarget = null;
let paletteShown = [];

const workspace = new Workspace({
  fileList: $('file-list'), tabs: $('tabs'), editor: $('editor'), gutter: $('gutter'), wrap: $('editor-wrap'),
  empty: $('empty-editor'), onChange: () => updateChrome(), onContextMenu: (kind, path, x, y) => {
    contextTarget = path;
    shell.showContextMenu(x, y, kind === 'file' ? ['rename_file', 'delete_file'] : ['save', 'close_tab', 'rename_file']);
  },
});
const find = new FindWidget(workspace, () => updateChrome());
const dialogs = new Dialogs({
  new: ({name}) => {
    const problem = nameProblem(name.trim(), workspace.files);
    if (problem) return problem;
    workspace.create(name.trim());
    return '';
  },
  rename: ({name}, from) => {
    const problem = nameProblem(name.trim(), workspace.files, from);
    if (problem) return problem;
    if (name.trim() !== from) workspace.rename(from, name.trim());
    return '';
  },
  delete: (_values, path) => {
    workspace.remove(path);
    return '';
  },
  goto: ({line}) => {
    const number = Number(line);
    if (!Number.isInteger(number) || number < 1) return 'Enter a line number (1 or more).';
    const offset = edit.lineOffset(workspace.editor.value, number);
    workspace.select(offset, offset);
    return '';
  },
  settings: (values) => {
    const fontSize = Number(values.fontSize);
    if (!Number.isFinite(fontSize) || fontSize < 8 || fontSize > 32) return 'Font size must be between 8 and 32.';
    applySettings({tabSize: Number(values.tabSize), insertSpaces: values.insertSpaces, wordWrap: values.wordWrap,
      lineNumbers: values.lineNumbers, theme: values.theme, fontSize});
    return '';
  },
  palette: () => {
    if (!paletteShown.length) return 'No matching command.';
    const id = paletteShown[0].id;
    setTimeout(() => runCommand(id, 'palette'));
    return '';
  },
}, () => updateChrome(), () => workspace.active !== null && workspace.editor.focus());

/** Apply a text operation from editing.js to the active editor's selection. */
function lineOperation(operation) {
  if (workspace.active === null) return;
  const editor = workspace.editor;
  const result = operation(editor.value, editor.selectionStart, editor.selectionEnd);
  workspace.replaceText(result.text, result.start, result.end);
}

function target(origin) {
  return origin === 'context' && contextTarget !== null ? contextTarget : workspace.active;
}

const HANDLERS = {
  new_file: () => dialogs.open('new', {name: ''}),
  save: () => workspace.save(workspace.active),
  save_all: () => workspace.saveAll(),
  rename_file: (origin) => {
    const path = target(origin);
    if (path !== null) dialogs.open('rename', {name: path}, path);
  },
  delete_file: (origin) => {
    const path = target(origin);
    if (path === null) return;
    $('delete-question').textContent = `Delete ${path} from the workspace? This cannot be undone.`;
    dialogs.open('delete', {}, path);
  },
  close_tab: (origin) => {
    const path = target(origin);
    if (path !== null) workspace.close(path);
  },
  find: () => workspace.active !== null && find.open(false),
  replace: () => workspace.active !== null && find.open(true),
  goto_line: () => {
    if (workspace.active === null) return;
    dialogs.open('goto', {line: edit.lineOf(workspace.editor.value, workspace.editor.selectionStart) + 1});
  },
  toggle_comment: () => lineOperation((t, s, e) => edit.toggleComment(t, s, e, edit.commentPrefix(workspace.active))),
  duplicate_line: () => lineOperation(edit.duplicateLines),
  delete_line: () => lineOperation(edit.deleteLines),
  sort_lines: () => lineOperation(edit.sortLines),
  upper_case: () => lineOperation(edit.upperCase),
  trim_whitespace: () => lineOperation(edit.trimTrailing),
  command_palette: () => {
    dialogs.open('palette', {query: ''});
    paletteShown = renderPalette($('palette-list'), shell.commandList(), '', choosePaletteCommand);
  },
  toggle_sidebar: () => ($('sidebar').hidden = !$('sidebar').hidden),
  toggle_console: () => ($('console-panel').hidden = !$('console-panel').hidden),
  toggle_word_wrap: () => applySettings({...settings, wordWrap: !settings.wordWrap}),
  settings: () => dialogs.open('settings', settings),
  run_file: () => runActive(),
  clear_console: () => {
    consoleLines = [];
    renderConsole();
  },
};

function choosePaletteCommand(id) {
  dialogs.close();
  runCommand(id, 'palette');
}

function runCommand(id, origin) {
  const handler = HANDLERS[id];
  if (handler) handler(origin);
  if (origin !== 'context') contextTarget = null;
  updateChrome();
}

function print(text, kind = 'out') {
  consoleLines.push({text, kind});
}

function renderConsole() {
  const pre = $('console');
  pre.replaceChildren(...consoleLines.map(({text, kind}) => el('div', {class: `console-${kind}`, text})));
  pre.scrollTop = pre.scrollHeight;
}

function runActive() {
  const path = workspace.active;
  $('console-panel').hidden = false;
  if (path === null) {
    print('No file is open to run.', 'info');
  } else if (!path.endsWith('.mini')) {
    print(`> run ${path}`, 'info');
    const error = `Cannot run ${path}: only .mini programs can run.`;
    print(error, 'error');
    runs.push({file: path, output: [], error, source: workspace.editor.value});
  } else {
    const source = workspace.editor.value;
    print(`> run ${path}`, 'info');
    const result = runMini(source);
    for (const line of result.output) print(line);
    if (result.error) print(`Error: ${result.error}`, 'error');
    print(`Process exited with code ${result.error ? 1 : 0}`, 'info');
    runs.push({file: path, output: result.output, error: result.error, source});
  }
  renderConsole();
}

function applySettings(next) {
  settings = {...settings, ...next};
  document.body.className = `theme-${settings.theme}`;
  document.documentElement.style.setProperty('--tab-size', String(settings.tabSize));
  document.documentElement.style.setProperty('--code-size', `${settings.fontSize}px`);
  workspace.editor.classList.toggle('wrap', settings.wordWrap);
  workspace.editor.setAttribute('wrap', settings.wordWrap ? 'soft' : 'off');
  $('gutter').hidden = !settings.lineNumbers;
  updateChrome();
}

function updateChrome() {
  const editor = workspace.editor;
  const line = edit.lineOf(editor.value, editor.selectionStart);
  const column = editor.selectionStart - edit.lineOffset(editor.value, line + 1) + 1;
  $('status-position').textContent = `Ln ${line + 1}, Col ${column}`;
  $('status-indent').textContent = `${settings.insertSpaces ? 'Spaces' : 'Tab Size'}: ${settings.tabSize}`;
  $('status-wrap').textContent = `Wrap: ${settings.wordWrap ? 'on' : 'off'}`;
  const path = workspace.active;
  $('status-language').textContent = path === null ? 'No file' : path.endsWith('.mini') ? 'Mini' : 'Plain text';
  $('title').textContent = path === null ? 'Codex Studio' : `${workspace.isDirty(path) ? '● ' : ''}${path} — Codex Studio`;
  workspace.renderTabs();
}

function onEditorKey(event) {
  if (event.key !== 'Tab' || event.ctrlKey || event.altKey || event.metaKey) return;
  event.preventDefault();
  const unit = settings.insertSpaces ? ' '.repeat(settings.tabSize) : '\t';
  const {selectionStart: s, selectionEnd: e, value} = workspace.editor;
  if (event.shiftKey || value.slice(s, e).includes('\n')) lineOperation((t, a, b) => edit.indentLines(t, a, b, unit, event.shiftKey));
  else document.execCommand('insertText', false, unit);
}

function getState() {
  workspace.stash();
  const editor = workspace.editor;
  const active = workspace.active;
  const line = edit.lineOf(editor.value, editor.selectionStart);
  return {
    files: {...workspace.files},
    buffers: {...workspace.buffers},
    dirty: Object.keys(workspace.buffers).filter((p) => workspace.isDirty(p)),
    tabs: [...workspace.tabs],
    active,
    cursor: active === null ? null : {line: line + 1, column: editor.selectionStart - edit.lineOffset(editor.value, line + 1) + 1,
      selectionStart: editor.selectionStart, selectionEnd: editor.selectionEnd,
      selectedText: editor.value.slice(editor.selectionStart, editor.selectionEnd)},
    console: consoleLines.map((l) => l.text),
    runs: runs.map((r) => ({...r, output: [...r.output]})),
    settings: {...settings},
    sidebarVisible: !$('sidebar').hidden,
    consoleVisible: !$('console-panel').hidden,
    find: find.state(),
    dialog: dialogs.current,
    menuOpen: shell && shell.openMenu ? shell.openMenu.button.textContent : null,
    contextMenu: Boolean(shell && shell.contextMenu),
  };
}

function setState(state) {
  dialogs.close();
  find.reset();
  shell.closeMenus();
  shell.closeContextMenu();
  consoleLines = (state.console || []).map((text) => ({text, kind: 'out'}));
  runs = [];
  renderConsole();
  $('sidebar').hidden = false;
  $('console-panel').hidden = false;
  workspace.cursors = {};
  workspace.reset(state.files || {}, state.tabs || [], state.active ?? null);
  applySettings({...DEFAULT_SETTINGS, ...(state.settings || {})});
}

async function start() {
  const spec = await loadSpec();
  shell = new Shell(spec, runCommand);
  shell.buildMenuBar($('menubar'));
  workspace.editor.addEventListener('keydown', onEditorKey);
  workspace.editor.addEventListener('contextmenu', (e) => {
    e.preventDefault();
    contextTarget = null;
    shell.showContextMenu(e.clientX, e.clientY, ['find', 'replace', 'goto_line', 'toggle_comment', null, 'run_file']);
  });
  $('console-panel').addEventListener('contextmenu', (e) => {
    e.preventDefault();
    shell.showContextMenu(e.clientX, e.clientY, ['clear_console', 'toggle_console']);
  });
  const query = $('dialog-palette').querySelector('input');
  query.addEventListener('input', () => {
    paletteShown = renderPalette($('palette-list'), shell.commandList(), query.value, choosePaletteCommand);
  });
  applySettings(settings);
  workspace.render();
}

window.raygent = {ready: start(), getState, setState};
