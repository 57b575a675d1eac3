import type { AnalyseOptions, FaceAnalysis, ImageAnalysis } from '../../biometrics/face/analysis.js';
import type { RgbImage } from '../../biometrics/image/raster.js';
import type { AnalysedImage } from '../biometrics/face-samples.js';
import { extractionError } from '../biometrics/extraction-errors.js';
import type { SampleServices } from '../biometrics/sample-services.js';
import { faceCheckSettingsOf } from '../settings/face-checks.js';

/**
 * A live capture's frames through the extraction pool (issue 33): the sidecar's decoder hands them over as raw
 * pixels (src/protocols/ppm-frames.ts), analysed as they are, and only the frames a capture keeps are encoded, as
 * JPEG, the image its operation stores (the probe, the enrolment's sample). What a client uploads never comes this
 * way: it is an image, admitted by its cost and decoded by the pool (face-samples.ts).
 */

/** A frame the judge accepted: its pixels and what was measured on them. */
export interface AnalysedFrame {
  frame: RgbImage;
  analysis: ImageAnalysis;
}

/** One frame analysed with `measures` (frameMeasures), in the capture owner's queue of the pool. */
export async function analyseCaptureFrame(
  services: SampleServices,
  frame: RgbImage,
  measures: Pick<AnalyseOptions, 'checks' | 'attributes' | 'liveness' | 'livenessGate' | 'embedding'>,
): Promise<ImageAnalysis> {
  const [extractor, settings] = await Promise.all([services.extractors.get(), faceCheckSettingsOf(services.settings)]);
  const opts = {
    checks: measures.checks ?? true,
    attributes: measures.attributes ?? true,
    liveness: measures.liveness ?? true,
    embedding: measures.embedding ?? true,
    ...(measures.livenessGate ? { livenessGate: measures.livenessGate } : {}),
    settings,
  };
  return extractor.analyseFrame(frame, opts).catch((error: unknown) => {
    throw extractionError(error, 'frame');
  });
}

const notEmbedded = (face: FaceAnalysis) => face.embedding.length === 0;

/**
 * The frames a capture keeps, as the images its operation takes: each frame's faces embedded where it was
 * analysed without them (the embedding model alone, at the same landmarks on the same pixels: what a whole
 * analysis would have made) and the frame encoded as JPEG, both in one job of the pool, off the event loop.
 */
export async function keepFrames(services: SampleServices, frames: readonly AnalysedFrame[]): Promise<AnalysedImage[]> {
  const extractor = await services.extractors.get();
  return Promise.all(
    frames.map(async ({ frame, analysis }) => {
      const missing = analysis.faces.filter(notEmbedded);
      const kept = await extractor
        .analyseFrame(frame, { embedFaces: missing.map((f) => f.landmarks), jpeg: true })
        .catch((error: unknown) => {
          throw extractionError(error, 'frame');
        });
      if (!kept.jpeg || (kept.embeddings?.length ?? 0) !== missing.length)
        throw new Error(`the extractor kept a frame without its JPEG or its ${missing.length} embeddings`);
      let next = 0;
      const faces = analysis.faces.map((face) =>
        notEmbedded(face) ? { ...face, ...kept.embeddings![next++]! } : face,
      );
      // Stored as the JPEG made here: the analysis describes that image (upright, as the camera sent it).
      return { bytes: kept.jpeg, analysis: { ...analysis, format: 'jpeg' as const, orientation: 1, faces } };
    }),
  );
}
