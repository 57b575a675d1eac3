import { signIn } from '../api.js';
import { h, mount } from '../dom.js';

/**
 * Sign-in: an account's user name and password, exchanged for a Bearer token (api.js). `roles`: the roles this
 * page is for (the dashboard's by default); `intro`: who the page is for, in a sentence.
 */
export function renderLogin(
  view,
  { onSignedIn, roles, intro = 'For adjudicators and administrators of this BIMS service.' },
) {
  const error = h('div', { class: 'error', role: 'alert', hidden: true, id: 'login-error' });
  const username = h('input', { id: 'username', name: 'username', autocomplete: 'username', required: true });
  const password = h('input', {
    id: 'password',
    name: 'password',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
  });
  const submit = h('button', { type: 'submit', id: 'sign-in' }, 'Sign in');
  const form = h(
    'form',
    {
      class: 'card login',
      onsubmit: async (event) => {
        event.preventDefault();
        error.hidden = true;
        submit.disabled = true;
        try {
          await signIn(username.value.trim(), password.value, roles);
          onSignedIn();
        } catch (e) {
          error.textContent = e.message;
          error.hidden = false;
          password.select();
        } finally {
          submit.disabled = false;
        }
      },
    },
    h('h1', {}, 'Sign in'),
    h('p', { class: 'muted' }, intro),
    h('label', { htmlFor: 'username' }, 'User name'),
    username,
    h('label', { htmlFor: 'password' }, 'Password'),
    password,
    error,
    submit,
  );
  mount(view, form);
  username.focus();
}
