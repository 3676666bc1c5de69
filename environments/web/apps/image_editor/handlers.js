// What each menu command does. Commands with parameters open a dialog first; every change is undoable.

import {
  activeLayer, checkpoint, doc, exportRecord, load, makeLayer, newLayerId, redo, reframe, undo,
} from './document.js';
import { blur, brightness, flipHorizontal, grayscale, invert, parseHex } from './paint.js';
import { openDialog } from '../common/menus.js';

const SWATCHES = { Black: '#000000', White: '#ffffff', Red: '#ff0000', Green: '#00a000', Blue: '#0000ff',
                   Yellow: '#ffff00', Orange: '#ff8000', Purple: '#800080', Gray: '#808080' };
const FORMATS = { PNG: '.png', JPEG: '.jpg', WebP: '.webp' };

function label(spec, id) {
  return spec.commands[id].label;
}

function applyFilter(name, params, fn) {
  checkpoint();
  fn(activeLayer());
  doc.filters.push({ filter: name, layer: activeLayer().name, params });
}

async function colorDialog(spec) {
  const values = await openDialog({
    title: label(spec, 'fg_color'),
    fields: [{ name: 'hex', label: 'Hex color', value: doc.fg }],
    validate: (v) => (parseHex(v.hex) ? null : 'Enter a color as #rrggbb'),
    extra(form, inputs) {
      const row = document.createElement('div');
      row.className = 'swatches';
      for (const [name, hex] of Object.entries(SWATCHES)) {
        const swatch = document.createElement('button');
        swatch.type = 'button';
        swatch.setAttribute('aria-label', name);
        swatch.style.background = hex;
        swatch.addEventListener('click', () => { inputs.hex.value = hex; });
        row.append(swatch);
      }
      form.append(row);
    },
  });
  if (values) doc.fg = '#' + /[0-9a-f]{6}/i.exec(values.hex)[0].toLowerCase();
}

async function newImage(spec) {
  const v = await openDialog({
    title: label(spec, 'new_image'),
    fields: [{ name: 'width', label: 'Width', type: 'number', value: 80, min: 4, max: 240 },
             { name: 'height', label: 'Height', type: 'number', value: 60, min: 4, max: 240 },
             { name: 'background', label: 'Background', type: 'select', options: ['White', 'Black', 'Transparent'] }],
  });
  if (!v) return;
  const fill = { White: '#ffffff', Black: '#000000', Transparent: null }[v.background];
  // A new image starts a fresh history (like opening a file); the tool settings and exported files stay.
  const exports = doc.exports;
  load({ width: Math.round(v.width), height: Math.round(v.height), layers: [{ name: 'Background', fill }],
         fg: doc.fg, brushSize: doc.brushSize, tool: doc.tool });
  doc.exports = exports;
}

async function exportImage(spec) {
  const v = await openDialog({
    title: label(spec, 'export'),
    fields: [{ name: 'name', label: 'File name', value: 'untitled' },
             { name: 'format', label: 'Format', type: 'select', options: Object.keys(FORMATS) }],
    okLabel: 'Export',
    validate: (values) => (values.name.trim() && !/[\\/]/.test(values.name) ? null : 'Enter a file name'),
  });
  if (!v) return;
  let name = v.name.trim();
  if (!/\.[a-z0-9]+$/i.test(name)) name += FORMATS[v.format];
  doc.exports = doc.exports.filter((f) => f.name !== name);
  doc.exports.push(exportRecord(name, v.format));
}

async function resizeCanvas(spec) {
  const v = await openDialog({
    title: label(spec, 'canvas_size'),
    fields: [{ name: 'width', label: 'Width', type: 'number', value: doc.width, min: 4, max: 240 },
             { name: 'height', label: 'Height', type: 'number', value: doc.height, min: 4, max: 240 }],
    okLabel: 'Resize',
  });
  if (!v) return;
  checkpoint();
  reframe(0, 0, Math.round(v.width), Math.round(v.height));
}

async function crop(spec) {
  const v = await openDialog({
    title: label(spec, 'crop'),
    fields: [{ name: 'left', label: 'Left', type: 'number', value: 0, min: 0 },
             { name: 'top', label: 'Top', type: 'number', value: 0, min: 0 },
             { name: 'width', label: 'Width', type: 'number', value: doc.width, min: 1 },
             { name: 'height', label: 'Height', type: 'number', value: doc.height, min: 1 }],
    okLabel: 'Crop',
    validate: (r) => (r.left + r.width <= doc.width && r.top + r.height <= doc.height ? null
      : 'The rectangle must lie inside the image'),
  });
  if (!v) return;
  checkpoint();
  reframe(Math.round(v.left), Math.round(v.top), Math.round(v.width), Math.round(v.height));
}

function uniqueName(base) {
  const names = new Set(doc.layers.map((l) => l.name));
  if (!names.has(base)) return base;
  let n = 2;
  while (names.has(`${base} ${n}`)) n++;
  return `${base} ${n}`;
}

async function newLayer(spec) {
  const v = await openDialog({
    title: label(spec, 'new_layer'),
    fields: [{ name: 'name', label: 'Layer name', value: uniqueName('Layer') },
             { name: 'fill', label: 'Fill with', type: 'select', options: ['Transparent', 'White', 'Foreground'] }],
    validate: (values) => (values.name.trim() ? null : 'Enter a layer name'),
  });
  if (!v) return;
  checkpoint();
  const fill = { Transparent: null, White: '#ffffff', Foreground: doc.fg }[v.fill];
  doc.layers.splice(doc.active + 1, 0, makeLayer(uniqueName(v.name.trim()), doc.width, doc.height, fill));
  doc.active += 1;
}

async function renameLayer(spec) {
  const layer = activeLayer();
  const v = await openDialog({
    title: label(spec, 'rename_layer'),
    fields: [{ name: 'name', label: 'Layer name', value: layer.name }],
    validate: (values) => (values.name.trim() ? null : 'Enter a layer name'),
  });
  if (!v || v.name.trim() === layer.name) return;
  checkpoint();
  layer.name = uniqueName(v.name.trim());
}

async function layerOpacity(spec) {
  const v = await openDialog({
    title: label(spec, 'layer_opacity'),
    fields: [{ name: 'opacity', label: 'Opacity (%)', type: 'number', value: activeLayer().opacity, min: 0, max: 100 }],
  });
  if (!v) return;
  checkpoint();
  activeLayer().opacity = Math.round(v.opacity);
}

async function filterDialog(spec, id, field) {
  const v = await openDialog({ title: label(spec, id), fields: [field], okLabel: 'Apply' });
  return v ? Math.round(v[field.name]) : null;
}

function moveLayer(step) {
  const to = doc.active + step;
  if (to < 0 || to >= doc.layers.length) return;
  checkpoint();
  const [layer] = doc.layers.splice(doc.active, 1);
  doc.layers.splice(to, 0, layer);
  doc.active = to;
}

const HANDLERS = {
  new_image: newImage,
  export: exportImage,
  undo: () => undo(),
  redo: () => redo(),
  fg_color: colorDialog,
  canvas_size: resizeCanvas,
  crop,
  flip_horizontal: () => { checkpoint(); doc.layers.forEach(flipHorizontal); },
  new_layer: newLayer,
  rename_layer: renameLayer,
  duplicate_layer: () => {
    checkpoint();
    const source = activeLayer();
    const copy = { ...source, id: newLayerId(), name: uniqueName(source.name + ' copy'),
                   data: new Uint8ClampedArray(source.data) };
    doc.layers.splice(doc.active + 1, 0, copy);
    doc.active += 1;
  },
  delete_layer: () => {
    if (doc.layers.length < 2) return;
    checkpoint();
    doc.layers.splice(doc.active, 1);
    doc.active = Math.max(0, doc.active - 1);
  },
  raise_layer: () => moveLayer(1),
  lower_layer: () => moveLayer(-1),
  layer_opacity: layerOpacity,
  toggle_visibility: () => { checkpoint(); activeLayer().visible = !activeLayer().visible; },
  filter_invert: () => applyFilter('invert', {}, invert),
  filter_grayscale: () => applyFilter('grayscale', {}, grayscale),
  async filter_blur(spec) {
    const radius = await filterDialog(spec, 'filter_blur',
                                      { name: 'radius', label: 'Radius', type: 'number', value: 1, min: 1, max: 10 });
    if (radius !== null) applyFilter('blur', { radius }, (layer) => blur(layer, radius));
  },
  async filter_brightness(spec) {
    const amount = await filterDialog(spec, 'filter_brightness',
                                      { name: 'amount', label: 'Amount', type: 'number', value: 0, min: -100, max: 100 });
    if (amount !== null) applyFilter('brightness', { amount }, (layer) => brightness(layer, amount));
  },
};

/** Run a command by id; tool commands select the tool. Returns a promise when a dialog is involved. */
export function runCommand(id, spec) {
  if (id.startsWith('tool_')) {
    doc.tool = id;
    return undefined;
  }
  return HANDLERS[id]?.(spec);
}
