// The slide stage: renders the current slide's text boxes and handles selecting, moving (drag) and editing them.
// A box is a contenteditable `role=textbox`: a click selects it, a drag moves it, a double-click (or focusing it,
// as `type(id, "…")` does) starts editing with the whole text selected, Escape or a click elsewhere ends it.

import {
  THEMES, boxName, checkpoint, currentSlide, deck, discardCheckpointIfUnchanged,
} from './model.js';

let stage;
let onChange = () => {};
let onText = () => {};
let drag = null;

const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));

/** Style a box element from its model (shared with the slide show's read-only view). */
export function styleBox(el, box) {
  const theme = THEMES[deck.theme];
  Object.assign(el.style, {
    left: box.x + '%', top: box.y + '%', width: box.w + '%', height: box.h + '%',
    fontSize: (box.size / 9.6) + 'cqw', fontWeight: box.bold ? '700' : '400',
    fontStyle: box.italic ? 'italic' : 'normal', color: box.color ?? theme.text, textAlign: box.align,
  });
}

function boxElement(box) {
  const el = document.createElement('div');
  el.className = 'box';
  el.dataset.box = box.id;
  el.contentEditable = 'true';
  el.setAttribute('role', 'textbox');
  el.setAttribute('aria-multiline', 'true');
  el.addEventListener('mousedown', (event) => onBoxMouseDown(event, el));
  el.addEventListener('dblclick', () => el.focus());
  el.addEventListener('focus', () => startEditing(el));
  el.addEventListener('blur', () => stopEditing(el));
  el.addEventListener('input', () => {
    const box = findBox(el.dataset.box);
    if (box) box.text = el.innerText.replace(/\n$/, '');
    onText();
  });
  return el;
}

function findBox(id) {
  return currentSlide()?.boxes.find((b) => b.id === id) ?? null;
}

function startEditing(el) {
  deck.selected = el.dataset.box;
  checkpoint();
  const range = document.createRange();
  range.selectNodeContents(el);
  const selection = getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  markSelection();
}

function stopEditing() {
  discardCheckpointIfUnchanged();
  onChange();
}

/** The box being edited (has focus), if any. */
export function editingBox() {
  const el = document.activeElement;
  return el?.dataset?.box ? findBox(el.dataset.box) : null;
}

function onBoxMouseDown(event, el) {
  if (event.button !== 0 || document.activeElement === el) return;
  event.preventDefault();
  if (document.activeElement?.dataset?.box) document.activeElement.blur();
  const box = findBox(el.dataset.box);
  deck.selected = box.id;
  markSelection();
  drag = { el, box, x0: event.clientX, y0: event.clientY, bx: box.x, by: box.y, moved: false };
}

/** The box position (percent, rounded) a drag reaches at this mouse event, and how far it went. */
function dragTarget(d, event) {
  const rect = stage.getBoundingClientRect();
  const dx = ((event.clientX - d.x0) / rect.width) * 100;
  const dy = ((event.clientY - d.y0) / rect.height) * 100;
  return [clamp(Math.round(d.bx + dx), 0, 100 - d.box.w), clamp(Math.round(d.by + dy), 0, 100 - d.box.h),
          Math.abs(dx) + Math.abs(dy)];
}

function onMouseMove(event) {
  if (!drag) return;
  const [x, y, distance] = dragTarget(drag, event);
  if (distance > 0.5) drag.moved = true;
  if (drag.moved) Object.assign(drag.el.style, { left: x + '%', top: y + '%' });
}

function onMouseUp(event) {
  if (!drag) return;
  const finished = drag;
  drag = null;
  const [x, y] = dragTarget(finished, event);
  if (finished.moved && (x !== finished.box.x || y !== finished.box.y)) {
    checkpoint();
    finished.box.x = x;
    finished.box.y = y;
  }
  onChange();
}

function markSelection() {
  for (const el of stage.querySelectorAll('.box')) {
    const selected = el.dataset.box === deck.selected;
    el.classList.toggle('selected', selected);
    el.setAttribute('aria-selected', String(selected));
  }
}

/** Draw the current slide, reusing box elements by id so that a box being edited keeps its caret. */
export function renderStage() {
  const slide = currentSlide();
  const theme = THEMES[deck.theme];
  stage.style.background = theme.background;
  stage.setAttribute('aria-label', `Slide ${deck.current + 1} of ${deck.slides.length}`);
  const keep = new Set(slide.boxes.map((b) => b.id));
  for (const el of stage.querySelectorAll('.box')) if (!keep.has(el.dataset.box)) el.remove();
  for (const box of slide.boxes) {
    let el = stage.querySelector(`.box[data-box="${box.id}"]`);
    if (!el) el = boxElement(box);
    el.setAttribute('aria-label', boxName(box));
    el.dataset.placeholder = box.role === 'title' ? 'Click to add title' : box.role === 'text' ? '' : 'Click to add text';
    styleBox(el, box);
    if (document.activeElement !== el && el.innerText.replace(/\n$/, '') !== box.text) el.textContent = box.text;
    stage.append(el);
  }
  if (deck.selected && !slide.boxes.some((b) => b.id === deck.selected)) deck.selected = null;
  markSelection();
}

/** Wire the stage element: `changed` after edits, `textChanged` while typing, `contextMenu(x, y, onBox)`. */
export function initStage(element, changed, textChanged, contextMenu) {
  stage = element;
  onChange = changed;
  onText = textChanged;
  window.addEventListener('mousemove', onMouseMove);
  window.addEventListener('mouseup', onMouseUp);
  stage.addEventListener('mousedown', (event) => {
    if (event.target !== stage || event.button !== 0) return;
    if (document.activeElement?.dataset?.box) document.activeElement.blur();
    deck.selected = null;
    markSelection();
  });
  stage.addEventListener('contextmenu', (event) => {
    event.preventDefault();
    const el = event.target.closest('.box');
    if (el && document.activeElement !== el) {
      deck.selected = el.dataset.box;
      markSelection();
    }
    contextMenu(event.clientX, event.clientY, Boolean(el));
  });
}
