// The one analyse step of enrolment, operations and live capture (issue 34, "analyse, then store"): the models run
// on each sample once, here, and what they measured travels on as a value (AcceptedFace, AcceptedVoice) to the
// step that stores an enrolment or runs an operation. A capture analyses its frames as they come (with
// `frameMeasures`) and hands the analyses of the frames it chose to `analyseSamples`, which then only re-applies
// the gates: no model runs again on a chosen frame.
import type { AnalyseOptions } from '../../biometrics/face/analysis.js';
import { jsonFieldNames, sampleFields, type FieldNamer } from '../../schemas/field-names.js';
import {
  acceptFaces,
  analyseImages,
  faceGatesOf,
  type AcceptedFace,
  type AnalysedImage,
  type FaceGates,
  type GateFailure,
} from './face-samples.js';
import type { SampleServices } from './sample-services.js';
import { analyseVoices, type AcceptedVoice, type VoiceGateRefusal } from './voice-samples.js';

/** What the samples are analysed for: an enrolment, or one of the operations. */
type SamplePurpose = 'ENROLL' | 'VERIFY' | 'IDENTIFY' | 'CHECK';

/** Which of the face checks an analysis runs (AnalyseOptions' switches). */
type FaceMeasures = Required<Pick<AnalyseOptions, 'checks' | 'attributes' | 'liveness'>>;

/**
 * The face measures a purpose needs under its gates.
 * - ENROLL: the checks (stored samples carry pose and eyes), without age and gender (no gate uses them, no
 *   sample stores them).
 * - VERIFY and IDENTIFY: only what a template needs (about half the cost of a face) unless a gate needs the
 *   checks.
 * - CHECK: everything, since it shows every measure.
 * Passive liveness is measured only when a gate needs it (`liveness.mode` PASSIVE, `detectLiveness`, or
 * `checkIcao`, whose warnings include LIVENESS): the model is a tenth of an enrolment's work.
 */
export function faceMeasures(purpose: SamplePurpose, gates: FaceGates): FaceMeasures {
  const livenessGated = gates.requireLiveness || gates.checkIcao;
  if (purpose === 'CHECK') return { checks: true, attributes: true, liveness: true };
  if (purpose === 'ENROLL') return { checks: true, attributes: false, liveness: livenessGated };
  return { checks: livenessGated, attributes: false, liveness: livenessGated };
}

/**
 * What a capture measures on every frame it analyses: what its purpose's operation needs (so the analyses of
 * the frames it chooses serve the operation as they are), plus the checks always, since the frame judge's
 * guidance (turned away, eyes closed) and active liveness read pose and eyes. For VERIFY and IDENTIFY that is
 * more than the operation needs (pose and eyes lower a face's quality): the frames chosen passed the gates on
 * that lower quality, so they pass them again, and a probe's quality is neither matched nor stored. For CHECK
 * every frame pays for age, gender and liveness, the price of showing them for the frames chosen without
 * analysing those again.
 * Without the embedding (a third of a frame's analysis), which the judge never reads: the frames kept have theirs
 * made once chosen (`embedKeptFaces`), unless the session follows active liveness instructions (`followsFace`),
 * which compare each frontal frame's embedding with the tracked person's. Passive liveness (a fifth of what is
 * left) only on faces that pass the judge's gates before it (`livenessGate`: one face, the minimum quality), the
 * only frames whose liveness the judge reads and the operation may take.
 */
export function frameMeasures(
  purpose: SamplePurpose,
  gates: FaceGates,
  followsFace = false,
): FaceMeasures & Pick<AnalyseOptions, 'embedding' | 'livenessGate'> {
  const livenessGate = { minQuality: gates.minQuality, allowMultiple: gates.allowMultiple };
  return { ...faceMeasures(purpose, gates), checks: true, embedding: followsFace, livenessGate };
}

/** A sample the gates refused: the operation status it gives and why, with what was measured on it. */
type SampleRefusal = ({ modality: 'FACE' } & GateFailure) | ({ modality: 'VOICE' } & VoiceGateRefusal);

/** The analysed samples of one request: every one accepted (with its template), or the first refused. */
export type SampleAnalyses =
  | { faces: AcceptedFace[]; voices: AcceptedVoice[]; refusal?: undefined }
  | { faces?: undefined; voices?: undefined; refusal: SampleRefusal };

/** The samples of one request or capture. */
interface Samples {
  /**
   * The face images: bytes still to analyse (a request's), or images analysed already with at least
   * `faceMeasures(purpose, gates)` (a capture's chosen frames, analysed with `frameMeasures`).
   */
  faces: readonly Uint8Array[] | { analysed: readonly AnalysedImage[] };
  /** The voice recordings (WAV), analysed here: a capture hears its voice but never runs the voice model. */
  voices: readonly Uint8Array[];
}

/**
 * Analyse a request's samples (faces and voices in parallel, outside any transaction) and apply the gates, all
 * or nothing: a refused face is reported before a refused voice, each the first refused in request order.
 * Faces given as analyses are only gated. Bad bytes are a 400 naming the field as the request names it
 * (`names`: a JSON body's `body.faces.N.image` and `body.voices.N.audio` by default, a form's parts otherwise).
 */
export async function analyseSamples(
  services: SampleServices,
  samples: Samples,
  purpose: { purpose: SamplePurpose; gates: FaceGates },
  names: FieldNamer = jsonFieldNames,
): Promise<SampleAnalyses> {
  const faceFields = sampleFields(names, 'faces', 'image');
  const images = 'analysed' in samples.faces ? null : samples.faces;
  const analyseFaces = async (): Promise<readonly AnalysedImage[]> => {
    if (!images) return (samples.faces as { analysed: readonly AnalysedImage[] }).analysed;
    if (images.length === 0) return [];
    const measures = faceMeasures(purpose.purpose, purpose.gates);
    const analyses = await analyseImages(services, [...images], faceFields.bytes, measures);
    return analyses.map((analysis, i) => ({ bytes: images[i]!, analysis }));
  };
  const [analysedFaces, voices] = await Promise.all([
    analyseFaces(),
    samples.voices.length
      ? analyseVoices(services, [...samples.voices], sampleFields(names, 'voices', 'audio'))
      : { accepted: [] as AcceptedVoice[], failure: undefined },
  ]);
  // The extractor only names the template version here (no job): a request without faces never asks for it.
  const templateVersion = analysedFaces.length ? (await services.extractors.get()).templateVersion : '';
  const faces = acceptFaces(analysedFaces, purpose.gates, templateVersion, faceFields);
  if (faces.failure) return { refusal: { modality: 'FACE', ...faces.failure } };
  if (voices.failure) return { refusal: { modality: 'VOICE', ...voices.failure } };
  return { faces: faces.accepted, voices: voices.accepted };
}

/** A JSON or form request's samples, as createSubject and createOperation take them (bytes by then). */
interface SampleRequest {
  faces?: readonly { image: Uint8Array }[];
  voices?: readonly { audio: Uint8Array }[];
  options?: { checkIcao?: boolean; detectLiveness?: boolean };
}

/**
 * Analyse a request's samples for its purpose under the gates of the settings with the request's options on top:
 * how an enrolment and an operation made over HTTP both begin (a capture brings its own gates and analyses).
 */
export async function analyseRequestSamples(
  services: SampleServices,
  request: SampleRequest,
  purpose: SamplePurpose,
  names: FieldNamer = jsonFieldNames,
): Promise<SampleAnalyses> {
  const gates = await faceGatesOf(services, {
    checkIcao: request.options?.checkIcao,
    detectLiveness: request.options?.detectLiveness,
  });
  return analyseSamples(
    services,
    { faces: request.faces?.map((f) => f.image) ?? [], voices: request.voices?.map((v) => v.audio) ?? [] },
    { purpose, gates },
    names,
  );
}
