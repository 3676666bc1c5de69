// Presentation mode: a full-window overlay showing one slide at a time, driven by keys, clicks or its buttons.
// Next after the last slide shows an end screen; next again (or Escape, or End show) returns to editing.

import { THEMES, boxName, deck } from './model.js';
import { styleBox } from './stage.js';

export const show = { presenting: false, index: 0, start: 0 };
let overlay;
let onChange = () => {};

const NEXT_KEYS = new Set(['ArrowRight', 'ArrowDown', 'PageDown', ' ', 'Enter', 'n', 'N']);
const PREV_KEYS = new Set(['ArrowLeft', 'ArrowUp', 'PageUp', 'Backspace', 'p', 'P']);

function button(label, action) {
  const el = document.createElement('button');
  el.type = 'button';
  el.textContent = label;
  el.addEventListener('click', (event) => { event.stopPropagation(); action(); });
  return el;
}

function render() {
  overlay.hidden = !show.presenting;
  if (!show.presenting) return;
  const view = overlay.querySelector('.show-slide');
  const count = deck.slides.length;
  view.replaceChildren();
  if (show.index >= count) {
    view.style.background = '#000';
    const end = document.createElement('p');
    end.className = 'show-end';
    end.textContent = 'End of slide show. Click to exit.';
    view.append(end);
  } else {
    const slide = deck.slides[show.index];
    view.style.background = THEMES[deck.theme].background;
    for (const box of slide.boxes) {
      const el = document.createElement('div');
      el.className = 'show-box';
      el.setAttribute('aria-label', boxName(box));
      el.textContent = box.text;
      styleBox(el, box);
      view.append(el);
    }
  }
  overlay.querySelector('.show-status').textContent =
    show.index >= count ? 'End of show' : `Slide ${show.index + 1} of ${count}`;
}

export function startShow(index) {
  show.presenting = true;
  show.index = Math.max(0, Math.min(index, deck.slides.length - 1));
  show.start = show.index;
  document.activeElement?.blur?.();
  render();
  onChange();
}

export function endShow() {
  if (!show.presenting) return;
  show.presenting = false;
  render();
  onChange();
}

function step(delta) {
  const next = show.index + delta;
  if (next > deck.slides.length) return endShow();
  show.index = Math.max(0, next);
  render();
  onChange();
}

/** Build the overlay; its key handler runs before the app's shortcuts and swallows keys while presenting. */
export function initShow(element, changed) {
  overlay = element;
  onChange = changed;
  overlay.setAttribute('role', 'dialog');
  overlay.setAttribute('aria-label', 'Slide show');
  const view = document.createElement('div');
  view.className = 'show-slide';
  view.addEventListener('click', () => step(1));
  const status = document.createElement('p');
  status.className = 'show-status';
  status.setAttribute('role', 'status');
  const controls = document.createElement('div');
  controls.className = 'show-controls';
  controls.append(button('Previous slide', () => step(-1)), button('Next slide', () => step(1)),
                  button('End show', endShow));
  overlay.append(view, status, controls);
  overlay.hidden = true;
  window.addEventListener('keydown', (event) => {
    if (!show.presenting) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    if (event.key === 'Escape') endShow();
    else if (NEXT_KEYS.has(event.key)) step(1);
    else if (PREV_KEYS.has(event.key)) step(-1);
  }, true);
}
