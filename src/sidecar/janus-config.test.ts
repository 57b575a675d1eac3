import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findJanusLibDir, writeJanusConfig } from './janus-config.js';
import { bearerMatches } from './auth.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('the generated Janus configuration', () => {
  it('fills every placeholder, binds both APIs to 127.0.0.1, and loads only the echo test and HTTP', async () => {
    const libDir = findJanusLibDir();
    expect(libDir, 'Janus is installed (scripts/ensure-janus.sh)').toBeTruthy();
    const configDir = join(await mkdtemp(join(tmpdir(), 'bims-janus-config-')), 'conf');
    dirs.push(join(configDir, '..'));
    await writeJanusConfig({
      configDir,
      libDir: libDir!,
      httpPort: 18001,
      adminPort: 18002,
      apiSecret: 'api-secret-value',
      adminSecret: 'admin-secret-value',
      sessionTimeout: 45,
      logLevel: 2,
      iceEnforceList: '',
    });
    const core = await readFile(join(configDir, 'janus.jcfg'), 'utf8');
    const http = await readFile(join(configDir, 'janus.transport.http.jcfg'), 'utf8');
    for (const text of [core, http]) expect(text).not.toMatch(/@[A-Z_]+@/);
    expect(core).toMatch(/api_secret = "api-secret-value"/);
    expect(core).toMatch(/admin_secret = "admin-secret-value"/);
    expect(core).toMatch(/session_timeout = 45/);
    expect(core).toMatch(/ice_lite = true/);
    expect(core).not.toMatch(/stun_server|turn_server|ice_enforce_list/);
    const disabled = (section: string) =>
      new RegExp(`${section}: \\{\\s*disable = "([^"]*)"`).exec(core)?.[1].split(',') ?? [];
    expect(disabled('plugins')).not.toContain('libjanus_echotest.so');
    expect(disabled('plugins')).not.toContain('libjanus_videoroom.so');
    expect(disabled('plugins')).toEqual(expect.arrayContaining(['libjanus_streaming.so', 'libjanus_sip.so']));
    // Only the API, holding the API secret, may create capture rooms or forward their media.
    const videoroom = await readFile(join(configDir, 'janus.plugin.videoroom.jcfg'), 'utf8');
    expect(videoroom).toMatch(/admin_key = "api-secret-value"\s+lock_rtp_forward = true/);
    expect(disabled('transports')).toEqual(expect.arrayContaining(['libjanus_websockets.so', 'libjanus_pfunix.so']));
    expect(disabled('transports')).not.toContain('libjanus_http.so');
    expect(http).toMatch(/port = 18001\s+ip = "127\.0\.0\.1"/);
    expect(http).toMatch(/admin_http = true\s+admin_port = 18002\s+admin_ip = "127\.0\.0\.1"/);
    expect(http).toMatch(/https = false/);
    // The folder holds the secrets: its owner alone may read it.
    expect((await stat(configDir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(configDir, 'janus.jcfg'))).mode & 0o777).toBe(0o600);
  });

  it('refuses values that would break out of a configuration string', async () => {
    const configDir = await mkdtemp(join(tmpdir(), 'bims-janus-config-'));
    dirs.push(configDir);
    await expect(
      writeJanusConfig({
        configDir,
        libDir: '/nowhere',
        httpPort: 1,
        adminPort: 2,
        apiSecret: 'a"; admin_http = true #',
        adminSecret: 'x',
        sessionTimeout: 60,
        logLevel: 3,
        iceEnforceList: '',
      }),
    ).rejects.toThrow(/quotes/);
  });
});

describe('the sidecar token check', () => {
  const token = 't'.repeat(40);
  it('accepts exactly "Bearer <token>"', () => {
    expect(bearerMatches(`Bearer ${token}`, token)).toBe(true);
    for (const header of [
      undefined,
      '',
      `Bearer ${token}x`,
      `Bearer ${token.slice(1)}`,
      `bearer ${token}`,
      `Basic ${token}`,
      `Bearer  ${token}`,
      'Bearer ',
    ]) {
      expect(bearerMatches(header, token), String(header)).toBe(false);
    }
  });
});
