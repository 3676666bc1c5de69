// The canvas view: draws the composite and turns mouse input into tool operations on the active layer.
// The view always fills the same viewport box (see style.css), so pixel (x, y) of a W×H image sits at a fixed
// fraction of the viewport; that is what coordinate actions (0–1000 grid) aim at.

import { activeLayer, checkpoint, composite, doc } from './document.js';
import { fillRect, floodFill, parseHex, strokeLine, toHex } from './paint.js';

let canvas;
let ctx;
let onChange = () => {};
let drag = null;

/** Redraw the composite (and the rectangle tool's preview while dragging). */
export function render() {
  if (canvas.width !== doc.width || canvas.height !== doc.height) {
    canvas.width = doc.width;
    canvas.height = doc.height;
  }
  ctx.putImageData(new ImageData(composite(), doc.width, doc.height), 0, 0);
  canvas.setAttribute('aria-label', `Image canvas, ${doc.width} by ${doc.height} pixels`);
  if (drag && drag.tool === 'tool_rectangle' && drag.end) {
    const [x0, y0] = drag.start, [x1, y1] = drag.end;
    ctx.fillStyle = doc.fg;
    ctx.globalAlpha = 0.6;
    ctx.fillRect(Math.min(x0, x1), Math.min(y0, y1), Math.abs(x1 - x0) + 1, Math.abs(y1 - y0) + 1);
    ctx.globalAlpha = 1;
  }
}

function pixelAt(event) {
  const box = canvas.getBoundingClientRect();
  const x = Math.floor(((event.clientX - box.left) / box.width) * doc.width);
  const y = Math.floor(((event.clientY - box.top) / box.height) * doc.height);
  return [Math.max(0, Math.min(doc.width - 1, x)), Math.max(0, Math.min(doc.height - 1, y))];
}

function paintColor(tool) {
  return tool === 'tool_eraser' ? [0, 0, 0, 0] : parseHex(doc.fg);
}

function pick(x, y) {
  const data = composite();
  const p = (y * doc.width + x) * 4;
  if (data[p + 3] === 0) return;
  doc.fg = toHex(data[p], data[p + 1], data[p + 2]);
}

function onMouseDown(event) {
  if (event.button !== 0) return;
  event.preventDefault();
  const [x, y] = pixelAt(event);
  const tool = doc.tool;
  const layer = activeLayer();
  if (tool === 'tool_brush' || tool === 'tool_eraser') {
    checkpoint();
    strokeLine(layer, x, y, x, y, doc.brushSize, paintColor(tool));
    drag = { tool, last: [x, y] };
  } else if (tool === 'tool_rectangle') {
    drag = { tool, start: [x, y], end: [x, y] };
  } else if (tool === 'tool_fill') {
    checkpoint();
    if (!floodFill(layer, x, y, parseHex(doc.fg))) doc.undo.pop();
  } else if (tool === 'tool_picker') {
    pick(x, y);
  }
  onChange();
}

function onMouseMove(event) {
  if (!drag) return;
  const [x, y] = pixelAt(event);
  if (drag.tool === 'tool_rectangle') {
    drag.end = [x, y];
  } else {
    strokeLine(activeLayer(), drag.last[0], drag.last[1], x, y, doc.brushSize, paintColor(drag.tool));
    drag.last = [x, y];
  }
  render();
}

function onMouseUp(event) {
  if (!drag) return;
  const finished = drag;
  drag = null;
  if (finished.tool === 'tool_rectangle') {
    const [x1, y1] = pixelAt(event);
    checkpoint();
    fillRect(activeLayer(), finished.start[0], finished.start[1], x1, y1, parseHex(doc.fg));
  } else {
    const [x, y] = pixelAt(event);
    strokeLine(activeLayer(), finished.last[0], finished.last[1], x, y, doc.brushSize, paintColor(finished.tool));
  }
  onChange();
}

/** Wire the canvas element; `changed` is called after every edit (to refresh panels and render). */
export function initCanvas(element, changed, contextMenu) {
  canvas = element;
  ctx = canvas.getContext('2d', { willReadFrequently: true });
  onChange = changed;
  canvas.addEventListener('mousedown', onMouseDown);
  window.addEventListener('mousemove', onMouseMove);
  window.addEventListener('mouseup', onMouseUp);
  canvas.addEventListener('contextmenu', (event) => {
    event.preventDefault();
    contextMenu(event.clientX, event.clientY);
  });
}
