import { describe, expect, it } from 'vitest';
import { formFieldNames } from './multipart.js';
import { checkImageForm, enrolmentForm } from '../operations/sample-forms.js';
import { jsonFieldNames } from '../schemas/field-names.js';

describe('a form names the places of the JSON body it became by its parts', () => {
  const enrol = formFieldNames(enrolmentForm);

  it('a sample of a list is its part and the part’s index, its bytes the part itself', () => {
    expect(enrol(['faces'])).toBe('body.image');
    expect(enrol(['faces', 1])).toBe('body.image.1');
    expect(enrol(['faces', 1, 'image'])).toBe('body.image.1');
    expect(enrol(['voices', 2, 'audio'])).toBe('body.voice.2');
    // A key the form never makes (only a JSON body could have sent it) is still named below the part.
    expect(enrol(['faces', 0, 'extra'])).toBe('body.image.0.extra');
  });

  it('a single part keeps its path; fields of their own are named as in JSON', () => {
    expect(enrol(['template'])).toBe('body.template');
    expect(formFieldNames(checkImageForm)(['image'])).toBe('body.image');
    expect(enrol(['metadata', 'office'])).toBe('body.metadata.office');
    expect(enrol(['subjectId'])).toBe('body.subjectId');
    expect(jsonFieldNames(['faces', 1, 'image'])).toBe('body.faces.1.image');
  });
});
