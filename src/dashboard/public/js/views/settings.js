import { call } from '../api.js';
import { h, mount, when } from '../dom.js';

/**
 * Settings: every key with its effective value, default, range and description; each row saves on its own
 * (the API checks type and range and names the key when it refuses), or goes back to its default.
 */
export async function renderSettings(view, _params, ui) {
  const settings = await call('/admin/management/settings');
  if (!ui.current()) return;
  mount(
    view,
    h('h1', {}, 'Settings'),
    h('p', { class: 'muted' }, 'Changes apply at once to every node of the service. Overridden values are in bold.'),
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Key', 'Value', 'Default', 'Meaning', ''].map((t) => h('th', {}, t)),
        ),
      ),
      h(
        'tbody',
        {},
        settings.map((s) => settingRow(s, ui)),
      ),
    ),
  );
}

function editorFor(s) {
  const id = `setting-${s.key.replace(/[^a-zA-Z0-9]/g, '-')}`;
  if (s.type === 'boolean')
    return h(
      'select',
      { id },
      ['true', 'false'].map((v) => h('option', { value: v, selected: String(s.value) === v }, v)),
    );
  if (s.type === 'enum')
    return h(
      'select',
      { id },
      (s.allowedValues ?? []).map((v) => h('option', { value: v, selected: s.value === v }, v)),
    );
  return h('input', {
    id,
    type: 'number',
    value: String(s.value),
    min: s.minimum,
    max: s.maximum,
    step: s.type === 'integer' ? '1' : 'any',
  });
}

function parseValue(s, raw) {
  if (s.type === 'boolean') return raw === 'true';
  if (s.type === 'enum') return raw;
  if (raw.trim() === '') throw new Error(`${s.key}: give a number`);
  return Number(raw);
}

function settingRow(initial, ui) {
  let s = initial;
  const editor = editorFor(s);
  const message = h('div', { class: 'field-error' });
  const keyCell = h('td', {}, s.overridden ? h('strong', {}, s.key) : s.key);
  const save = async (value) => {
    ui.clearError();
    message.textContent = '';
    try {
      s = await call('/admin/management/settings', { method: 'POST', body: { key: s.key, value } });
      mount(keyCell, s.overridden ? h('strong', {}, s.key) : s.key);
      editor.value = String(s.value);
      message.textContent = s.updatedAt ? `Saved ${when(s.updatedAt)}` : 'Default restored';
      message.style.color = 'var(--good)';
    } catch (error) {
      message.style.color = '';
      message.textContent = error.message;
    }
  };
  const range = [
    s.minimum !== undefined ? `min ${s.minimum}` : '',
    s.maximum !== undefined ? `max ${s.maximum}` : '',
    s.unit ?? '',
  ]
    .filter(Boolean)
    .join(', ');
  return h(
    'tr',
    { 'data-key': s.key },
    keyCell,
    h('td', {}, editor, message),
    h('td', {}, String(s.defaultValue), range ? h('div', { class: 'muted' }, range) : null),
    h('td', {}, s.description),
    h(
      'td',
      {},
      h(
        'button',
        {
          onclick: () => {
            try {
              void save(parseValue(s, editor.value));
            } catch (e) {
              message.textContent = e.message;
            }
          },
        },
        'Save',
      ),
      ' ',
      h('button', { class: 'secondary', title: 'Back to the default', onclick: () => void save(null) }, 'Default'),
    ),
  );
}
