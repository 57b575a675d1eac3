import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { ServiceContext } from '../context.js';
import { json } from '../../db/json.js';
import {
  findActiveServiceKey,
  findServiceKey,
  insertServiceKeyUnlessActive,
  type ServiceKeyRow,
} from '../../db/repositories/templates.js';

/** What a template key is for. */
type TemplateKeyPurpose = 'template-signing' | 'template-encryption';

/** Algorithms per purpose: Ed25519 signatures (64 bytes, fits a QR code); JWE key agreement on P-256. */
const TEMPLATE_KEY_ALG: Record<TemplateKeyPurpose, string> = {
  'template-signing': 'Ed25519',
  'template-encryption': 'ECDH-ES+A256KW',
};

/** One loaded key. `id` is the row id; for signing keys it is also the 4-byte key id of the envelope (hex). */
interface TemplateKey {
  id: string;
  purpose: TemplateKeyPurpose;
  alg: string;
  retired: boolean;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
}

/**
 * The service's template keys, created on first use and stored in `service_keys` so that every node sharing
 * the database signs, verifies and decrypts with the same keys. At most one unretired key per purpose (a
 * partial unique index): when two nodes race to create the first one, the loser's insert does nothing and it
 * reads the winner's. Retired keys are never deleted: they still verify and decrypt what they made.
 */
export class TemplateKeys {
  private byId = new Map<string, TemplateKey>();
  private active = new Map<TemplateKeyPurpose, Promise<TemplateKey>>();

  constructor(private readonly ctx: ServiceContext) {}

  /** The key that signs or encrypts now, creating it when there is none. */
  current(purpose: TemplateKeyPurpose): Promise<TemplateKey> {
    let p = this.active.get(purpose);
    if (!p) {
      p = this.loadOrCreate(purpose);
      this.active.set(purpose, p);
      p.catch(() => this.active.delete(purpose));
    }
    return p;
  }

  /** A key of a purpose by id, retired or not; undefined when no such key exists. */
  async find(purpose: TemplateKeyPurpose, id: string): Promise<TemplateKey | undefined> {
    const known = this.byId.get(id);
    if (known) return known.purpose === purpose ? known : undefined;
    const row = await findServiceKey(this.ctx.db, purpose, id);
    return row ? this.load(row) : undefined;
  }

  private async loadOrCreate(purpose: TemplateKeyPurpose): Promise<TemplateKey> {
    const existing = await findActiveServiceKey(this.ctx.db, purpose);
    if (existing) return this.load(existing);
    const alg = TEMPLATE_KEY_ALG[purpose];
    const pair =
      purpose === 'template-signing'
        ? await generateKeyPair(alg, { extractable: true })
        : await generateKeyPair(alg, { crv: 'P-256', extractable: true });
    const publicJwk = await exportJWK(pair.publicKey);
    await insertServiceKeyUnlessActive(this.ctx.db, {
      id: await keyId(publicJwk),
      purpose,
      alg,
      private_jwk: json(await exportJWK(pair.privateKey)),
      public_jwk: json(publicJwk),
      created_at: this.ctx.now(),
    });
    const row = await findActiveServiceKey(this.ctx.db, purpose);
    if (!row) throw new Error(`no ${purpose} key after creating one`);
    this.ctx.log.info('template key created', { purpose, id: row.id });
    return this.load(row);
  }

  private async load(row: ServiceKeyRow) {
    const key: TemplateKey = {
      id: row.id,
      purpose: row.purpose,
      alg: row.alg,
      retired: row.retired_at !== null,
      privateKey: (await importJWK(row.private_jwk as JWK, row.alg)) as CryptoKey,
      publicKey: (await importJWK(row.public_jwk as JWK, row.alg)) as CryptoKey,
      publicJwk: row.public_jwk as JWK,
    };
    this.byId.set(key.id, key);
    return key;
  }
}

/** Key id: the first 4 bytes of SHA-256 over the public JWK's key material, as 8 hex digits (the envelope carries them). */
async function keyId(jwk: JWK): Promise<string> {
  const material = new TextEncoder().encode(`${jwk.kty}:${jwk.crv}:${jwk.x}:${jwk.y ?? ''}`);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', material));
  return [...digest.subarray(0, 4)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

const instances = new WeakMap<ServiceContext, TemplateKeys>();

/**
 * The template keys of a service context, one instance per process (keys are cached after the first read).
 * @example const key = await templateKeys(services.ctx).current('template-signing');
 */
export function templateKeys(ctx: ServiceContext): TemplateKeys {
  let keys = instances.get(ctx);
  if (!keys) instances.set(ctx, (keys = new TemplateKeys(ctx)));
  return keys;
}
