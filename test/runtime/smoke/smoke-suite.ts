// The runtime smoke suite: the same HTTP steps against BIMS however it runs (Deno, Cloudflare Workers
// through Miniflare, Node). Only fetch, btoa and plain errors, so the suite itself runs under vitest on Node
// and under `deno test` alike. Steps run in order and share what earlier steps made (an account, a subject).

export interface SmokeTarget {
  /** e.g. http://127.0.0.1:8787 */
  baseUrl: string;
  /** Password of `admin` (BIMS_ADMIN_PASSWORD of the service under test). */
  adminPassword: string;
}

/** Real photos: two of one person (enrol, then verify), one of somebody else. */
export interface SmokePhotos {
  enrol: Uint8Array;
  genuine: Uint8Array;
  impostor: Uint8Array;
}

export interface SmokeStep {
  name: string;
  run(): Promise<void>;
}

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

function base64(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

const basic = (user: string, password: string) => `Basic ${btoa(`${user}:${password}`)}`;

/** The ordered steps: auth, accounts, enrol with a real photo, verify, identify, docs page, OpenAPI documents. */
export function smokeSuite(target: SmokeTarget, photos: SmokePhotos): SmokeStep[] {
  const admin = basic('admin', target.adminPassword);
  // Unique names, so the suite can run again on the same database.
  const tag = crypto.randomUUID().slice(0, 8);
  const user = { username: `smoke-${tag}`, password: `smoke-password-${tag}` };
  const subjectId = `smoke-subject-${tag}`;

  const call = async (method: string, path: string, auth: string | null, body?: unknown, expected?: number) => {
    const headers: Record<string, string> = {};
    if (auth) headers.authorization = auth;
    let payload: string | undefined;
    if (body instanceof URLSearchParams) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      payload = body.toString();
    } else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const res = await fetch(new URL(path, target.baseUrl), { method, headers, body: payload });
    const text = await res.text();
    if (expected !== undefined)
      check(
        res.status === expected,
        `${method} ${path}: expected ${expected}, got ${res.status}: ${text.slice(0, 500)}`,
      );
    return {
      status: res.status,
      headers: res.headers,
      json: text && /json/.test(res.headers.get('content-type') ?? '') ? JSON.parse(text) : null,
    };
  };

  return [
    {
      name: 'health and readiness answer without credentials',
      run: async () => {
        await call('GET', '/health', null, undefined, 200);
        await call('GET', '/ready', null, undefined, 200);
      },
    },
    {
      name: 'auth: no or wrong credentials are 401 problems; a client_credentials token works as Bearer',
      run: async () => {
        const none = await call('GET', '/admin/accounts', null, undefined, 401);
        check(
          String(none.json?.type).endsWith('/unauthorized'),
          `401 without the unauthorized problem type: ${JSON.stringify(none.json)}`,
        );
        await call('GET', '/admin/accounts', basic('admin', 'not-the-password'), undefined, 401);
        const token = await call(
          'POST',
          '/oauth2/token',
          admin,
          new URLSearchParams({ grant_type: 'client_credentials' }),
          200,
        );
        check(
          token.json.token_type === 'Bearer' && token.json.scope === 'ADMIN',
          `token answer ${JSON.stringify(token.json)}`,
        );
        await call('GET', '/admin/accounts', `Bearer ${token.json.access_token}`, undefined, 200);
      },
    },
    {
      name: 'accounts: create a USER, count it, its token reaches /user but not /admin',
      run: async () => {
        await call('POST', '/admin/accounts/create', admin, { ...user, role: 'USER' }, 201);
        const count = await call('GET', `/admin/accounts/count?username=${user.username}`, admin, undefined, 200);
        check(count.json.count === 1, `count ${JSON.stringify(count.json)}`);
        const token = await call(
          'POST',
          '/oauth2/token',
          basic(user.username, user.password),
          new URLSearchParams({ grant_type: 'client_credentials' }),
          200,
        );
        check(token.json.scope === 'USER', `USER token scope ${token.json.scope}`);
        const userToken = `Bearer ${token.json.access_token}`;
        await call('GET', '/user/management/info', userToken, undefined, 200);
        await call('GET', '/admin/accounts', userToken, undefined, 403);
      },
    },
    {
      name: 'enrol a subject from a real photo',
      run: async () => {
        const res = await call(
          'POST',
          '/admin/subjects/create',
          admin,
          { subjectId, faces: [{ image: base64(photos.enrol) }] },
          201,
        );
        check(res.json.status === 'ENROLLED', `enrolment status ${res.json.status}`);
        check(
          res.json.faces?.length === 1 && res.json.faces[0].quality > 0,
          `enrolled faces ${JSON.stringify(res.json.faces)?.slice(0, 300)}`,
        );
        check(typeof res.json.encryptedTemplate === 'string', 'no encryptedTemplate in the enrolment answer');
      },
    },
    {
      name: 'verify: another photo of the person matches, a stranger does not',
      run: async () => {
        const genuine = await call(
          'POST',
          '/admin/operations/create',
          admin,
          { type: 'VERIFY', subjectId, faces: [{ image: base64(photos.genuine) }] },
          201,
        );
        check(
          genuine.json.status === 'SUCCESS' && genuine.json.score >= genuine.json.threshold,
          `genuine VERIFY ${JSON.stringify(genuine.json)}`,
        );
        const impostor = await call(
          'POST',
          '/admin/operations/create',
          admin,
          { type: 'VERIFY', subjectId, faces: [{ image: base64(photos.impostor) }] },
          201,
        );
        check(
          impostor.json.status !== 'SUCCESS' && impostor.json.score < impostor.json.threshold,
          `impostor VERIFY ${JSON.stringify(impostor.json)}`,
        );
      },
    },
    {
      name: 'identify finds the enrolled subject first',
      run: async () => {
        const found = await call(
          'POST',
          '/admin/operations/create',
          admin,
          { type: 'IDENTIFY', faces: [{ image: base64(photos.genuine) }] },
          201,
        );
        check(found.json.status === 'SUCCESS', `IDENTIFY status ${found.json.status}`);
        check(
          found.json.candidates?.[0]?.subjectId === subjectId && found.json.candidates[0].rank === 1,
          `candidates ${JSON.stringify(found.json.candidates)}`,
        );
      },
    },
    {
      name: 'the docs page and its Swagger UI, served by the service itself',
      run: async () => {
        const page = await fetch(new URL('/docs', target.baseUrl));
        const html = await page.text();
        check(
          page.status === 200 && html.includes('/docs/assets/swagger-ui-bundle.js'),
          `/docs: ${page.status} ${html.slice(0, 200)}`,
        );
        // The assets come from the service's own storage (node_modules, or the Workers ASSETS binding), not a CDN.
        for (const [path, type] of [
          ['/docs/assets/swagger-ui-bundle.js', 'javascript'],
          ['/docs/assets/swagger-ui.css', 'text/css'],
        ]) {
          const res = await fetch(new URL(path!, target.baseUrl));
          const body = await res.arrayBuffer();
          check(
            res.status === 200 && (res.headers.get('content-type') ?? '').includes(type!),
            `${path}: ${res.status} ${res.headers.get('content-type')}`,
          );
          check(body.byteLength > 10_000, `${path}: only ${body.byteLength} bytes`);
        }
      },
    },
    {
      name: 'OpenAPI 3.1 documents for each surface',
      run: async () => {
        for (const [path, sample] of [
          ['/admin/openapi.json', '/admin/subjects/create'],
          ['/openapi.json', '/subjects/create'],
          ['/user/openapi.json', '/user/subjects/create'],
        ]) {
          const doc = await call('GET', path, null, undefined, 200);
          check(String(doc.json.openapi).startsWith('3.1'), `${path}: openapi ${doc.json.openapi}`);
          check(doc.json.paths?.[sample!], `${path} does not describe ${sample}`);
        }
      },
    },
  ];
}
