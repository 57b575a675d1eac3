// Real recordings for the voice suites (laid out by scripts/fetch-test-speech.mjs), as request bodies want them.
import { readFileSync } from 'node:fs';

export const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
/** The bytes of test/fixtures/speech/<path>. */
export const wav = (path: string) =>
  new Uint8Array(readFileSync(new URL(`../fixtures/speech/${path}`, import.meta.url)));
/** `voices` of a request body: one `{audio}` per recording. */
export const voices = (paths: string[]) => paths.map((p) => ({ audio: b64(wav(p)) }));

/** Three enrolment prompts and a held-apart probe of one woman (English), and of one man (Italian). */
export const ALLISON = ['agent-alreadyon.wav', 'conf-getconfno.wav', 'demo-instruct.wav'].map(
  (f) => `asterisk-en_US_f_Allison/${f}`,
);
export const ALLISON_PROBE = 'asterisk-en_US_f_Allison/vm-newuser.wav';
export const CARLO = ['agent-alreadyon.wav', 'agent-user.wav', 'conf-adminmenu-18.wav'].map(
  (f) => `asterisk-it_IT_m_Carlo/${f}`,
);
export const CARLO_PROBE = 'asterisk-it_IT_m_Carlo/conf-getconfno.wav';
