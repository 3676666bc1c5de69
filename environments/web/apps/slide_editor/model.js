// The presentation: slides (layout, text boxes, notes), the theme, the current slide, undo/redo, saved files.
// Box geometry is in percent of the slide (x, y, w, h), so it does not depend on the window size.

export const LAYOUTS = {
  title: { name: 'Title Slide', boxes: [
    { role: 'title', x: 10, y: 28, w: 80, h: 20, size: 40, align: 'center' },
    { role: 'subtitle', x: 10, y: 52, w: 80, h: 14, size: 24, align: 'center' }] },
  title_content: { name: 'Title and Content', boxes: [
    { role: 'title', x: 5, y: 5, w: 90, h: 15, size: 32, align: 'left' },
    { role: 'body', x: 5, y: 24, w: 90, h: 68, size: 20, align: 'left' }] },
  two_content: { name: 'Two Content', boxes: [
    { role: 'title', x: 5, y: 5, w: 90, h: 15, size: 32, align: 'left' },
    { role: 'left', x: 5, y: 24, w: 43, h: 68, size: 20, align: 'left' },
    { role: 'right', x: 52, y: 24, w: 43, h: 68, size: 20, align: 'left' }] },
  blank: { name: 'Blank', boxes: [] },
};

export const THEMES = {
  Plain: { background: '#ffffff', text: '#1a1a1a', accent: '#3465a4' },
  Ocean: { background: '#0b3d91', text: '#ffffff', accent: '#7fd3ff' },
  Forest: { background: '#1f4d2b', text: '#f1f8e9', accent: '#a5d66f' },
  Sunset: { background: '#fbe3d6', text: '#5a1e0e', accent: '#e4572e' },
  Midnight: { background: '#121212', text: '#e0e0e0', accent: '#bb86fc' },
  Paper: { background: '#f5f0e6', text: '#333333', accent: '#8c6d46' },
};

export const ROLE_NAMES = { title: 'Title', subtitle: 'Subtitle', body: 'Content', left: 'Left content',
                            right: 'Right content' };
const BODY_ROLES = ['subtitle', 'body', 'left', 'right'];
const UNDO_LIMIT = 60;

let nextId = 1;
const newId = (prefix) => `${prefix}${nextId++}`;

export const deck = { slides: [], theme: 'Plain', current: 0, selected: null, files: [], undo: [], redo: [] };

/** The accessible name of a box: its placeholder role's name, or "Text box N". */
export function boxName(box) {
  return box.role === 'text' ? box.label : ROLE_NAMES[box.role];
}

/** A box from a partial spec (defaults: a free text box in the middle of the slide). */
export function makeBox(spec) {
  return { id: newId('b'), role: spec.role ?? 'text', label: spec.label ?? null, text: spec.text ?? '',
           x: spec.x ?? 30, y: spec.y ?? 40, w: spec.w ?? 40, h: spec.h ?? 12, size: spec.size ?? 20,
           bold: Boolean(spec.bold), italic: Boolean(spec.italic), color: spec.color ?? null,
           align: spec.align ?? 'left' };
}

function placeholders(layout) {
  return (LAYOUTS[layout] ?? LAYOUTS.blank).boxes.map((spec) => makeBox(spec));
}

/** The next free "Text box N" label on a slide. */
export function textBoxLabel(slide) {
  const used = slide.boxes.filter((b) => b.role === 'text').map((b) => Number(/\d+$/.exec(b.label)?.[0] ?? 0));
  return `Text box ${used.length ? Math.max(...used) + 1 : 1}`;
}

/** Build a slide from a setState spec: {layout, texts: {role: text}, boxes: [{text, x, y, ...}], notes}. */
export function makeSlide(spec = {}) {
  const layout = LAYOUTS[spec.layout] ? spec.layout : 'title_content';
  const slide = { id: newId('s'), layout, notes: spec.notes ?? '', boxes: placeholders(layout) };
  for (const box of slide.boxes) box.text = spec.texts?.[box.role] ?? '';
  for (const extra of spec.boxes ?? []) {
    slide.boxes.push(makeBox({ ...extra, role: 'text', label: extra.label ?? textBoxLabel(slide) }));
  }
  return slide;
}

export function copySlide(slide) {
  return { ...slide, id: newId('s'), boxes: slide.boxes.map((b) => ({ ...b, id: newId('b') })) };
}

/** Re-lay a slide: placeholders keep their text by role (body-like ones in order); text that finds no place
 * becomes a free text box where it was. */
export function applyLayout(slide, layout) {
  const fresh = placeholders(layout);
  const old = slide.boxes.filter((b) => b.role !== 'text');
  const free = slide.boxes.filter((b) => b.role === 'text');
  const oldTitle = old.find((b) => b.role === 'title');
  const newTitle = fresh.find((b) => b.role === 'title');
  const oldBodies = old.filter((b) => BODY_ROLES.includes(b.role));
  const newBodies = fresh.filter((b) => BODY_ROLES.includes(b.role));
  const leftovers = [];
  if (oldTitle) (newTitle ? Object.assign(newTitle, { text: oldTitle.text }) : leftovers.push(oldTitle));
  oldBodies.forEach((b, i) => (newBodies[i] ? (newBodies[i].text = b.text) : leftovers.push(b)));
  slide.layout = layout;
  slide.boxes = [...fresh, ...free];
  for (const box of leftovers) {
    if (box.text.trim()) slide.boxes.push({ ...box, role: 'text', label: textBoxLabel(slide) });
  }
}

export function currentSlide() {
  return deck.slides[deck.current];
}

export function selectedBox() {
  return currentSlide()?.boxes.find((b) => b.id === deck.selected) ?? null;
}

function snapshot() {
  return JSON.stringify({ slides: deck.slides, theme: deck.theme, current: deck.current });
}

function restore(text) {
  const shot = JSON.parse(text);
  deck.slides = shot.slides;
  deck.theme = shot.theme;
  deck.current = Math.min(shot.current, deck.slides.length - 1);
  deck.selected = null;
}

/** Record the deck before a change, so Undo can return to it. */
export function checkpoint() {
  deck.undo.push(snapshot());
  if (deck.undo.length > UNDO_LIMIT) deck.undo.shift();
  deck.redo = [];
}

/** Drop the last checkpoint if nothing changed since (e.g. a text edit that typed nothing). */
export function discardCheckpointIfUnchanged() {
  if (deck.undo.length && deck.undo[deck.undo.length - 1] === snapshot()) deck.undo.pop();
}

export function undo() {
  if (!deck.undo.length) return;
  deck.redo.push(snapshot());
  restore(deck.undo.pop());
}

export function redo() {
  if (!deck.redo.length) return;
  deck.undo.push(snapshot());
  restore(deck.redo.pop());
}

/** Reset to a task's initial state: {slides: [slide specs], theme, current}. */
export function load(state) {
  const specs = state.slides?.length ? state.slides : [{ layout: 'title' }];
  deck.slides = specs.map(makeSlide);
  deck.theme = THEMES[state.theme] ? state.theme : 'Plain';
  deck.current = Math.max(0, Math.min(state.current ?? 0, deck.slides.length - 1));
  deck.selected = null;
  deck.files = [];
  deck.undo = [];
  deck.redo = [];
}

/** A slide's title: its title placeholder's text, else its first non-empty box. */
export function slideTitle(slide) {
  const title = slide.boxes.find((b) => b.role === 'title');
  return (title?.text || slide.boxes.find((b) => b.text.trim())?.text || '').trim();
}

export function moveSlide(from, to) {
  if (from === to || to < 0 || to >= deck.slides.length) return false;
  checkpoint();
  const [slide] = deck.slides.splice(from, 1);
  deck.slides.splice(to, 0, slide);
  deck.current = to;
  return true;
}

/** What checkers read about the slides. */
export function slidesState() {
  return deck.slides.map((slide) => ({
    id: slide.id, layout: slide.layout, title: slideTitle(slide), notes: slide.notes,
    boxes: slide.boxes.map((b) => ({ id: b.id, name: boxName(b), role: b.role, text: b.text, x: b.x, y: b.y,
                                     w: b.w, h: b.h, size: b.size, bold: b.bold, italic: b.italic,
                                     color: b.color, align: b.align })),
  }));
}
