import { describe, expect, it } from 'vitest';
import type { FaceAnalysis } from '../../biometrics/face/analysis.js';
import { qualityRefusal, RefusalPatience, refusalStatus, REFUSALS } from './refusal-reasons.js';

const face = (over: Partial<FaceAnalysis>) =>
  ({ interEyeDistance: 80, yaw: 0, pitch: 0, icaoWarnings: [], ...over }) as FaceAnalysis;

describe('refusal reasons', () => {
  it('name the first cause a person can fix: too far, turned away, too dark, eyes closed, else unclear', () => {
    expect(qualityRefusal(face({ interEyeDistance: 19, icaoWarnings: ['UNDEREXPOSED'] }))).toBe('TOO_FAR');
    expect(qualityRefusal(face({ yaw: -23, icaoWarnings: ['EYES_CLOSED'] }))).toBe('TURNED_AWAY');
    expect(qualityRefusal(face({ icaoWarnings: ['PITCH_DOWN'] }))).toBe('TURNED_AWAY');
    expect(qualityRefusal(face({ icaoWarnings: ['EYES_CLOSED', 'BLURRED', 'UNDEREXPOSED'] }))).toBe('TOO_DARK');
    expect(qualityRefusal(face({ icaoWarnings: ['EYES_CLOSED', 'LIVENESS'] }))).toBe('EYES_CLOSED');
    expect(qualityRefusal(face({ icaoWarnings: ['BLURRED'] }))).toBe('LOW_QUALITY');
    expect(refusalStatus('NO_LIVE_PERSON')).toBe('LIVENESS_CHECK_FAILED');
    expect(refusalStatus('TWO_FACES')).toBe('QUALITY_CHECK_FAILED');
    for (const text of Object.values(REFUSALS)) expect(text).toMatch(/^[A-Z].*[.]$/);
  });

  it('patience runs out only when one reason lasted the whole window without a break', () => {
    const patience = new RefusalPatience(2000);
    expect(patience.observe('TOO_DARK', 0)).toBe(false);
    expect(patience.observe('TOO_DARK', 1500)).toBe(false);
    expect(patience.observe('TOO_FAR', 1800)).toBe(false); // another reason: the window starts over
    expect(patience.observe('TOO_FAR', 3000)).toBe(false);
    expect(patience.observe(null, 3500)).toBe(false); // a frame accepted
    expect(patience.observe('TOO_FAR', 4000)).toBe(false);
    expect(patience.observe('TOO_FAR', 6000)).toBe(true);
    expect(patience.reason).toBe('TOO_FAR');
  });
});
