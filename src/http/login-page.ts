/**
 * The HTML of the authorization endpoint: the sign-in form and the error page. Self-contained (no scripts,
 * no external assets) so that it works offline and its CSP can forbid everything but one inline style,
 * admitted by a per-response nonce.
 */

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);

const style = `
body{font:16px/1.5 system-ui,sans-serif;background:#f4f5f7;color:#1d2330;margin:0;display:flex;min-height:100vh;align-items:center;justify-content:center}
main{background:#fff;border-radius:8px;box-shadow:0 2px 12px rgba(0,0,0,.12);padding:2rem;width:min(22rem,90vw)}
h1{font-size:1.3rem;margin:0 0 .25rem}p{margin:.25rem 0 1rem;color:#4a5163}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #b8bfcc;border-radius:4px;font:inherit}
.error{background:#fdecea;color:#8a1c13;border-radius:4px;padding:.5rem .75rem;margin:0 0 1rem}
.buttons{display:flex;flex-direction:row-reverse;gap:.5rem;margin-top:1.25rem}
button{flex:1;padding:.6rem;border:0;border-radius:4px;font:inherit;cursor:pointer;background:#2456c9;color:#fff}
button.secondary{background:#e3e6ec;color:#1d2330}`;

function shell(title: string, nonce: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escape(title)}</title>
<style nonce="${escape(nonce)}">${style}</style>
</head>
<body><main>${body}</main></body>
</html>`;
}

/**
 * The page's Content-Security-Policy. `form-action` must name the client's origin too: browsers apply it
 * to the redirect that follows the form's submission.
 */
export function pageCsp(nonce: string, redirectUri?: string): string {
  const target = redirectUri ? ` ${new URL(redirectUri).origin}` : '';
  return `default-src 'none'; style-src 'nonce-${nonce}'; form-action ${redirectUri ? `'self'${target}` : "'none'"}; frame-ancestors 'none'; base-uri 'none'`;
}

interface LoginPageInput {
  clientName: string;
  /** The scope the client asks for, if it named one. */
  scope?: string;
  /** The authorization request, repeated in hidden fields so the POST can re-validate it. */
  hidden: Record<string, string | undefined>;
  error?: string;
  username?: string;
  nonce: string;
}

/**
 * The sign-in form. Posts to `authorize`, which is this very path (`/oauth2/authorize`) resolved relatively.
 * "Sign in" comes first in the markup (Enter submits the first button) and is shown second by the style.
 */
export function loginPage(input: LoginPageInput): string {
  const hidden = Object.entries(input.hidden)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${escape(name)}" value="${escape(value!)}">`)
    .join('\n');
  const asks = input.scope ? ` with the scope <strong>${escape(input.scope)}</strong>` : '';
  return shell(
    'Sign in to BIMS',
    input.nonce,
    `<h1>Sign in to BIMS</h1>
<p><strong>${escape(input.clientName)}</strong> asks for access to BIMS on your behalf${asks}.</p>
${input.error ? `<div class="error" role="alert">${escape(input.error)}</div>` : ''}
<form method="post" action="authorize">
${hidden}
<label for="username">User name</label>
<input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="64" value="${escape(input.username ?? '')}"${input.username ? '' : ' autofocus'}>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required maxlength="1024"${input.username ? ' autofocus' : ''}>
<div class="buttons">
<button type="submit" name="action" value="login">Sign in</button>
<button type="submit" name="action" value="cancel" class="secondary" formnovalidate>Cancel</button>
</div>
</form>`,
  );
}

/** A page for a request that cannot be sent back to its client. */
export function errorPage(message: string, nonce: string): string {
  return shell(
    'Sign-in request refused',
    nonce,
    `<h1>This sign-in request cannot be served</h1>
<div class="error" role="alert">${escape(message)}</div>
<p>Go back to the application you came from and start again. If the problem remains, its OAuth client is misconfigured.</p>`,
  );
}
