import manifest from '../../../wasm/models/manifest.json' with { type: 'json' };
import voiceManifest from '../../../wasm/models/voice-manifest.json' with { type: 'json' };

/**
 * The version of the face templates this build makes: named by the model manifest, the same string the
 * extractor writes into every template, so info, stored templates and re-extraction all agree. Read from
 * the manifest rather than the extractor so that reporting it never loads onnxruntime.
 */
export const CURRENT_FACE_TEMPLATE_VERSION: string = manifest.templateVersion;

/** The version of the voice templates this build makes (the voice model manifest's), for the same reasons. */
export const CURRENT_VOICE_TEMPLATE_VERSION: string = voiceManifest.templateVersion;
