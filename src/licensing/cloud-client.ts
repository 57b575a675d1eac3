import { fetchWithin, LicensingUnavailableError } from './http.js';

/**
 * Fetch the licence from the CLOUD licensing endpoint: GET with the token as Bearer, answered with the
 * licence as a compact JWS (text) or JSON `{licence}`. The signature is checked by the caller, so a
 * compromised endpoint can deny service but not grant a licence.
 */
export async function fetchCloudLicence(url: string, token: string, timeoutMs: number): Promise<string> {
  const { status, text, contentType } = await fetchWithin(
    'cloud',
    url,
    { method: 'GET', headers: { Authorization: `Bearer ${token}`, Accept: 'application/jose, application/json' } },
    timeoutMs,
  );
  if (status !== 200) throw new LicensingUnavailableError('cloud', `the licensing endpoint answered ${status}`, status);
  if (contentType.includes('json')) {
    try {
      const licence = (JSON.parse(text) as { licence?: unknown }).licence;
      if (typeof licence === 'string') return licence;
    } catch {
      // fall through to the protocol error
    }
    throw new LicensingUnavailableError(
      'cloud',
      'the licensing endpoint answered JSON without a `licence` string',
      status,
    );
  }
  return text.trim();
}
