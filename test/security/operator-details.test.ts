import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExtractor } from '../../src/extraction/index.js';
import { MODELS_DIR, nodeModelLoader } from '../../src/extraction/node-models.js';
import { VOICE_MODEL_FILE } from '../../src/extraction/ort-voice-runner.js';
import { createLogger } from '../../src/logger.js';
import { basic, bootForTest, serviceDialects } from '../support/databases.js';
import { operatorLeaks } from '../support/fuzz/oracle.js';
import { makeJpeg, makeWav } from '../support/media.js';
import { send } from '../support/http.js';

/**
 * Problem details are for API callers: a missing model tells them the service is unavailable, never the
 * server's file paths or what the operator should run. The log gets all of it. The extractors here are the
 * real ones, loading from a folder that lacks the model, so the engine's own error (with its ENOENT path
 * and the script to run) is what the service has to keep to itself.
 */

const MISSING_DIR = '/nonexistent-bims-models-dir/';
const USER = { username: 'end-user', password: 'end-user-password-1' };
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

for (const dialect of serviceDialects) {
  describe(`operator details stay in the log on ${dialect}`, () => {
    const lines: string[] = [];
    let noModels: Awaited<ReturnType<typeof bootForTest>>;
    let noVoice: Awaited<ReturnType<typeof bootForTest>>;
    const userAuth = basic(USER.username, USER.password);

    beforeAll(async () => {
      const logger = createLogger('warn', (line) => lines.push(line));
      // Face models missing: the extractor cannot start at all.
      noModels = await bootForTest(
        dialect,
        {},
        {
          logger,
          createExtractor: () =>
            createExtractor({ mode: 'inline', loadModel: nodeModelLoader(MISSING_DIR), warm: false }),
        },
      );
      // Face models present, voice model missing: voice jobs fail with the engine's MODEL_UNAVAILABLE.
      const faceOnly = nodeModelLoader(MODELS_DIR);
      const missing = nodeModelLoader(MISSING_DIR);
      noVoice = await bootForTest(
        dialect,
        {},
        {
          logger,
          createExtractor: () =>
            createExtractor({
              mode: 'inline',
              loadModel: (file) => (file === VOICE_MODEL_FILE ? missing(file) : faceOnly(file)),
              warm: false,
            }),
        },
      );
      for (const booted of [noModels, noVoice]) {
        expect((await send(booted.app, 'POST', '/admin/accounts/create', { ...USER, role: 'USER' })).status).toBe(201);
      }
    }, 120_000);
    afterAll(async () => {
      await noModels?.close();
      await noVoice?.close();
    });

    it('a missing voice model is a 503 without paths or instructions; the log names the file and the fix', async () => {
      lines.length = 0;
      const res = await send(
        noVoice.app,
        'POST',
        '/user/subjects/create',
        { subjectId: 'voice-1', voices: [{ audio: b64(makeWav(1500)) }] },
        userAuth,
      );
      const text = await res.text();
      expect(res.status, text).toBe(503);
      expect(JSON.parse(text)).toMatchObject({
        type: expect.stringMatching(/\/service-unavailable$/),
        reason: 'MODEL_UNAVAILABLE',
        modality: 'VOICE',
      });
      expect(operatorLeaks(text)).toEqual([]);
      expect(text).not.toContain(MISSING_DIR);
      const logged = lines.join('\n');
      expect(logged).toContain(MISSING_DIR);
      expect(logged).toMatch(/fetch-voice-model/);
    }, 60_000);

    it('face models that cannot load are a 503 without paths or instructions; the log has them', async () => {
      lines.length = 0;
      const res = await send(
        noModels.app,
        'POST',
        '/user/subjects/create',
        { subjectId: 'face-1', faces: [{ image: b64(makeJpeg(64, 64)) }] },
        userAuth,
      );
      const text = await res.text();
      expect(res.status, text).toBe(503);
      expect(operatorLeaks(text)).toEqual([]);
      expect(text).not.toContain(MISSING_DIR);
      expect(lines.join('\n')).toContain(MISSING_DIR);
    }, 60_000);

    it('the leak check itself sees paths and instructions', () => {
      expect(operatorLeaks("voice model x.onnx is missing (ENOENT, open '/work/main/wasm/models/x.onnx')")).not.toEqual(
        [],
      );
      expect(operatorLeaks('run `node scripts/fetch-voice-model.mjs`')).not.toEqual([]);
      expect(operatorLeaks('no sidecar token is configured (BIMS_SIDECAR_TOKEN)')).not.toEqual([]);
      expect(operatorLeaks('No operation answers GET /user/nothing')).toEqual([]);
    });
  });
}
