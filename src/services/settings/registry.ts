import { z } from 'zod';
import { DEFAULT_FACE_CHECK_SETTINGS as face } from '../../biometrics/settings.js';
import { DEFAULT_VOICE_GATES as voice } from '../../biometrics/voice/settings.js';

/**
 * Who reads a setting: `operation` settings are properties of biometric operations (thresholds, quality
 * gates, liveness), listed by `getDefaultProperties`; `service` settings are policies of the service itself
 * (adjudication, retention).
 */
export type SettingScope = 'operation' | 'service';

/** One known key: its type, range, default and meaning. The zod schema is derived from the rest. */
export interface SettingDefinition<T = unknown> {
  type: 'integer' | 'number' | 'boolean' | 'enum';
  schema: z.ZodType<T>;
  default: T;
  minimum?: number;
  maximum?: number;
  allowedValues?: readonly string[];
  unit?: string;
  scope: SettingScope;
  description: string;
}

type Extra = { unit?: string; scope?: SettingScope };

function integer(
  dflt: number,
  minimum: number,
  maximum: number,
  description: string,
  extra: Extra = {},
): SettingDefinition<number> {
  return {
    type: 'integer',
    schema: z.number().int().min(minimum).max(maximum),
    default: dflt,
    minimum,
    maximum,
    scope: 'operation',
    description,
    ...extra,
  };
}
function number(
  dflt: number,
  minimum: number,
  maximum: number,
  description: string,
  extra: Extra = {},
): SettingDefinition<number> {
  return {
    type: 'number',
    schema: z.number().min(minimum).max(maximum),
    default: dflt,
    minimum,
    maximum,
    scope: 'operation',
    description,
    ...extra,
  };
}
function boolean(dflt: boolean, description: string, extra: Extra = {}): SettingDefinition<boolean> {
  return { type: 'boolean', schema: z.boolean(), default: dflt, scope: 'operation', description, ...extra };
}
function choice<const V extends readonly [string, ...string[]]>(
  values: V,
  dflt: V[number],
  description: string,
  extra: Extra = {},
): SettingDefinition<V[number]> {
  return {
    type: 'enum',
    schema: z.enum(values) as unknown as z.ZodType<V[number]>,
    default: dflt,
    allowedValues: values,
    scope: 'operation',
    description,
    ...extra,
  };
}

/** Scores use the false-acceptance scale of biometrics.md, clamped to 0..200 like every match score (docs/template-format.md). */
const SCORE_MAX = 200;
const score = { unit: 'score (-12 log10 FAR)' };
const service = { scope: 'service' } as const;
const days = { unit: 'days (0 keeps forever)', scope: 'service' } as const;

/**
 * Every setting the service knows, in one place. `setSetting` refuses any other key and any value outside
 * the key's type and range; reading a key that was never set gives its default here. Later areas add their
 * keys here rather than reading ad-hoc names, so `getSettings` and `getDefaultProperties` always list them.
 * The face check defaults come from the face engine (src/biometrics/settings.ts), so there is one source.
 */
export const settingsRegistry = {
  'matching.threshold': number(
    48,
    0,
    SCORE_MAX,
    'Verify and identify accept a candidate at or above this score (48 = FAR 0.01%)',
    score,
  ),
  'deduplication.duplicateThreshold': number(
    72,
    0,
    SCORE_MAX,
    'Enrolment is refused as a duplicate at or above this score',
    score,
  ),
  'deduplication.adjudicationThreshold': number(
    48,
    0,
    SCORE_MAX,
    'Enrolment goes to adjudication at or above this score (below the duplicate threshold)',
    score,
  ),
  'identify.maxCandidates': integer(10, 1, 1000, 'Most candidates an identification returns'),
  'quality.face.minimum': integer(50, 0, 100, 'Face quality (0..100) needed to extract a template'),
  'quality.voice.minimum': integer(voice.minQuality, 0, 100, 'Voice quality (0..100) needed to extract a template'),
  'voice.minSpeechSeconds': number(
    voice.minSpeechSeconds,
    0.5,
    60,
    'Seconds of detected speech needed in a voice sample',
    { unit: 'seconds' },
  ),
  'voice.minSnrDb': number(
    voice.minSnrDb,
    0,
    60,
    'Lowest signal-to-noise estimate accepted in a voice sample (TOO_NOISY below)',
    { unit: 'dB' },
  ),
  'voice.maxClippedRatio': number(
    voice.maxClippedRatio,
    0,
    1,
    'Highest share of samples at full scale accepted in a voice sample (CLIPPED above)',
  ),
  'liveness.mode': choice(['NONE', 'PASSIVE'] as const, 'NONE', 'Liveness check applied to face samples'),
  'liveness.threshold': integer(50, 0, 100, 'Passive liveness score (0..100) needed when liveness.mode is PASSIVE'),
  'faces.allowMultiple': boolean(
    false,
    'Accept images with more than one face (the largest is used); otherwise such images are refused',
  ),
  'checks.face.detectionThreshold': number(
    face.detectionThreshold,
    0,
    1,
    'Detector probability needed to report a face',
  ),
  'checks.face.minFaceSize': integer(face.minFaceSize, 1, 10_000, 'Faces smaller than this (box height) are ignored', {
    unit: 'pixels',
  }),
  'checks.face.maxFaces': integer(face.maxFaces, 1, 1000, 'Most faces analysed per image'),
  'checks.face.maxYaw': number(face.maxYaw, 0, 90, 'Largest |yaw| before YAW_LEFT/YAW_RIGHT', { unit: 'degrees' }),
  'checks.face.maxPitch': number(face.maxPitch, 0, 90, 'Largest |pitch| before PITCH_UP/PITCH_DOWN', {
    unit: 'degrees',
  }),
  'checks.face.maxRoll': number(face.maxRoll, 0, 90, 'Largest |roll| before ROLL_LEFT/ROLL_RIGHT', { unit: 'degrees' }),
  'checks.face.minEyeOpen': number(
    face.minEyeOpen,
    0,
    100,
    'Eye openness (0..100) below which EYES_CLOSED is reported',
  ),
  'checks.face.minSharpness': number(face.minSharpness, 0, 100, 'Sharpness (0..100) below which BLURRED is reported'),
  'checks.face.minBrightness': number(
    face.minBrightness,
    0,
    100,
    'Brightness (0..100) below which UNDEREXPOSED is reported',
  ),
  'checks.face.maxBrightness': number(
    face.maxBrightness,
    0,
    100,
    'Brightness (0..100) above which OVEREXPOSED is reported',
  ),
  'checks.face.minInterEyeDistance': number(
    face.minInterEyeDistance,
    0,
    10_000,
    'Inter-eye distance below which TOO_FAR is reported',
    { unit: 'pixels' },
  ),
  'checks.face.maxFaceHeightRatio': number(
    face.maxFaceHeightRatio,
    0,
    1,
    'Face height over image height above which TOO_NEAR is reported',
  ),
  'checks.face.maxCentreOffset': number(
    face.maxCentreOffset,
    0,
    1,
    'Offset of the face centre (fraction of the image) before TOO_NORTH/SOUTH/EAST/WEST',
  ),
  'adjudication.requiredDecisions': integer(1, 1, 10, 'Agreeing adjudicator decisions needed to solve a case', service),
  'adjudication.leaseSeconds': integer(
    900,
    30,
    86_400,
    'How long an adjudicator holds a case before it returns to the pool',
    { unit: 'seconds', ...service },
  ),
  'retention.operations.days': integer(0, 0, 36_500, 'Operations older than this are deleted', days),
  'retention.images.days': integer(
    0,
    0,
    36_500,
    'Stored sample images and audio older than this are deleted (templates stay)',
    days,
  ),
  'remoteVerify.encryptedTemplateTtlDays': integer(
    365,
    0,
    36_500,
    'Encrypted templates issued from now on (enrolment, QR code) stop verifying this long after issue',
    { unit: 'days (0 never expires)', scope: 'service' },
  ),
  'qrcode.clearTemplate': boolean(
    true,
    'QR codes carry the signed clear template (offline verification); off, they carry the encrypted template instead (remote verification only)',
    service,
  ),
} as const satisfies Record<string, SettingDefinition<any>>;

type SettingsRegistry = typeof settingsRegistry;

/**
 * Pairs of keys whose effective values must stay ordered (low <= high): a duplicate threshold below the
 * adjudication threshold would send nothing to adjudication, and an empty brightness window would fail every
 * photo. Checked whenever one of the pair changes; the defaults satisfy every pair, so a reset always does.
 */
export const orderedSettings: readonly { low: keyof SettingsRegistry; high: keyof SettingsRegistry }[] = [
  { low: 'deduplication.adjudicationThreshold', high: 'deduplication.duplicateThreshold' },
  { low: 'checks.face.minBrightness', high: 'checks.face.maxBrightness' },
];
export type SettingKey = keyof SettingsRegistry;
/** The value type of a key, e.g. `SettingValue<'liveness.mode'>` is `'NONE' | 'PASSIVE'`. */
export type SettingValue<K extends SettingKey> = SettingsRegistry[K]['default'];

/** Every known key, sorted, so lists come out in a stable order. */
export const settingKeys = (Object.keys(settingsRegistry) as SettingKey[]).sort();

/** Narrow a string to a known key. */
export function isSettingKey(key: string): key is SettingKey {
  return Object.hasOwn(settingsRegistry, key);
}

/** The definition of a known key, typed loosely for code that handles every key alike. */
export function definitionOf(key: SettingKey): SettingDefinition<unknown> {
  return settingsRegistry[key] as SettingDefinition<unknown>;
}
