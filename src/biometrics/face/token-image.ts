// The ISO token image of a face: made by the pipeline for its largest face, and again later from the stored
// original and landmarks when a token image is first asked for (no model runs).
import { BiometricError } from '../errors.js';
import { decodeImage, type DecodeLimits } from '../image/decode.js';
import { encodePng } from '../image/encode.js';
import { type RgbImage } from '../image/raster.js';
import { warpAffine } from '../image/warp.js';
import { eyeCentres, invertAffine, landmarksOf, similarityTransform, type Point } from './align.js';

/** The flat grey a token image is padded with where it reaches past the photo (a face near an edge, a small photo). */
export const TOKEN_PADDING: readonly [number, number, number] = [128, 128, 128];

/**
 * Token image per ISO/IEC 19794-5 (token frontal): width W, height 4W/3, eyes level, eye midpoint at
 * (W/2, 0.6W) from the top-left corner, inter-eye distance W/4. W = 240. Where the frame reaches past the
 * photo it is a neutral grey, not the photo's edge pixels repeated (which drew tall smeared streaks beside
 * the face of a small or tightly cropped photo, the adjudicator's main image).
 */
export function tokenImage(img: RgbImage, lm: Float32Array, W = 240): RgbImage {
  const [l, r] = eyeCentres(lm);
  const dst: Point[] = [
    [W / 2 - W / 8, 0.6 * W],
    [W / 2 + W / 8, 0.6 * W],
  ];
  const toToken = similarityTransform([l, r], dst);
  return warpAffine(img, invertAffine(toToken), W, Math.round((W * 4) / 3), TOKEN_PADDING);
}

/**
 * The token image (PNG) of the face with these 68 landmarks in the image `bytes`: what `analyseImage` with
 * `tokenImage: true` makes for its largest face, byte for byte, from the stored original and landmarks, so a
 * service can make token images when they are first asked for instead of at every enrolment. Needs no model.
 *
 * @throws BiometricError INVALID_IMAGE / UNSUPPORTED_FORMAT / IMAGE_TOO_LARGE for bad bytes,
 * EXTRACTION_FAILED for fewer than 68 landmarks.
 */
export async function renderTokenImage(
  bytes: Uint8Array,
  landmarks: readonly (readonly [number, number])[],
  limits?: DecodeLimits,
): Promise<Uint8Array> {
  if (landmarks.length < 68)
    throw new BiometricError(
      'EXTRACTION_FAILED',
      `a token image needs the 68 landmarks of the face, got ${landmarks.length}`,
    );
  return encodePng(tokenImage(await decodeImage(bytes, limits), landmarksOf(landmarks)));
}
