// The image document: size, layers (bottom to top), the active layer, undo/redo, and the summaries checkers read.

import { blankLayerData, cropData, fillRect, parseHex, roundHalfUp, toHex } from './paint.js';

export const CELL = 4;
const UNDO_LIMIT = 40;
const TOP_COLORS = 12;

let nextLayerId = 1;

/** A fresh layer id (ids only tell layers apart in the DOM; checkers use names). */
export function newLayerId() {
  return nextLayerId++;
}

export function makeLayer(name, width, height, fill) {
  return { id: newLayerId(), name, visible: true, opacity: 100, width, height,
           data: blankLayerData(width, height, fill ? parseHex(fill) : null) };
}

export const doc = {
  width: 80, height: 60, layers: [], active: 0, filters: [], exports: [],
  undo: [], redo: [], fg: '#000000', brushSize: 3, tool: 'tool_brush',
};

function snapshot() {
  return {
    width: doc.width, height: doc.height, active: doc.active, filters: doc.filters.map((f) => ({ ...f })),
    layers: doc.layers.map((l) => ({ ...l, data: new Uint8ClampedArray(l.data) })),
  };
}

function restore(shot) {
  doc.width = shot.width;
  doc.height = shot.height;
  doc.active = shot.active;
  doc.filters = shot.filters;
  doc.layers = shot.layers;
}

/** Record the document before a change, so Undo can return to it. */
export function checkpoint() {
  doc.undo.push(snapshot());
  if (doc.undo.length > UNDO_LIMIT) doc.undo.shift();
  doc.redo = [];
}

export function undo() {
  if (!doc.undo.length) return false;
  doc.redo.push(snapshot());
  restore(doc.undo.pop());
  return true;
}

export function redo() {
  if (!doc.redo.length) return false;
  doc.undo.push(snapshot());
  restore(doc.redo.pop());
  return true;
}

export function activeLayer() {
  return doc.layers[doc.active];
}

/**
 * Reset to a task's initial state: {width, height, layers: [{name, visible, opacity, fill, rects: [{x, y, w, h,
 * color}]}] (bottom to top), active: name, fg, brushSize, tool}.
 */
export function load(state) {
  doc.width = state.width ?? 80;
  doc.height = state.height ?? 60;
  const specs = state.layers?.length ? state.layers : [{ name: 'Background', fill: '#ffffff' }];
  doc.layers = specs.map((spec) => {
    const layer = makeLayer(spec.name, doc.width, doc.height, spec.fill);
    layer.visible = spec.visible ?? true;
    layer.opacity = spec.opacity ?? 100;
    for (const r of spec.rects ?? []) fillRect(layer, r.x, r.y, r.x + r.w - 1, r.y + r.h - 1, parseHex(r.color));
    return layer;
  });
  const active = doc.layers.findIndex((l) => l.name === state.active);
  doc.active = active >= 0 ? active : doc.layers.length - 1;
  doc.fg = state.fg ?? '#000000';
  doc.brushSize = state.brushSize ?? 3;
  doc.tool = state.tool ?? 'tool_brush';
  doc.filters = [];
  doc.exports = [];
  doc.undo = [];
  doc.redo = [];
}

/** Crop every layer to (left, top, width, height); also used by Canvas Size with left = top = 0. */
export function reframe(left, top, width, height) {
  for (const layer of doc.layers) {
    layer.data = cropData(layer, left, top, width, height);
    layer.width = width;
    layer.height = height;
  }
  doc.width = width;
  doc.height = height;
}

/** Composite the visible layers (source-over with each layer's opacity) onto transparency. */
export function composite() {
  const out = new Float64Array(doc.width * doc.height * 4);
  for (const layer of doc.layers) {
    if (!layer.visible) continue;
    const k = layer.opacity / 100;
    for (let p = 0; p < out.length; p += 4) {
      const sa = (layer.data[p + 3] / 255) * k;
      if (sa === 0) continue;
      const da = out[p + 3];
      const oa = sa + da * (1 - sa);
      for (let c = 0; c < 3; c++) out[p + c] = (layer.data[p + c] * sa + out[p + c] * da * (1 - sa)) / oa;
      out[p + 3] = oa;
    }
  }
  const data = new Uint8ClampedArray(out.length);
  for (let p = 0; p < out.length; p += 4) {
    for (let c = 0; c < 3; c++) data[p + c] = Math.round(out[p + c]);
    data[p + 3] = Math.round(out[p + 3] * 255);
  }
  return data;
}

/** Compact pixel summary: a grid of CELL×CELL averages ('#rrggbbaa', rows top to bottom) and color counts. */
export function summarize(data, width, height) {
  const grid = [];
  for (let cy = 0; cy < height; cy += CELL) {
    const row = [];
    for (let cx = 0; cx < width; cx += CELL) {
      const sums = [0, 0, 0, 0];
      let n = 0;
      for (let y = cy; y < Math.min(cy + CELL, height); y++) {
        for (let x = cx; x < Math.min(cx + CELL, width); x++) {
          const p = (y * width + x) * 4;
          for (let c = 0; c < 4; c++) sums[c] += data[p + c];
          n++;
        }
      }
      row.push(toHex(...sums.map((s) => roundHalfUp(s, n))));
    }
    grid.push(row);
  }
  const counts = new Map();
  for (let p = 0; p < data.length; p += 4) {
    const key = data[p + 3] === 0 ? 'transparent' : toHex(data[p], data[p + 1], data[p + 2], data[p + 3]);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const top = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP_COLORS);
  return { grid, colors: Object.fromEntries(top), distinct: counts.size };
}

/** The composite's summary plus format metadata: what an export writes to the in-app file list. The summary
 * is the same for every format (a JPEG is not flattened onto white), so checkers need not know the codec. */
export function exportRecord(name, format) {
  return { name, format, width: doc.width, height: doc.height, ...summarize(composite(), doc.width, doc.height) };
}
