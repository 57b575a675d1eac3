import { encodeVoiceTemplate } from '../../biometrics/template.js';
import type { VoiceAnalysis } from '../../biometrics/voice/pipeline.js';
import { listStoredVoiceSamples, replaceSubjectTemplate, updateVoiceSample } from '../../db/repositories/reextract.js';
import type { Queryable } from '../../db/repositories/queryable.js';
import { DomainError } from '../errors.js';
import { averagedVoiceTemplate, voiceExtractionError } from '../biometrics/voice-samples.js';
import type { ExtractorProvider } from '../biometrics/extractor-provider.js';
import type { ServiceContext } from '../context.js';

/** A stored voice sample run again through the current voice pipeline. */
interface RedoneVoice {
  sampleId: number;
  analysis: VoiceAnalysis & { embedding: Float32Array };
  template: Uint8Array;
}

/** What re-extraction makes of a subject's stored recordings, or why it cannot. */
type StoredVoices =
  | {
      version: string;
      redone: RedoneVoice[];
      averaged: { template: Uint8Array; quality: number } | null;
      failure?: undefined;
    }
  | { failure: { reason: string; sampleId: number } };

/**
 * Re-run every stored WAV original of a subject through the current voice pipeline (in the pool, outside
 * any transaction) and average the new embeddings into the subject's voice template, as enrolment does.
 *
 * The gates are not applied again, for the reason the face path gives: the recording was admitted at
 * enrolment, and refusing it because a new front end measures speech differently would leave the subject
 * unmatchable. A recording in which the current VAD finds no speech at all cannot give an embedding and is
 * refused naming the sample; so is a stored file the decoder cannot read (not the caller's input: a refused
 * operation, not a 400). A missing voice model is the 503 it is everywhere.
 */
export async function redoStoredVoices(
  services: { ctx: ServiceContext; extractors: ExtractorProvider },
  subjectRef: number,
): Promise<StoredVoices> {
  const samples = await listStoredVoiceSamples(services.ctx.db, subjectRef);
  const extractor = await services.extractors.get();
  const version = extractor.voiceTemplateVersion;
  if (samples.length === 0) return { version, redone: [], averaged: null };
  const redone: RedoneVoice[] = [];
  for (const s of samples) {
    let analysis: VoiceAnalysis;
    try {
      analysis = await extractor.analyseVoice(s.audio);
    } catch (error) {
      const mapped = voiceExtractionError(error, `voiceSamples.${s.id}.audio`);
      if (mapped instanceof DomainError && mapped.code === 'validation') {
        return {
          failure: {
            sampleId: s.id,
            reason: `the stored recording of voice sample ${s.id} cannot be read: ${mapped.detail}`,
          },
        };
      }
      throw mapped;
    }
    if (!analysis.embedding) {
      return {
        failure: {
          sampleId: s.id,
          reason: `the current voice pipeline finds no speech in the stored recording of voice sample ${s.id}`,
        },
      };
    }
    const withEmbedding = analysis as RedoneVoice['analysis'];
    redone.push({
      sampleId: s.id,
      analysis: withEmbedding,
      template: encodeVoiceTemplate(version, { embedding: withEmbedding.embedding, quality: analysis.quality }),
    });
  }
  return { version, redone, averaged: averagedVoiceTemplate(version, redone) };
}

/** Inside the re-extracting transaction: each voice sample's new template and measures, and the subject's averaged VOICE template. */
export async function writeRedoneVoices(
  trx: Queryable,
  subjectRef: number,
  voices: Extract<StoredVoices, { version: string }>,
  now: Date,
) {
  if (!voices.averaged) return;
  for (const r of voices.redone) {
    await updateVoiceSample(trx, subjectRef, r.sampleId, {
      template: r.template,
      template_version: voices.version,
      quality: r.analysis.quality,
      speech_ratio: Math.round(r.analysis.speechRatio * 1000) / 1000,
    });
  }
  await replaceSubjectTemplate(
    trx,
    subjectRef,
    'VOICE',
    { template_version: voices.version, data: voices.averaged.template, quality: voices.averaged.quality },
    now,
  );
}
