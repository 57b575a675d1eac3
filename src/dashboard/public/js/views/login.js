import { signIn } from '../api.js';
import { h, mount } from '../dom.js';

/** Sign-in: an account's user name and password, exchanged for a Bearer token (api.js). */
export function renderLogin(view, { onSignedIn }) {
  const error = h('div', { class: 'error', role: 'alert', hidden: true, id: 'login-error' });
  const username = h('input', { id: 'username', name: 'username', autocomplete: 'username', required: true });
  const password = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
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
          await signIn(username.value.trim(), password.value);
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
    h('p', { class: 'muted' }, 'For adjudicators and administrators of this BIMS service.'),
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
