// Voice data a subject carries, through HTTP on real recordings: enrolled and template modalities (VOICE,
// FACE+VOICE), the voice data reads, the WAV originals in the biometric-data ZIP, and reextractSubject
// rebuilding the averaged voice template from the stored WAVs (gallery included).
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootForTest, serviceDialects } from '../support/databases.js';
import { send } from '../support/http.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { photo } from '../biometrics/helpers.js';
import { b64, wav, voices, ALLISON, ALLISON_PROBE, CARLO } from '../support/speech.js';
import { encodeTemplate, faceRecord, parseTemplate } from '../../src/biometrics/template.js';
import { voiceRecord } from '../support/template-records.js';

const franck = 'labelled/franck/franck_01829.jpg';

afterAll(async () => {
  await closeSharedExtractor();
});

for (const dialect of serviceDialects) {
  describe(`voice data on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    let dora: { id: number; enrollmentOperationUuid: string };
    beforeAll(async () => {
      booted = await bootForTest(dialect, {}, { createExtractor: sharedExtractorFactory() });
      const res = await post('/admin/subjects/create', {
        subjectId: 'dora',
        faces: [{ image: b64(photo(franck)) }],
        voices: voices(ALLISON),
      });
      expect(res.status).toBe(201);
      dora = await res.json();
      expect((await post('/admin/subjects/create', { subjectId: 'carlo', voices: voices(CARLO) })).status).toBe(201);
    }, 120_000);
    afterAll(async () => {
      await booted?.close();
    });
    const post = (path: string, body: unknown) => send(booted.app, 'POST', path, body);
    const get = (path: string) => send(booted.app, 'GET', path);
    const db = () => booted.services.ctx.db;
    const template = async (subjectId: string, modality: 'FACE' | 'VOICE') =>
      (
        await db()
          .selectFrom('templates as t')
          .innerJoin('subjects as s', 's.id', 't.subject_ref')
          .select('t.data')
          .where('s.subject_id', '=', subjectId)
          .where('t.modality', '=', modality)
          .executeTakeFirstOrThrow()
      ).data;

    it('getSubjectsEnrolledModalities reports FACE and VOICE, or VOICE alone', async () => {
      expect(await (await get('/admin/subjects/modality/types?subjectId=dora')).json()).toMatchObject({
        subjectId: 'dora',
        status: 'ENROLLED',
        modalities: ['FACE', 'VOICE'],
      });
      expect(await (await get('/admin/subjects/modality/types?subjectId=carlo')).json()).toMatchObject({
        subjectId: 'carlo',
        modalities: ['VOICE'],
      });
    });

    it('getTemplateModalities reads a VOICE record, and FACE + VOICE in one template', async () => {
      const voice = await template('carlo', 'VOICE');
      const alone = await (await post('/admin/subjects/qrcode/modalities', { template: b64(voice) })).json();
      expect(alone).toMatchObject({
        modalities: ['VOICE'],
        templateVersion: (await booted.services.extractors.get()).voiceTemplateVersion,
        formatVersion: 1,
        signed: false,
      });
      const face = parseTemplate(await template('dora', 'FACE'));
      const both = encodeTemplate({
        templateVersion: face.templateVersion,
        records: [faceRecord(face)!, voiceRecord(parseTemplate(voice))!],
      });
      expect(
        (await (await post('/admin/subjects/qrcode/modalities', { template: b64(both) })).json()).modalities,
      ).toEqual(['FACE', 'VOICE']);
    });

    it('getBiometricVoiceDataById and ByUUID answer what was stored for each recording', async () => {
      const rows = await db()
        .selectFrom('voice_samples')
        .selectAll()
        .where('subject_ref', '=', dora.id)
        .orderBy('id')
        .execute();
      expect(rows).toHaveLength(3);
      const version = (await booted.services.extractors.get()).voiceTemplateVersion;
      for (const row of rows) {
        const res = await get(`/admin/biometric-data/voice/id/?id=${row.id}`);
        expect(res.status).toBe(200);
        const data = await res.json();
        expect(data).toEqual({
          id: row.id,
          uuid: dora.enrollmentOperationUuid,
          subjectId: 'dora',
          durationMs: row.duration_ms,
          sampleRate: 8000,
          quality: row.quality,
          speechRatio: row.speech_ratio,
          templateVersion: version,
          createdAt: expect.any(String),
        });
        // The asterisk prompts are 16-bit 8 kHz mono: the duration follows from the file's size.
        expect(Math.abs(data.durationMs - ((row.audio.length - 44) / 2 / 8000) * 1000)).toBeLessThan(2);
        expect(data.quality).toBeGreaterThanOrEqual(30);
        expect(data.speechRatio).toBeGreaterThan(0.5);
      }
      const byUuid = await (await get(`/admin/biometric-data/voice/uuid/?uuid=${dora.enrollmentOperationUuid}`)).json();
      const list = Array.isArray(byUuid) ? byUuid : (byUuid.items ?? byUuid.voices);
      expect(list.map((v: { id: number }) => v.id)).toEqual(rows.map((r) => r.id));
      expect(await (await get('/admin/biometric-data/voice/id/?id=999999')).json()).toMatchObject({ status: 404 });
    });

    it('the subject ZIP holds each WAV original as sent, listed in the manifest', async () => {
      const res = await get('/admin/biometric-data/subjectid/dora/download');
      expect(res.status).toBe(200);
      const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
      const manifest = JSON.parse(new TextDecoder().decode(files['manifest.json']));
      const rows = await db()
        .selectFrom('voice_samples')
        .select('id')
        .where('subject_ref', '=', dora.id)
        .orderBy('id')
        .execute();
      const entries = manifest.entries.filter((e: { kind: string }) => e.kind === 'VOICE');
      expect(entries.map((e: { voiceId: number }) => e.voiceId)).toEqual(rows.map((r) => r.id));
      for (const [i, entry] of entries.entries()) {
        expect(entry).toMatchObject({
          contentType: 'audio/wav',
          subjectId: 'dora',
          uuid: dora.enrollmentOperationUuid,
          size: wav(ALLISON[i]!).length,
        });
        expect(entry.path).toMatch(new RegExp(`/voice-${rows[i]!.id}\\.wav$`));
        expect(Buffer.from(files[entry.path]!).equals(Buffer.from(wav(ALLISON[i]!)))).toBe(true);
      }
      expect(manifest.entries.some((e: { kind: string }) => e.kind === 'ORIGINAL')).toBe(true);
    });

    it('reextractSubject rebuilds the averaged voice template from the stored WAVs and the gallery matches it again', async () => {
      const enrolled = await template('dora', 'VOICE');
      // A subject left behind by an older voice pipeline: its voice rows of another version, its voice
      // template someone else's, and the gallery loaded from those rows.
      await db()
        .updateTable('voice_samples')
        .set({ template_version: 'voice:older@0/p0' })
        .where('subject_ref', '=', dora.id)
        .execute();
      await db()
        .updateTable('templates')
        .set({ data: await template('carlo', 'VOICE') })
        .where('subject_ref', '=', dora.id)
        .where('modality', '=', 'VOICE')
        .execute();
      booted.services.gallery.forget();
      const identify = async () =>
        (
          await (
            await post('/admin/operations/create', {
              type: 'IDENTIFY',
              voices: voices([ALLISON_PROBE]),
              options: { threshold: 24 },
            })
          ).json()
        ).candidates.map((c: { subjectId: string }) => c.subjectId);
      expect(await identify()).not.toContain('dora');

      const res = await post('/admin/subjects/reextract-subject', { subjectId: 'dora' });
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.operation).toMatchObject({ type: 'REEXTRACT', status: 'SUCCESS', modalities: ['FACE', 'VOICE'] });
      const version = (await booted.services.extractors.get()).voiceTemplateVersion;
      const rows = await db()
        .selectFrom('voice_samples')
        .select('template_version')
        .where('subject_ref', '=', dora.id)
        .execute();
      expect(rows.map((r) => r.template_version)).toEqual([version, version, version]);
      // Same recordings, same pipeline: the rebuilt average is the enrolment's, byte for byte.
      expect(Buffer.from(await template('dora', 'VOICE')).equals(Buffer.from(enrolled))).toBe(true);
      expect((await identify())[0]).toBe('dora');
    }, 60_000);

    it('reextractSubject with an old template refuses new voices naming body.voices', async () => {
      const res = await post('/admin/subjects/reextract-subject', {
        template: b64(await template('dora', 'FACE')),
        voices: voices([ALLISON_PROBE]),
      });
      expect(res.status).toBe(422);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      const problem = await res.json();
      expect(problem.detail).toMatch(/^body\.voices: /);
      expect(problem.detail).not.toMatch(/issue 6/);
    });
  });
}
