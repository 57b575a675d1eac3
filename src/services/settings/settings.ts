import {
  deleteAllSettings,
  deleteSetting,
  findSettingValue,
  listSettingOverrides,
  lockSettingsWrites,
  upsertSetting,
} from '../../db/repositories/settings.js';
import type { Queryable } from '../../db/repositories/queryable.js';
import type { ServiceContext } from '../context.js';
import { DomainError, notFound } from '../errors.js';
import {
  definitionOf,
  isSettingKey,
  orderedSettings,
  settingKeys,
  type SettingDefinition,
  type SettingKey,
  type SettingScope,
  type SettingValue,
} from './registry.js';

/** How long a cached read may be trusted. Writes on this node invalidate at once; this bounds how long
 * another node sharing the database can serve a value this node changed. */
export const SETTINGS_CACHE_SECONDS = 5;

/** One setting as clients see it: effective value, its default, type and range, and whether it is overridden. */
interface SettingView {
  key: SettingKey;
  value: unknown;
  defaultValue: unknown;
  type: SettingDefinition['type'];
  minimum?: number;
  maximum?: number;
  allowedValues?: string[];
  unit?: string;
  scope: SettingScope;
  description: string;
  overridden: boolean;
  updatedAt?: string;
}

interface Override {
  value: unknown;
  updatedAt: Date;
}

/**
 * The settings of the service: defaults from the registry, overrides from the `settings` table. Later areas
 * read thresholds on every request, so overrides are cached in-process, reloaded after
 * {@link SETTINGS_CACHE_SECONDS} and dropped on every write made through this service. One instance lives on
 * `Services`, shared by every request.
 */
export class SettingsService {
  private cache: { overrides: Map<SettingKey, Override>; loadedAt: number } | null = null;
  private loading: Promise<Map<SettingKey, Override>> | null = null;

  constructor(private readonly ctx: ServiceContext) {}

  /**
   * The effective value of a key, typed by the registry.
   * @example const threshold = await services.settings.get('matching.threshold'); // 48 unless overridden
   */
  async get<K extends SettingKey>(key: K): Promise<SettingValue<K>> {
    const overrides = await this.overrides();
    return (overrides.has(key) ? overrides.get(key)!.value : definitionOf(key).default) as SettingValue<K>;
  }

  /** Every known key with its effective value, sorted by key. */
  async list(): Promise<SettingView[]> {
    const overrides = await this.overrides();
    return settingKeys.map((key) => view(key, overrides.get(key)));
  }

  /** Known keys starting with a prefix (e.g. `checks.face.`); an empty list when none do. */
  async search(prefix: string): Promise<SettingView[]> {
    return (await this.list()).filter((s) => s.key.startsWith(prefix));
  }

  /** One key exactly; 404 when the registry does not know it. */
  async describe(key: string): Promise<SettingView> {
    const known = requireKnown(key, 'not-found');
    return view(known, (await this.overrides()).get(known));
  }

  /**
   * Save a value for a key, or delete the override when `value` is null. Unknown keys and values outside the
   * key's type or range are a 400 naming the key.
   */
  async set(key: string, value: unknown): Promise<SettingView> {
    const known = requireKnown(key, 'validation');
    if (value === null) return this.delete(known);
    const definition = definitionOf(known);
    const parsed = definition.schema.safeParse(value);
    if (!parsed.success) {
      const message = parsed.error.issues.map((i) => i.message).join('; ');
      throw new DomainError('validation', `Setting '${known}': ${message}`, {
        errors: [{ field: 'body.value', message }],
        key: known,
      });
    }
    const now = this.ctx.now();
    await this.write(async (trx) => {
      await assertOrdered(trx, known, parsed.data);
      await upsertSetting(trx, known, parsed.data, now);
    });
    this.ctx.log.info('setting changed', { key: known, value: parsed.data });
    return this.describe(known);
  }

  /** Remove the override of a key, so its default applies again; 404 for an unknown key. */
  async delete(key: string): Promise<SettingView> {
    const known = requireKnown(key, 'not-found');
    await this.write(async (trx) => {
      await assertOrdered(trx, known, definitionOf(known).default);
      await deleteSetting(trx, known);
    });
    this.ctx.log.info('setting reset to default', { key: known });
    return this.describe(known);
  }

  /** Remove every override, keys no longer known included; answers how many there were. */
  async reset(): Promise<{ removed: number; settings: SettingView[] }> {
    // Under the lock too: a write checked against an override this removes must not land after it.
    const removed = await this.write((trx) => deleteAllSettings(trx));
    this.ctx.log.info('settings reset to defaults', { removed });
    return { removed, settings: await this.list() };
  }

  /**
   * Run a write in one transaction holding the settings write lock (an advisory lock, so the cross-key rule
   * is checked and the write made as one step across every process on the database), then drop this node's
   * cache (also when it fails: the database is what counts). Two writes whose cross-key check depends on each
   * other thus run one after the other, each checking against what the other committed.
   */
  private async write<T>(body: (trx: Queryable) => Promise<T>): Promise<T> {
    try {
      return await this.ctx.db.transaction().execute(async (trx) => {
        await lockSettingsWrites(trx);
        return body(trx);
      });
    } finally {
      this.invalidate();
    }
  }

  /** Forget the cache; the next read goes to the database. */
  invalidate(): void {
    this.cache = null;
    this.loading = null;
  }

  private async overrides(): Promise<Map<SettingKey, Override>> {
    const now = this.ctx.now().getTime();
    if (this.cache && now - this.cache.loadedAt < SETTINGS_CACHE_SECONDS * 1000) return this.cache.overrides;
    // Concurrent requests after expiry share one load instead of each querying.
    const loading = (this.loading ??= this.load());
    try {
      const overrides = await loading;
      if (this.loading === loading) this.cache = { overrides, loadedAt: now };
      return overrides;
    } finally {
      if (this.loading === loading) this.loading = null;
    }
  }

  private async load(): Promise<Map<SettingKey, Override>> {
    const rows = await listSettingOverrides(this.ctx.db);
    const overrides = new Map<SettingKey, Override>();
    for (const row of rows) {
      if (!isSettingKey(row.key)) continue; // a key from an older version: ignored, removed by reset
      const parsed = definitionOf(row.key).schema.safeParse(row.value);
      if (!parsed.success) {
        // A stored value the current range refuses (the range was narrowed): the default is safer than failing.
        this.ctx.log.warn('stored setting out of range; using the default', { key: row.key });
        continue;
      }
      overrides.set(row.key, { value: parsed.data, updatedAt: row.updated_at });
    }
    return overrides;
  }
}

/**
 * Refuse a value that would put one of the {@link orderedSettings} pairs out of order (400 naming the key).
 * The other key of the pair is read in the writing transaction, after the lock, never from a cache: a value
 * another node committed a moment ago counts.
 */
async function assertOrdered(trx: Queryable, key: SettingKey, value: unknown): Promise<void> {
  for (const { low, high } of orderedSettings) {
    if (key !== low && key !== high) continue;
    const other = key === low ? high : low;
    const lowValue = key === low ? value : await storedValue(trx, other);
    const highValue = key === high ? value : await storedValue(trx, other);
    if ((lowValue as number) > (highValue as number)) {
      const message = `would put ${low} (${lowValue}) above ${high} (${highValue})`;
      throw new DomainError('validation', `Setting '${key}': ${message}`, {
        errors: [{ field: 'body.value', message }],
        key,
      });
    }
  }
}

/** The effective value of a key as the database holds it now (a stored value the range refuses counts as the default, as when loading). */
async function storedValue(trx: Queryable, key: SettingKey): Promise<unknown> {
  const row = await findSettingValue(trx, key);
  const parsed = row ? definitionOf(key).schema.safeParse(row.value) : undefined;
  return parsed?.success ? parsed.data : definitionOf(key).default;
}

function requireKnown(key: string, code: 'not-found' | 'validation'): SettingKey {
  if (isSettingKey(key)) return key;
  if (code === 'not-found') throw notFound(`Setting '${key}'`);
  throw new DomainError('validation', `Setting '${key}' is not a known key`, {
    errors: [{ field: 'body.key', message: 'is not a known setting key' }],
    key,
  });
}

function view(key: SettingKey, override: Override | undefined): SettingView {
  const d = definitionOf(key);
  return {
    key,
    value: override ? override.value : d.default,
    defaultValue: d.default,
    type: d.type,
    ...(d.minimum !== undefined ? { minimum: d.minimum, maximum: d.maximum } : {}),
    ...(d.allowedValues ? { allowedValues: [...d.allowedValues] } : {}),
    ...(d.unit ? { unit: d.unit } : {}),
    scope: d.scope,
    description: d.description,
    overridden: override !== undefined,
    ...(override ? { updatedAt: override.updatedAt.toISOString() } : {}),
  };
}
