import { BiometricError, isClientError } from '../../biometrics/errors.js';
import { encodeVoiceTemplate } from '../../biometrics/template.js';
import { gateVoice, type VoiceGateFailure, type VoiceGates } from '../../biometrics/voice/settings.js';
import { l2normalise, type VoiceAnalysis } from '../../biometrics/voice/pipeline.js';
import type { SettingsService } from '../settings/settings.js';
import type { SampleServices } from './sample-services.js';
import { DomainError } from '../errors.js';
import type { SampleFields } from '../../schemas/field-names.js';
import { unavailableReason } from './extraction-errors.js';
import { callerQueueError, isCallerQueueError } from './image-admission.js';

/** One voice recording that passed every gate. */
export interface AcceptedVoice {
  /** Position in the request's `voices` list. */
  index: number;
  /** The original WAV bytes (stored as they came, served by the downloads). */
  bytes: Uint8Array;
  analysis: VoiceAnalysis & { embedding: Float32Array };
  /** Template format v1 of this recording alone (kept on its voice_samples row). */
  template: Uint8Array;
  /** The voice template version the recording was embedded with. */
  templateVersion: string;
}

/** Why a recording was refused: always QUALITY_CHECK_FAILED, with the gate that refused it. */
export interface VoiceGateRefusal {
  status: 'QUALITY_CHECK_FAILED';
  index: number;
  failedCheck: VoiceGateFailure;
  reason: string;
  analysis: VoiceAnalysis;
}

/** The voice gates in force: settings, read per request so an administrator's change applies at once. */
async function voiceGatesOf(services: { settings: SettingsService }): Promise<VoiceGates> {
  const [minSpeechSeconds, minSnrDb, maxClippedRatio, minQuality] = await Promise.all([
    services.settings.get('voice.minSpeechSeconds'),
    services.settings.get('voice.minSnrDb'),
    services.settings.get('voice.maxClippedRatio'),
    services.settings.get('quality.voice.minimum'),
  ]);
  return { minSpeechSeconds, minSnrDb, maxClippedRatio, minQuality };
}

/**
 * A voice engine error as a domain error: the caller's bad bytes (not WAV, truncated WAV) are a 400 naming
 * the field; a missing voice model is a 503 naming the model (faces keep working); a full queue or a slow
 * job is a 503 to retry.
 */
export function voiceExtractionError(error: unknown, field: string): unknown {
  if (!BiometricError.is(error)) return error;
  if (isClientError(error.code)) {
    return new DomainError('validation', `${field}: ${error.message}`, {
      errors: [{ field, message: error.message }],
      reason: error.code,
    });
  }
  if (isCallerQueueError(error)) return callerQueueError(error, 'Voice');
  if (error.code === 'MODEL_UNAVAILABLE') {
    return new DomainError(
      'service-unavailable',
      'Voice extraction is unavailable: the voice model is not installed or cannot be loaded on this server',
      { reason: error.code, modality: 'VOICE' },
      error.message,
    );
  }
  if (error.code === 'EXTRACTOR_BUSY' || error.code === 'EXTRACTION_TIMEOUT' || error.code === 'EXTRACTOR_CLOSED') {
    return new DomainError(
      'service-unavailable',
      `Voice extraction is unavailable: ${unavailableReason[error.code]}`,
      { reason: error.code, retryAfterSeconds: 2 },
      error.message,
    );
  }
  return error;
}

/** What a client sees of a recording's measures (operation details, refusals). */
export function presentVoiceMeasures(a: VoiceAnalysis) {
  const r2 = (x: number) => Math.round(x * 100) / 100;
  return {
    durationMs: a.durationMs,
    sampleRate: a.sampleRate,
    channels: a.channels,
    speechSeconds: r2(a.speechSeconds),
    speechRatio: r2(a.speechRatio),
    snrDb: r2(a.snrDb),
    clippedRatio: Math.round(a.clippedRatio * 1e5) / 1e5,
    quality: a.quality,
  };
}

/**
 * Analyse voice recordings (base64 WAV) in the worker pool, in parallel and outside any transaction, and
 * apply the gates. All or nothing: the first refused recording (in request order) is reported.
 */
export async function analyseVoices(
  services: SampleServices,
  audios: Uint8Array[],
  fields: SampleFields,
): Promise<{ accepted: AcceptedVoice[]; failure?: undefined } | { accepted?: undefined; failure: VoiceGateRefusal }> {
  const [extractor, gates] = await Promise.all([services.extractors.get(), voiceGatesOf(services)]);
  const analyses = await Promise.all(
    audios.map((bytes, i) =>
      extractor.analyseVoice(bytes).catch((error: unknown) => {
        throw voiceExtractionError(error, fields.bytes(i));
      }),
    ),
  );
  const accepted: AcceptedVoice[] = [];
  for (const [index, analysis] of analyses.entries()) {
    const refused = gateVoice(analysis, gates);
    if (refused || !analysis.embedding) {
      const failedCheck = refused?.failure ?? 'TOO_LITTLE_SPEECH';
      const why = refused?.reason ?? 'no speech was detected';
      return {
        failure: {
          status: 'QUALITY_CHECK_FAILED',
          index,
          failedCheck,
          reason: `${fields.sample(index)}: ${failedCheck}: ${why}`,
          analysis,
        },
      };
    }
    const withEmbedding = analysis as AcceptedVoice['analysis'];
    const templateVersion = extractor.voiceTemplateVersion;
    accepted.push({
      index,
      bytes: audios[index]!,
      analysis: withEmbedding,
      templateVersion,
      template: encodeVoiceTemplate(templateVersion, { embedding: withEmbedding.embedding, quality: analysis.quality }),
    });
  }
  return { accepted };
}

/**
 * The subject's (or probe's) voice template: the recordings' embeddings averaged and L2-normalised, as the
 * encoder's authors enrol a speaker from several utterances (three clips measured 4.1% EER against 6% for
 * one: docs/voice.md). Quality is the recordings' mean. Null for no recordings.
 */
export function averagedVoiceTemplate(
  templateVersion: string,
  voices: readonly { analysis: { embedding: Float32Array; quality: number } }[],
): { template: Uint8Array; quality: number } | null {
  if (voices.length === 0) return null;
  const mean = new Float32Array(voices[0]!.analysis.embedding.length);
  for (const v of voices) for (let i = 0; i < mean.length; i++) mean[i]! += v.analysis.embedding[i]!;
  l2normalise(mean);
  const quality = Math.round(voices.reduce((a, v) => a + v.analysis.quality, 0) / voices.length);
  return { template: encodeVoiceTemplate(templateVersion, { embedding: mean, quality }), quality };
}

/** The voice_samples row of an accepted recording: an enrolled subject's (`subjectRef`) or a probe's (null). */
export function voiceSampleRow(
  voice: AcceptedVoice,
  owner: { subjectRef: number | null; operationUuid: string; at: Date },
) {
  const a = voice.analysis;
  return {
    subject_ref: owner.subjectRef,
    operation_uuid: owner.operationUuid,
    audio: voice.bytes,
    duration_ms: a.durationMs,
    sample_rate: a.sampleRate,
    quality: a.quality,
    speech_ratio: Math.round(a.speechRatio * 1000) / 1000,
    template_version: voice.templateVersion,
    template: voice.template,
    created_at: owner.at,
  };
}
