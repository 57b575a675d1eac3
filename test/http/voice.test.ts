// Voice and face+voice subjects through HTTP, on real recordings (scripts/fetch-test-speech.mjs) and photos:
// multimodal enrolment, VERIFY and IDENTIFY with fused scores, voice data reads, refusals of bad recordings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootForTest, serviceDialects } from '../support/databases.js';
import { send } from '../support/http.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { photo } from '../biometrics/helpers.js';
import { b64, wav, voices, ALLISON, ALLISON_PROBE, CARLO, CARLO_PROBE } from '../support/speech.js';
import { encodeWav16 } from '../../src/biometrics/voice/wav.js';

const franck = ['labelled/franck/franck_01829.jpg', 'labelled/franck/franck_04000.jpg'];

afterAll(async () => {
  await closeSharedExtractor();
});

for (const dialect of serviceDialects) {
  describe(`voice subjects on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    beforeAll(async () => {
      booted = await bootForTest(dialect, {}, { createExtractor: sharedExtractorFactory() });
    });
    afterAll(async () => {
      await booted?.close();
    });
    const post = (path: string, body: unknown) => send(booted.app, 'POST', path, body);
    const get = (path: string) => send(booted.app, 'GET', path);
    const db = () => booted.services.ctx.db;

    it('enrols face + three voices: one VOICE template (averaged), the WAV originals stored as sent', async () => {
      const res = await post('/admin/subjects/create', {
        subjectId: 'allison',
        faces: [{ image: b64(photo(franck[0]!)) }],
        voices: voices(ALLISON),
      });
      expect(res.status).toBe(201);
      const subject = await res.json();
      expect(subject).toMatchObject({ subjectId: 'allison', status: 'ENROLLED', modalities: ['FACE', 'VOICE'] });
      expect(subject.voices).toHaveLength(3);
      expect(subject.voices[0]).toMatchObject({
        sampleRate: 8000,
        templateVersion: (await booted.services.extractors.get()).voiceTemplateVersion,
      });
      const rows = await db()
        .selectFrom('voice_samples')
        .select(['id', 'audio'])
        .where('subject_ref', '=', subject.id)
        .orderBy('id')
        .execute();
      expect(rows.map((r) => Buffer.from(r.audio).equals(Buffer.from(wav(ALLISON[rows.indexOf(r)]!))))).toEqual([
        true,
        true,
        true,
      ]);
      const templates = await db()
        .selectFrom('templates')
        .select('modality')
        .where('subject_ref', '=', subject.id)
        .orderBy('modality')
        .execute();
      expect(templates.map((t) => t.modality)).toEqual(['FACE', 'VOICE']);
      const byId = await get(`/admin/biometric-data/voice/id/?id=${rows[0]!.id}`);
      expect(byId.status).toBe(200);
      expect(await byId.json()).toMatchObject({ id: rows[0]!.id, subjectId: 'allison', sampleRate: 8000 });
      const byUuid = await get(`/admin/biometric-data/voice/uuid/?uuid=${subject.enrollmentOperationUuid}`);
      expect(byUuid.status).toBe(200);
    });

    it('enrols a voice-only subject and identifies it from a held-apart clip; another voice is not matched', async () => {
      const res = await post('/admin/subjects/create', { subjectId: 'carlo', voices: voices(CARLO) });
      expect(res.status).toBe(201);
      expect((await res.json()).modalities).toEqual(['VOICE']);
      const found = await (
        await post('/admin/operations/create', {
          type: 'IDENTIFY',
          voices: voices([CARLO_PROBE]),
          options: { threshold: 24 },
        })
      ).json();
      expect(found).toMatchObject({ status: 'SUCCESS', modalities: ['VOICE'] });
      expect(found.candidates[0]).toMatchObject({ subjectId: 'carlo', scores: { VOICE: expect.any(Number) } });
      expect(found.candidates.map((c: { subjectId: string }) => c.subjectId)).not.toContain('allison');
      const other = await (
        await post('/admin/operations/create', {
          type: 'VERIFY',
          subjectId: 'carlo',
          voices: voices([ALLISON_PROBE]),
          options: { threshold: 24 },
        })
      ).json();
      expect(other).toMatchObject({ status: 'MATCH_NOT_FOUND' });
      expect(other.score).toBeLessThan(24);
    });

    it('verifies and identifies face + voice with fused scores above either alone', async () => {
      const probe = { faces: [{ image: b64(photo(franck[1]!)) }], voices: voices([ALLISON_PROBE]) };
      const verified = await (
        await post('/admin/operations/create', { type: 'VERIFY', subjectId: 'allison', ...probe })
      ).json();
      expect(verified).toMatchObject({ status: 'SUCCESS', modalities: ['FACE', 'VOICE'] });
      const identified = await (await post('/admin/operations/create', { type: 'IDENTIFY', ...probe })).json();
      expect(identified.status).toBe('SUCCESS');
      const top = identified.candidates[0];
      expect(top).toMatchObject({
        subjectId: 'allison',
        scores: { FACE: expect.any(Number), VOICE: expect.any(Number) },
      });
      expect(top.score).toBeGreaterThan(top.scores.FACE);
      expect(top.score).toBeGreaterThan(top.scores.VOICE);
      expect(top.score).toBe(verified.score);
      const stored = await db()
        .selectFrom('voice_samples')
        .select('subject_ref')
        .where('operation_uuid', '=', identified.uuid)
        .execute();
      expect(stored).toEqual([{ subject_ref: null }]);
    });

    it('refuses bad recordings: other containers and truncated WAV are 400 naming the field; silence is 422 TOO_LITTLE_SPEECH with nothing stored', async () => {
      const before = Number(
        (
          await db()
            .selectFrom('subjects')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
      const ogg = await post('/admin/subjects/create', {
        subjectId: 'bad-ogg',
        voices: [{ audio: b64(new TextEncoder().encode('OggS\0\x02 an ogg page')) }],
      });
      expect(ogg.status).toBe(400);
      expect(await ogg.json()).toMatchObject({
        errors: [{ field: 'body.voices.0.audio', message: expect.stringMatching(/Ogg/) }],
      });
      const whole = wav(ALLISON_PROBE);
      const cut = await post('/admin/subjects/create', {
        subjectId: 'bad-cut',
        voices: [{ audio: b64(whole.subarray(0, whole.length >> 1)) }],
      });
      expect(cut.status).toBe(400);
      expect(await cut.json()).toMatchObject({
        errors: [{ field: 'body.voices.0.audio', message: expect.stringMatching(/truncated/) }],
      });
      const silent = await post('/admin/subjects/create', {
        subjectId: 'bad-silence',
        voices: [{ audio: b64(encodeWav16(new Float32Array(16000 * 3), 16000)) }],
      });
      expect(silent.status).toBe(422);
      expect(await silent.json()).toMatchObject({
        operationStatus: 'QUALITY_CHECK_FAILED',
        failedCheck: 'TOO_LITTLE_SPEECH',
        sampleIndex: 0,
      });
      const after = Number(
        (
          await db()
            .selectFrom('subjects')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
      expect(after).toBe(before);
    });
  });
}
