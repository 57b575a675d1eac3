/**
 * A tiny element builder: the pages are built from data with textContent only (never innerHTML), so nothing
 * the API returns can become markup.
 */

/**
 * h('button', { class: 'secondary', onclick: fn }, 'Save') -> <button class="secondary">Save</button>.
 * Attributes that are functions become listeners; null/undefined/false attributes and children are skipped.
 */
export function h(tag, attributes = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else if (name in el && typeof el[name] !== 'function' && !name.includes('-')) el[name] = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

/** Replace an element's content. */
export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

/** A date-time as the reader's locale shows it. */
export function when(iso) {
  return iso ? new Date(iso).toLocaleString() : '';
}

/** A score on the 0..200 false-acceptance scale, one decimal. */
export function score(value) {
  return typeof value === 'number' ? value.toFixed(1) : '–';
}

export function badge(text) {
  return h('span', { class: `badge ${text}` }, text);
}

/** A definition list from [label, value] pairs; empty values are left out. */
export function facts(pairs) {
  return h(
    'dl',
    { class: 'facts' },
    pairs
      .filter(([, v]) => v !== undefined && v !== null && v !== '')
      .map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
  );
}

/** A table from rows; `onRow` makes rows clickable. */
export function table(columns, rows, onRow) {
  return h(
    'table',
    {},
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        columns.map((c) => h('th', {}, c.label)),
      ),
    ),
    h(
      'tbody',
      {},
      rows.length === 0
        ? h('tr', {}, h('td', { colSpan: columns.length, class: 'muted' }, 'Nothing to show.'))
        : rows.map((row) =>
            h(
              'tr',
              { class: onRow ? 'link' : null, onclick: onRow ? () => onRow(row) : null },
              columns.map((c) => h('td', {}, c.value(row))),
            ),
          ),
    ),
  );
}
