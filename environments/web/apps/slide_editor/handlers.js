// What each menu command does. Commands with parameters open a dialog first; every change is undoable.

import { openDialog } from '../common/menus.js';
import {
  LAYOUTS, THEMES, applyLayout, checkpoint, copySlide, currentSlide, deck, makeBox, makeSlide, moveSlide, redo,
  selectedBox, slideTitle, textBoxLabel, undo,
} from './model.js';
import { startShow } from './show.js';

export const COLORS = { Automatic: null, Black: '#000000', White: '#ffffff', Red: '#c9211e', Blue: '#2a6099',
                        Green: '#3c8d2f', Orange: '#e8751a', Purple: '#7030a0', Gray: '#808080' };
const FORMATS = { ODP: '.odp', PPTX: '.pptx', PDF: '.pdf' };
const ALIGNMENTS = { Left: 'left', Center: 'center', Right: 'right' };

const label = (spec, id) => spec.commands[id].label;
const nameOf = (table, value) => Object.keys(table).find((k) => table[k] === value);

/** Focus the box's element after the next render, with its text selected, ready for typing. */
function focusBoxSoon(id) {
  requestAnimationFrame(() => document.querySelector(`.box[data-box="${id}"]`)?.focus());
}

async function saveAs(spec) {
  const v = await openDialog({
    title: label(spec, 'save_as'),
    fields: [{ name: 'name', label: 'File name', value: 'presentation' },
             { name: 'format', label: 'Format', type: 'select', options: Object.keys(FORMATS) }],
    okLabel: 'Save',
    validate: (values) => (values.name.trim() && !/[\\/]/.test(values.name) ? null : 'Enter a file name'),
  });
  if (!v) return;
  let name = v.name.trim();
  if (!/\.[a-z0-9]+$/i.test(name)) name += FORMATS[v.format];
  deck.files = deck.files.filter((f) => f.name !== name);
  deck.files.push({ name, format: v.format, theme: deck.theme, slides: deck.slides.length,
                    titles: deck.slides.map(slideTitle) });
}

async function layoutDialog(spec) {
  const names = Object.fromEntries(Object.entries(LAYOUTS).map(([id, layout]) => [layout.name, id]));
  const v = await openDialog({
    title: label(spec, 'slide_layout'),
    fields: [{ name: 'layout', label: 'Layout', type: 'select', options: Object.keys(names),
               value: LAYOUTS[currentSlide().layout].name }],
    okLabel: 'Apply',
  });
  if (!v || names[v.layout] === currentSlide().layout) return;
  checkpoint();
  applyLayout(currentSlide(), names[v.layout]);
}

async function formatDialog(spec) {
  const box = selectedBox();
  if (!box) return;
  const v = await openDialog({
    title: label(spec, 'format_text'),
    fields: [{ name: 'size', label: 'Font size', type: 'number', value: box.size, min: 8, max: 96 },
             { name: 'color', label: 'Font color', type: 'select', options: Object.keys(COLORS),
               value: nameOf(COLORS, box.color) ?? 'Automatic' },
             { name: 'align', label: 'Alignment', type: 'select', options: Object.keys(ALIGNMENTS),
               value: nameOf(ALIGNMENTS, box.align) },
             { name: 'bold', label: 'Bold', type: 'checkbox', value: box.bold },
             { name: 'italic', label: 'Italic', type: 'checkbox', value: box.italic }],
  });
  if (!v) return;
  checkpoint();
  Object.assign(box, { size: Math.round(v.size), color: COLORS[v.color], align: ALIGNMENTS[v.align], bold: v.bold,
                       italic: v.italic });
}

async function positionDialog(spec) {
  const box = selectedBox();
  if (!box) return;
  const v = await openDialog({
    title: label(spec, 'position_size'),
    fields: [{ name: 'x', label: 'X (%)', type: 'number', value: box.x, min: 0, max: 95 },
             { name: 'y', label: 'Y (%)', type: 'number', value: box.y, min: 0, max: 95 },
             { name: 'w', label: 'Width (%)', type: 'number', value: box.w, min: 5, max: 100 },
             { name: 'h', label: 'Height (%)', type: 'number', value: box.h, min: 5, max: 100 }],
    validate: (r) => (r.x + r.w <= 100 && r.y + r.h <= 100 ? null : 'The box must stay on the slide'),
  });
  if (!v) return;
  checkpoint();
  Object.assign(box, { x: Math.round(v.x), y: Math.round(v.y), w: Math.round(v.w), h: Math.round(v.h) });
}

async function themeDialog(spec) {
  const v = await openDialog({
    title: label(spec, 'theme'),
    fields: [{ name: 'theme', label: 'Theme', type: 'select', options: Object.keys(THEMES), value: deck.theme }],
    okLabel: 'Apply',
  });
  if (!v || v.theme === deck.theme) return;
  checkpoint();
  deck.theme = v.theme;
}

function toggle(property) {
  const box = selectedBox();
  if (!box) return;
  checkpoint();
  box[property] = !box[property];
}

const HANDLERS = {
  save_as: saveAs,
  undo,
  redo,
  delete_box: () => {
    const box = selectedBox();
    if (!box) return;
    checkpoint();
    currentSlide().boxes = currentSlide().boxes.filter((b) => b !== box);
    deck.selected = null;
  },
  new_slide: () => {
    checkpoint();
    deck.slides.splice(deck.current + 1, 0, makeSlide({ layout: 'title_content' }));
    deck.current += 1;
    deck.selected = null;
  },
  duplicate_slide: () => {
    checkpoint();
    deck.slides.splice(deck.current + 1, 0, copySlide(currentSlide()));
    deck.current += 1;
    deck.selected = null;
  },
  delete_slide: () => {
    if (deck.slides.length < 2) return;
    checkpoint();
    deck.slides.splice(deck.current, 1);
    deck.current = Math.min(deck.current, deck.slides.length - 1);
    deck.selected = null;
  },
  move_slide_up: () => moveSlide(deck.current, deck.current - 1),
  move_slide_down: () => moveSlide(deck.current, deck.current + 1),
  slide_layout: layoutDialog,
  insert_text_box: () => {
    checkpoint();
    const slide = currentSlide();
    const box = makeBox({ role: 'text', label: textBoxLabel(slide) });
    slide.boxes.push(box);
    deck.selected = box.id;
    focusBoxSoon(box.id);
  },
  format_text: formatDialog,
  bold: () => toggle('bold'),
  italic: () => toggle('italic'),
  position_size: positionDialog,
  theme: themeDialog,
  start_show: () => startShow(0),
  start_current: () => startShow(deck.current),
};

/** Run a command by id; returns a promise when a dialog is involved. */
export function runCommand(id, spec) {
  return HANDLERS[id]?.(spec);
}
