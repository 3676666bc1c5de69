// The slide sorter: a listbox of slide thumbnails. A click selects a slide; dragging a thumbnail up or down and
// releasing it between two others moves the slide there. Thumbnails sit in fixed 14vh slots (style.css).

import { THEMES, deck, moveSlide, slideTitle } from './model.js';
import { styleBox } from './stage.js';

let list;
let onChange = () => {};
let drag = null;

function preview(slide) {
  const view = document.createElement('div');
  view.className = 'thumb-view';
  view.setAttribute('aria-hidden', 'true');
  view.style.background = THEMES[deck.theme].background;
  for (const box of slide.boxes) {
    const el = document.createElement('div');
    el.className = 'thumb-box';
    el.textContent = box.text;
    styleBox(el, box);
    view.append(el);
  }
  return view;
}

function thumbnail(slide, index) {
  const option = document.createElement('div');
  option.className = 'thumb';
  option.setAttribute('role', 'option');
  option.setAttribute('aria-selected', String(index === deck.current));
  option.setAttribute('aria-label', `Slide ${index + 1}: ${slideTitle(slide) || '(untitled)'}`);
  option.dataset.index = String(index);
  const number = document.createElement('span');
  number.className = 'thumb-number';
  number.setAttribute('aria-hidden', 'true');
  number.textContent = String(index + 1);
  option.append(number, preview(slide));
  option.addEventListener('mousedown', (event) => {
    if (event.button !== 0) return;
    event.preventDefault();
    drag = { index, y0: event.clientY, dragging: false };
  });
  return option;
}

/** Where a thumbnail dropped at viewport height `y` lands: the number of other thumbnails above that point. */
function dropIndex(y) {
  let index = 0;
  for (const option of list.querySelectorAll('.thumb')) {
    if (Number(option.dataset.index) === drag.index) continue;
    const rect = option.getBoundingClientRect();
    if (rect.top + rect.height / 2 < y) index++;
  }
  return index;
}

function onMouseMove(event) {
  if (!drag) return;
  if (!drag.dragging && Math.abs(event.clientY - drag.y0) > 5) drag.dragging = true;
  if (!drag.dragging) return;
  list.classList.add('dragging');
  const marker = list.querySelector('.drop-marker') ?? Object.assign(document.createElement('div'),
                                                                     { className: 'drop-marker' });
  const options = [...list.querySelectorAll('.thumb')].filter((o) => Number(o.dataset.index) !== drag.index);
  const at = dropIndex(event.clientY);
  list.insertBefore(marker, options[at] ?? null);
}

function onMouseUp(event) {
  if (!drag) return;
  const finished = drag;
  drag = null;
  list.classList.remove('dragging');
  list.querySelector('.drop-marker')?.remove();
  if (finished.dragging) {
    drag = finished;
    const to = dropIndex(event.clientY);
    drag = null;
    moveSlide(finished.index, to);
  } else {
    deck.current = finished.index;
    deck.selected = null;
  }
  onChange();
}

export function renderSorter() {
  list.replaceChildren(...deck.slides.map(thumbnail));
}

/** Wire the sorter list: `changed` after a selection or move, `contextMenu(x, y)` on a thumbnail. */
export function initSorter(element, changed, contextMenu) {
  list = element;
  onChange = changed;
  list.setAttribute('role', 'listbox');
  list.setAttribute('aria-label', 'Slides');
  window.addEventListener('mousemove', onMouseMove);
  window.addEventListener('mouseup', onMouseUp);
  list.addEventListener('contextmenu', (event) => {
    const option = event.target.closest('.thumb');
    if (!option) return;
    event.preventDefault();
    deck.current = Number(option.dataset.index);
    deck.selected = null;
    onChange();
    contextMenu(event.clientX, event.clientY);
  });
}
