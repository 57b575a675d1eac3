import { describe, expect, it } from 'vitest';
import { ConfigError, baseUrlOf, loadConfig, refuseMatcherCluster } from './config.js';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    expect(config.PORT).toBe(8080);
    expect(config.HOST).toBe('127.0.0.1');
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.BIMS_DATA_DIR).toBe('./data');
    expect(baseUrlOf(config)).toBe('http://127.0.0.1:8080');
  });

  it('treats empty values as unset and coerces numbers', () => {
    const config = loadConfig({ PORT: '', BIMS_MAX_BODY_BYTES: '2048', DATABASE_URL: 'postgres://u@h:5432/db' });
    expect(config.PORT).toBe(8080);
    expect(config.BIMS_MAX_BODY_BYTES).toBe(2048);
    expect(config.DATABASE_URL).toBe('postgres://u@h:5432/db');
  });

  it('fails fast naming every bad variable', () => {
    const attempt = () => loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', BIMS_ADMIN_PASSWORD: 'short' });
    expect(attempt).toThrow(ConfigError);
    try {
      attempt();
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toMatch(/PORT/);
      expect(message).toMatch(/DATABASE_URL: must be a postgres:\/\//);
      expect(message).toMatch(/BIMS_ADMIN_PASSWORD: must be at least 8 characters/);
    }
  });

  it('requires the extraction token with an extraction service URL, alone or among other errors', () => {
    expect(() => loadConfig({ BIMS_EXTRACTION_URL: 'http://10.0.0.5:7091' })).toThrow(
      /BIMS_EXTRACTION_TOKEN: required when BIMS_EXTRACTION_URL is set/,
    );
    expect(() => loadConfig({ BIMS_EXTRACTION_URL: 'http://10.0.0.5:7091', PORT: 'x' })).toThrow(
      /PORT[\s\S]*BIMS_EXTRACTION_TOKEN: required/,
    );
    const config = loadConfig({ BIMS_EXTRACTION_URL: 'http://10.0.0.5:7091', BIMS_EXTRACTION_TOKEN: 't'.repeat(32) });
    expect(config).toMatchObject({
      BIMS_EXTRACTION_URL: 'http://10.0.0.5:7091',
      BIMS_EXTRACTION_PORT: 7091,
      BIMS_EXTRACTION_HOST: '127.0.0.1',
    });
  });

  it('refuses a per-account cap of the media gateway above half its total (the reserve would not fit)', () => {
    expect(() => loadConfig({ BIMS_CAPTURES_PER_ACCOUNT: '9' })).toThrow(
      /BIMS_CAPTURES_PER_ACCOUNT: must be at most half BIMS_CAPTURES_TOTAL \(16\)/,
    );
    expect(loadConfig({ BIMS_CAPTURES_PER_ACCOUNT: '9', BIMS_CAPTURES_TOTAL: '18' }).BIMS_CAPTURES_TOTAL).toBe(18);
  });

  it('takes a matcher cluster only with PostgreSQL, and only NATS URLs', () => {
    expect(() => loadConfig({ BIMS_NATS_URL: 'nats://127.0.0.1:4222' })).toThrow(
      /BIMS_NATS_URL: a matcher cluster needs PostgreSQL \(DATABASE_URL\)/,
    );
    expect(() => loadConfig({ BIMS_NATS_URL: 'http://x:4222', DATABASE_URL: 'postgres://h/db' })).toThrow(
      /BIMS_NATS_URL: must be nats:\/\/ or tls:\/\/ URLs/,
    );
    const config = loadConfig({
      BIMS_NATS_URL: 'nats://a:4222,nats://b:4222',
      DATABASE_URL: 'postgres://h/db',
      BIMS_MATCHER_SHARDS: '4',
    });
    expect(config).toMatchObject({ BIMS_MATCHER_SHARDS: 4, BIMS_MATCHER_TIMEOUT_MS: 5000, BIMS_NATS_PREFIX: 'bims' });
    expect(loadConfig({}).BIMS_MATCHER_SHARDS).toBe(1);
    // Deno and Workers refuse it rather than hold the whole gallery themselves.
    expect(() => refuseMatcherCluster(config, 'Deno')).toThrow(/BIMS_NATS_URL: a matcher cluster is reached from Node/);
    expect(refuseMatcherCluster(loadConfig({}), 'Deno').BIMS_NATS_URL).toBeUndefined();
  });
});
