import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../db/json.js';
import { bootForTest } from '../../../test/support/databases.js';
import { SETTINGS_CACHE_SECONDS, SettingsService } from './settings.js';
import { faceCheckSettingsOf } from './face-checks.js';
import { DEFAULT_FACE_CHECK_SETTINGS } from '../../biometrics/settings.js';

describe('settings service cache', () => {
  let booted: Awaited<ReturnType<typeof bootForTest>>;
  let clock = Date.parse('2026-11-25T12:00:00Z');
  beforeAll(async () => {
    booted = await bootForTest('pglite', {}, { now: () => new Date(clock) });
  });
  afterAll(async () => {
    await booted?.close();
  });

  it('sees its own writes at once and another node’s within the cache lifetime', async () => {
    const here = booted.services.settings;
    const otherNode = new SettingsService(booted.services.ctx);
    expect(await otherNode.get('matching.threshold')).toBe(48);
    await here.set('matching.threshold', 60);
    expect(await here.get('matching.threshold')).toBe(60);
    expect(await otherNode.get('matching.threshold')).toBe(48); // still cached over there
    clock += (SETTINGS_CACHE_SECONDS + 1) * 1000;
    expect(await otherNode.get('matching.threshold')).toBe(60);
  });

  it('falls back to the default for a stored value the registry now refuses, and ignores unknown keys', async () => {
    const { db } = booted.services.ctx;
    await db
      .insertInto('settings')
      .values({ key: 'identify.maxCandidates', value: json(5000) })
      .execute();
    await db
      .insertInto('settings')
      .values({ key: 'retired.key', value: json(true) })
      .execute();
    const settings = booted.services.settings;
    settings.invalidate();
    expect(await settings.get('identify.maxCandidates')).toBe(10);
    expect((await settings.list()).some((s) => s.key === ('retired.key' as never))).toBe(false);
    expect((await settings.reset()).removed).toBe(3); // matching.threshold, identify.maxCandidates, retired.key
  });

  it('maps the effective settings onto the face engine thresholds', async () => {
    const settings = booted.services.settings;
    expect(await faceCheckSettingsOf(settings)).toEqual(DEFAULT_FACE_CHECK_SETTINGS);
    await settings.set('checks.face.maxYaw', 35);
    await settings.set('quality.face.minimum', 70);
    expect(await faceCheckSettingsOf(settings)).toMatchObject({
      maxYaw: 35,
      minQuality: 70,
      maxPitch: DEFAULT_FACE_CHECK_SETTINGS.maxPitch,
    });
  });
});
