// Image editor: menus and shortcuts from ui.json, the toolbox, the layers panel, dialogs and window.raygent.

import { initCanvas, render } from './canvas_view.js';
import { runCommand } from './handlers.js';
import { CELL, activeLayer, checkpoint, composite, doc, load, summarize } from './document.js';
import {
  bindShortcuts, buildMenubar, loadSpec, openContextMenu, openDialogTitle, selectOnFocus,
} from '../common/menus.js';

const TOOLS = ['tool_brush', 'tool_rectangle', 'tool_fill', 'tool_eraser', 'tool_picker'];
const CANVAS_MENU = ['undo', 'redo', 'fg_color', 'tool_fill', 'filter_invert', 'new_layer'];
const LAYER_MENU = ['rename_layer', 'duplicate_layer', 'delete_layer', 'raise_layer', 'lower_layer',
                    'layer_opacity', 'toggle_visibility'];

let spec;
const $ = (selector) => document.querySelector(selector);

function el(tag, attrs = {}, text) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) element.setAttribute(key, value);
  if (text !== undefined) element.textContent = text;
  return element;
}

function run(id) {
  Promise.resolve(runCommand(id, spec)).then(refresh);
}

function buildToolbox() {
  const box = $('#toolbox');
  box.replaceChildren();
  for (const id of TOOLS) {
    const button = el('button', { type: 'button', 'data-command': id, 'aria-label': spec.commands[id].label,
                                  title: spec.commands[id].label }, spec.commands[id].label);
    button.addEventListener('click', () => run(id));
    box.append(button);
  }
}

function refreshToolbox() {
  for (const button of document.querySelectorAll('#toolbox button')) {
    button.setAttribute('aria-pressed', String(button.dataset.command === doc.tool));
  }
  const size = $('#brush-size');
  if (document.activeElement !== size) size.value = String(doc.brushSize);
  $('#fg-swatch').style.background = doc.fg;
  $('#fg-value').textContent = doc.fg;
}

function layerRow(layer, index) {
  const row = el('li', { class: 'layer-row' + (index === doc.active ? ' active' : '') });
  const visible = el('input', { type: 'checkbox', 'aria-label': 'Show ' + layer.name });
  visible.checked = layer.visible;
  visible.addEventListener('change', () => {
    checkpoint();
    layer.visible = visible.checked;
    refresh();
  });
  const name = el('button', { type: 'button', class: 'layer-name', 'aria-pressed': String(index === doc.active) },
                  layer.name);
  name.addEventListener('click', () => { doc.active = index; refresh(); });
  const opacity = el('span', { class: 'layer-opacity' }, layer.opacity + '%');
  row.append(visible, name, opacity);
  row.addEventListener('contextmenu', (event) => {
    event.preventDefault();
    event.stopPropagation();
    doc.active = index;
    refresh();
    openContextMenu(event.clientX, event.clientY, LAYER_MENU, spec, run);
  });
  return row;
}

function refreshLayers() {
  const list = $('#layers');
  list.replaceChildren();
  for (let i = doc.layers.length - 1; i >= 0; i--) list.append(layerRow(doc.layers[i], i));
  const files = $('#files');
  files.replaceChildren();
  for (const file of doc.exports) files.append(el('li', {}, `${file.name} (${file.format}, ${file.width}×${file.height})`));
  if (!doc.exports.length) files.append(el('li', { class: 'empty' }, 'No exported files'));
}

function refresh() {
  render();
  refreshToolbox();
  refreshLayers();
  const tool = spec.commands[doc.tool]?.label ?? doc.tool;
  $('#status').textContent = `${doc.width} × ${doc.height} px · Layer: ${activeLayer()?.name} · Tool: ${tool}`;
}

function wireOptions() {
  const size = $('#brush-size');
  selectOnFocus(size);
  size.addEventListener('input', () => {
    const value = Math.round(Number(size.value));
    if (Number.isFinite(value) && value >= 1 && value <= 50) doc.brushSize = value;
  });
  size.addEventListener('change', refreshToolbox);
  $('#fg-button').addEventListener('click', () => run('fg_color'));
}

function state() {
  return {
    width: doc.width,
    height: doc.height,
    cellSize: CELL,
    layers: doc.layers.map((l) => ({ name: l.name, visible: l.visible, opacity: l.opacity,
                                     ...summarize(l.data, l.width, l.height) })),
    activeLayer: activeLayer()?.name ?? null,
    tool: doc.tool,
    fgColor: doc.fg,
    brushSize: doc.brushSize,
    filters: doc.filters.map((f) => ({ ...f })),
    composite: summarize(composite(), doc.width, doc.height),
    exports: doc.exports.map((f) => ({ ...f })),
    dialog: openDialogTitle(),
    undoDepth: doc.undo.length,
    redoDepth: doc.redo.length,
  };
}

async function start() {
  spec = await loadSpec();
  buildMenubar($('#menubar'), spec, run);
  bindShortcuts(spec, run);
  buildToolbox();
  wireOptions();
  initCanvas($('#canvas'), refresh, (x, y) => openContextMenu(x, y, CANVAS_MENU, spec, run));
  load({});
  refresh();
}

window.raygent = {
  ready: start(),
  getState: state,
  setState(obj) {
    load(obj ?? {});
    refresh();
  },
};
