// Slide editor: menus and shortcuts from ui.json, the sorter, the stage, speaker notes, the show and raygent.

import { runCommand } from './handlers.js';
import {
  bindShortcuts, buildMenubar, loadSpec, openContextMenu, openDialogTitle,
} from '../common/menus.js';
import { LAYOUTS, checkpoint, currentSlide, deck, discardCheckpointIfUnchanged, load, slidesState } from './model.js';
import { endShow, initShow, show } from './show.js';
import { renderSorter, initSorter } from './sorter.js';
import { editingBox, initStage, renderStage } from './stage.js';

const SLIDE_MENU = ['new_slide', 'duplicate_slide', 'delete_slide', 'move_slide_up', 'move_slide_down',
                    'slide_layout'];
const BOX_MENU = ['format_text', 'position_size', 'bold', 'italic', 'delete_box'];
const STAGE_MENU = ['insert_text_box', 'slide_layout', 'theme', 'new_slide'];

let spec;
const $ = (selector) => document.querySelector(selector);

function run(id) {
  Promise.resolve(runCommand(id, spec)).then(refresh);
}

function refreshNotes() {
  const notes = $('#notes');
  if (document.activeElement !== notes) notes.value = currentSlide().notes;
}

function refreshStatus() {
  const slide = currentSlide();
  const box = slide.boxes.find((b) => b.id === deck.selected);
  $('#status').textContent = `Slide ${deck.current + 1} of ${deck.slides.length} · Layout: `
    + `${LAYOUTS[slide.layout].name} · Theme: ${deck.theme}` + (box ? ` · Selected: ${box.label ?? box.role}` : '');
  const files = $('#files');
  files.replaceChildren(...deck.files.map((f) => Object.assign(document.createElement('li'),
                                                               { textContent: `${f.name} (${f.format})` })));
}

function refresh() {
  renderStage();
  renderSorter();
  refreshNotes();
  refreshStatus();
}

function wireNotes() {
  const notes = $('#notes');
  notes.addEventListener('focus', () => checkpoint());
  notes.addEventListener('input', () => { currentSlide().notes = notes.value; });
  notes.addEventListener('blur', () => { discardCheckpointIfUnchanged(); refresh(); });
}

function wireKeys() {
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape' || openDialogTitle()) return;
    if (document.activeElement?.dataset?.box) document.activeElement.blur();
    else if (deck.selected) { deck.selected = null; refresh(); }
  });
}

function state() {
  const box = currentSlide()?.boxes.find((b) => b.id === deck.selected) ?? null;
  return {
    slides: slidesState(),
    current: deck.current,
    theme: deck.theme,
    selectedBox: box ? { id: box.id, slide: deck.current } : null,
    editing: Boolean(editingBox()),
    presenting: show.presenting,
    showIndex: show.presenting ? show.index : null,
    showStart: show.presenting ? show.start : null,
    dialog: openDialogTitle(),
    files: deck.files.map((f) => ({ ...f, titles: [...f.titles] })),
    undoDepth: deck.undo.length,
    redoDepth: deck.redo.length,
  };
}

async function start() {
  spec = await loadSpec();
  buildMenubar($('#menubar'), spec, run);
  bindShortcuts(spec, run);
  wireKeys();
  initStage($('#stage'), refresh, renderSorter, (x, y, onBox) => {
    openContextMenu(x, y, onBox ? BOX_MENU : STAGE_MENU, spec, run);
  });
  initSorter($('#sorter'), refresh, (x, y) => openContextMenu(x, y, SLIDE_MENU, spec, run));
  initShow($('#show'), refresh);
  wireNotes();
  load({});
  refresh();
}

window.raygent = {
  ready: start(),
  getState: state,
  setState(obj) {
    endShow();
    load(obj ?? {});
    refresh();
  },
};
