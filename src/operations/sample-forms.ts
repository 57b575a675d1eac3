import type { FormSpec } from './form-spec.js';

/**
 * The multipart forms of the operations that take photos and recordings, so a photo can be sent as it is
 * (`curl -F image=@face.jpg`) instead of as base64 inside JSON. Each part lands where the JSON body has it.
 */

const image = {
  into: 'faces',
  key: 'image',
  many: true,
  mediaTypes: ['image/jpeg', 'image/png'],
  description: 'A face photo, JPEG or PNG, as a file part; one part per sample (at most 10, 10 MiB each)',
} as const;
const voice = {
  into: 'voices',
  key: 'audio',
  many: true,
  mediaTypes: ['audio/wav'],
  description: 'A voice recording, WAV (PCM), as a file part; one part per sample (at most 10, 10 MiB each)',
} as const;

/** createSubject: image and voice parts, an exported template as a file or as base64 text, metadata and options as JSON. */
export const enrolmentForm: FormSpec = {
  files: {
    image,
    voice,
    template: {
      into: 'template',
      textIsBase64: true,
      mediaTypes: ['application/octet-stream'],
      description:
        'An exported template to enrol instead of samples: its bytes as a file part, or its base64 as a text field',
    },
  },
  text: ['subjectId'],
  json: ['metadata', 'options'],
};

/** createOperation: image and voice parts; type and subjectId as text, options as JSON. */
export const operationForm: FormSpec = { files: { image, voice }, text: ['type', 'subjectId'], json: ['options'] };

/** checkImage: one image part, options as JSON. */
export const checkImageForm: FormSpec = {
  files: {
    image: {
      into: 'image',
      mediaTypes: ['image/jpeg', 'image/png'],
      description: 'The face photo, JPEG or PNG, as a file part (10 MiB at most)',
    },
  },
  json: ['options'],
};
