import { SignJWT, decodeProtectedHeader, generateKeyPair } from 'jose';
import type { Role } from '../../src/auth/roles.js';
import { ADMIN_PASSWORD, adminAuth, basic, type bootForTest } from './databases.js';
import { postForm } from './oauth-flow.js';

type Booted = Awaited<ReturnType<typeof bootForTest>>;

/** One column of the auth matrix: an Authorization header (or none) and what it should amount to. */
export interface Credential {
  name: string;
  header: string | null;
  /** The role a good credential holds; absent for credentials that must be refused with 401. */
  role?: Role;
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** The accounts the matrix uses besides `admin`, one per weaker role. */
export const ACCOUNTS = [
  { username: 'ursula', password: 'ursula-password', role: 'USER' },
  { username: 'judy', password: 'judy-password', role: 'ADJUDICATOR' },
] as const;

async function createAccount(booted: Booted, account: (typeof ACCOUNTS)[number]): Promise<void> {
  const res = await booted.app.request('/admin/accounts/create', {
    method: 'POST',
    headers: { authorization: adminAuth, 'content-type': 'application/json' },
    body: JSON.stringify(account),
  });
  if (res.status !== 201) throw new Error(`creating ${account.username} answered ${res.status}`);
}

/** An access token for an account, through the token endpoint (client_credentials with its password). */
async function tokenFor(booted: Booted, username: string, password: string): Promise<string> {
  const res = await postForm(booted.app, '/oauth2/token', {
    grant_type: 'client_credentials',
    client_id: username,
    client_secret: password,
  });
  if (res.status !== 200) throw new Error(`token for ${username} answered ${res.status}`);
  return String((await res.json()).access_token);
}

/**
 * Make every credential of the matrix on a booted service. `setSkew` moves the service clock (ms ahead of
 * the real one) so a token can be issued in the past. Order matters: the token of the retired key is made
 * first, then that key is rotated out and retired, so every other token is signed by the live key and
 * fails (or passes) for its own reason only.
 */
export async function makeCredentials(booted: Booted, setSkew: (ms: number) => void): Promise<Credential[]> {
  for (const account of ACCOUNTS) await createAccount(booted, account);
  const keys = booted.services.auth.keys;

  const underRetiredKey = await tokenFor(booted, 'admin', ADMIN_PASSWORD);
  const retiredKid = decodeProtectedHeader(underRetiredKey).kid!;
  await keys.rotate();
  await keys.retire(retiredKid);

  setSkew(-(booted.config.BIMS_ACCESS_TOKEN_SECONDS + 60) * 1000);
  const expired = await tokenFor(booted, 'admin', ADMIN_PASSWORD);
  setSkew(0);

  const adminBearer = await tokenFor(booted, 'admin', ADMIN_PASSWORD);
  // Our kid, our claims, our issuer and audience: only the key that signed it is someone else's.
  const foreignKey = await generateKeyPair('ES256');
  const foreign = await new SignJWT({ sub: 'account:1', scope: 'ADMIN', client_id: 'bims-docs' })
    .setProtectedHeader({ alg: 'ES256', kid: decodeProtectedHeader(adminBearer).kid!, typ: 'at+jwt' })
    .setIssuer(booted.services.auth.issuer)
    .setAudience('bims')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(foreignKey.privateKey);

  // A key id the service never made: refused without a database read per request (src/services/auth/signing-keys.ts).
  const unknownKid = await new SignJWT({ sub: 'account:1', scope: 'ADMIN', client_id: 'bims-docs' })
    .setProtectedHeader({ alg: 'ES256', kid: 'no-such-key-id', typ: 'at+jwt' })
    .setIssuer(booted.services.auth.issuer)
    .setAudience('bims')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(foreignKey.privateKey);

  const [user, adjudicator] = ACCOUNTS;
  return [
    { name: 'none', header: null },
    { name: 'Basic, wrong password', header: basic('admin', 'not-the-password') },
    { name: 'Basic, unknown user', header: basic('nobody-here', ADMIN_PASSWORD) },
    { name: 'Basic, not base64', header: 'Basic !!!not-base64!!!' },
    { name: 'Basic, no colon', header: `Basic ${b64('admin')}` },
    { name: 'Basic, no value', header: 'Basic' },
    { name: 'Bearer, garbage', header: 'Bearer garbage.not-a.jwt' },
    { name: 'Bearer, expired', header: `Bearer ${expired}` },
    { name: 'Bearer, foreign key', header: `Bearer ${foreign}` },
    { name: 'Bearer, retired key', header: `Bearer ${underRetiredKey}` },
    { name: 'Bearer, unknown key id', header: `Bearer ${unknownKid}` },
    { name: 'unknown scheme', header: `Digest ${b64('admin')}` },
    { name: 'USER Basic', header: basic(user.username, user.password), role: 'USER' },
    { name: 'USER Bearer', header: `Bearer ${await tokenFor(booted, user.username, user.password)}`, role: 'USER' },
    { name: 'ADJUDICATOR Basic', header: basic(adjudicator.username, adjudicator.password), role: 'ADJUDICATOR' },
    {
      name: 'ADJUDICATOR Bearer',
      header: `Bearer ${await tokenFor(booted, adjudicator.username, adjudicator.password)}`,
      role: 'ADJUDICATOR',
    },
    { name: 'ADMIN Basic', header: adminAuth, role: 'ADMIN' },
    { name: 'ADMIN Bearer', header: `Bearer ${adminBearer}`, role: 'ADMIN' },
  ];
}
