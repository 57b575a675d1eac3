import { call } from '../api.js';
import { h, mount } from '../dom.js';

/**
 * A filtered, paged list: a filter form, a table, Previous/Next and the total. Shared by the subjects,
 * operations, solved-cases and decisions pages, which differ only in their endpoint, filters, order and columns.
 */
export async function pagedList(
  view,
  ui,
  { title, intro, listPath, countPath, filters, columns, onRow, sort, size = 20 },
) {
  let page = 0;
  const inputs = filters.map((f) =>
    f.options
      ? h(
          'select',
          { id: `filter-${f.name}`, name: f.name },
          h('option', { value: '' }, 'any'),
          f.options.map((o) => h('option', { value: o }, o)),
        )
      : h('input', { id: `filter-${f.name}`, name: f.name, placeholder: f.placeholder ?? '' }),
  );
  const results = h('div');
  const status = h('span', { class: 'muted' });
  const previous = h('button', { class: 'secondary', onclick: () => void load(page - 1) }, 'Previous');
  const next = h('button', { class: 'secondary', onclick: () => void load(page + 1) }, 'Next');
  const query = () => Object.fromEntries(filters.map((f, i) => [f.name, inputs[i].value.trim()]));

  async function load(to) {
    ui.clearError();
    try {
      const [rows, total] = await Promise.all([
        call(listPath, { query: { ...query(), page: to, size, sort } }),
        call(countPath, { query: query() }),
      ]);
      if (!ui.current()) return;
      page = to;
      mount(results, columns ? table(rows) : null);
      const first = rows.length ? page * size + 1 : 0;
      status.textContent = `${first}–${page * size + rows.length} of ${total.count}`;
      previous.disabled = page === 0;
      next.disabled = (page + 1) * size >= total.count;
    } catch (error) {
      ui.showError(error);
    }
  }
  const table = (rows) => {
    const t = h(
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
    );
    const body = h('tbody');
    if (!rows.length)
      body.append(h('tr', {}, h('td', { colSpan: columns.length, class: 'muted' }, 'Nothing matches.')));
    for (const row of rows)
      body.append(
        h(
          'tr',
          { class: 'link', onclick: () => onRow(row) },
          columns.map((c) => h('td', {}, c.value(row))),
        ),
      );
    t.append(body);
    return t;
  };

  mount(
    view,
    h('h1', {}, title),
    intro ? h('p', { class: 'muted' }, intro) : null,
    h(
      'form',
      {
        class: 'row card',
        onsubmit: (e) => {
          e.preventDefault();
          void load(0);
        },
      },
      filters.map((f, i) => h('div', {}, h('label', { htmlFor: inputs[i].id }, f.label), inputs[i])),
      h('button', { type: 'submit' }, 'Filter'),
    ),
    results,
    h('div', { class: 'pager' }, previous, next, status),
  );
  await load(0);
}

/** Images of a download as a captioned gallery. */
export function gallery(images) {
  if (!images.size) return h('p', { class: 'muted' }, 'No image stored.');
  return h(
    'div',
    { class: 'gallery' },
    [...images].map(([id, img]) =>
      h(
        'figure',
        {},
        h('img', { src: img.url, alt: `${img.kind} image ${id}` }),
        h('figcaption', {}, `${img.kind} #${id}`),
      ),
    ),
  );
}
