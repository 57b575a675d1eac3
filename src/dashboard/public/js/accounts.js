import { call, session } from './api.js';

/**
 * Accounts by name: the API's records carry account ids (an operation's accountId, a case's assignedTo), and a
 * reader wants the person. Only an ADMIN may list accounts; there are few, so one page view loads them once
 * (up to 5,000) and every table on it looks names up here. Other roles get an empty map and see what the
 * records themselves say (decisions carry their author's user name).
 */
export async function accountNames() {
  const names = new Map();
  if (session()?.role !== 'ADMIN') return names;
  for (let page = 0; page < 5; page++) {
    const rows = await call('/admin/accounts', { query: { page, size: 1000, sort: 'id,asc' } });
    for (const a of rows) names.set(a.id, a.username);
    if (rows.length < 1000) break;
  }
  return names;
}

/** An account as a reader knows it: its user name, else "account #id (deleted)" when it no longer exists. */
export function accountLabel(names, id, username) {
  if (username) return username;
  if (id === undefined || id === null) return 'no account recorded';
  return names.get(id) ?? `account #${id}${names.size ? ' (deleted)' : ''}`;
}
