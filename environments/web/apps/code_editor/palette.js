/* palette.js: the code editor's command palette list. */

import {el} from '../common/menus.js';

/** The command palette's list: every command whose label contains the query, as `role="option"` buttons. */
export function renderPalette(list, commands, query, run) {
  const q = query.trim().toLowerCase();
  const shown = commands.filter((c) => c.label.toLowerCase().includes(q));
  list.replaceChildren(...shown.map((c, k) => {
    const option = el('button', {type: 'button', role: 'option', 'aria-label': c.label, 'aria-selected': String(k === 0),
      'data-command': c.id}, el('span', {text: c.label}), el('span', {class: 'palette-menu', 'aria-hidden': 'true', text: c.menu}));
    option.addEventListener('click', () => run(c.id));
    return option;
  }));
  return shown;
}
