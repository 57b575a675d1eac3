import { describe, expect, it } from 'vitest';
import { preferredType } from './content-negotiation.js';

const qr = ['image/png', 'image/svg+xml', 'application/json'] as const;

describe('preferredType', () => {
  it('answers the first offer without a header, for */*, and when nothing offered is acceptable', () => {
    for (const accept of [null, '', '*/*', 'text/html', 'text/html;q=0, */*;q=0', ';;;'])
      expect(preferredType(accept, qr)).toBe('image/png');
  });

  it('follows q-values, then the more specific range, then the order of the offers', () => {
    expect(preferredType('image/png, application/json;q=0.5', qr)).toBe('image/png');
    expect(preferredType('image/png;q=0.4, application/json', qr)).toBe('application/json');
    expect(preferredType('*/*, image/svg+xml', qr)).toBe('image/svg+xml');
    expect(preferredType('image/*', qr)).toBe('image/png');
    expect(preferredType('IMAGE/SVG+XML', qr)).toBe('image/svg+xml');
  });

  it('takes the q of the most specific range: q=0 refuses a type a wildcard would accept', () => {
    expect(preferredType('image/svg+xml;q=0.5, */*', qr)).toBe('image/png');
    expect(preferredType('image/*, image/png;q=0', qr)).toBe('image/svg+xml');
    expect(preferredType('application/json;q=0, */*', ['application/json', 'application/zip'])).toBe('application/zip');
  });
});
