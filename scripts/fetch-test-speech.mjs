#!/usr/bin/env node
// Fetches labelled real speech for the voice tests and `npm run eval -- --modality voice` into
// test/fixtures/speech/<speaker>/<clip>.wav (ignored by git; no recording is ever committed).
//
// Sources (Debian binary packages, `apt-get download` into .cache/speech and kept for other checkouts too by
// download-cache.mjs, unpacked with `dpkg-deb -x`, never installed), each pinned by version and SHA-256 below:
//   asterisk-core-sounds-{en,es,fr,it,ru}-wav  one professional voice per language, 8 kHz telephone prompts
//                                              (CC-BY-SA-3.0). English and Spanish are the same woman
//                                              (Allison): the Spanish set goes to speech-cross-language/
//                                              so that the main set has one folder per person.
//   klettres-data                              volunteers reading letters (alpha/) and syllables (syllab/)
//                                              per language, 44.1 kHz Ogg Vorbis (GPL-2+), decoded with
//                                              @wasm-audio-decoders/ogg-vorbis and joined into utterances
//                                              of at least 3 s of speech. Only one of a language's two sets
//                                              is laid out (the one with more audio): the sets were recorded
//                                              separately and are not always the same person (German's
//                                              letters and syllables are two voices, cosine 0.45 between
//                                              them, impostor level), so a folder holding both would put
//                                              two speakers under one label. Clips are joined back to back:
//                                              their own leading and trailing room noise is the pause (gaps
//                                              of digital zeros made the noise floor -120 dB, so the VAD's
//                                              floor and the SNR gate measured nothing real).
// Every speaker is one recording session: see docs/biometrics.md (voice figures) and docs/voice.md for what that means.
// Idempotent: a stamp file records what was laid out; a second run returns at once.
//
// Usage: node scripts/fetch-test-speech.mjs [--force]
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keepDownload, restoreDownload } from './download-cache.mjs';
import { keepLayout, layoutDigest, restoreLayout } from './layout-cache.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'test', 'fixtures', 'speech');
const crossDir = join(root, 'test', 'fixtures', 'speech-cross-language');
const cacheDir = join(root, '.cache', 'speech');
const stampFile = join(outDir, '.complete.json');
const LAYOUT_VERSION = 3;
/**
 * SHA-256 of the laid-out folders (layout-cache.mjs: every file's path and bytes), the same on every machine (the
 * decoders are WebAssembly): a fresh clone copies the machine's earlier layout when it has this digest. A change
 * to the packages or the layout changes it; the new value is printed by the first run that makes it.
 */
const LAYOUT_SHA256 = 'ede1595e5fa03ec6253ef2bb5f967ff7daa4953e324b4d67d9a4b563c4f55a27';

const PACKAGES = [
  {
    name: 'asterisk-core-sounds-en-wav',
    version: '1.6.1-1',
    sha256: '2be3ea287d83299d143815fa804f11179a75b7affd4a758b98b55f5afc18a35d',
  },
  {
    name: 'asterisk-core-sounds-es-wav',
    version: '1.6.1-1',
    sha256: '9283a09a6d56fccdcc2bcfe86c48f0f844289cfbd46a3184d8785a6f7f569903',
  },
  {
    name: 'asterisk-core-sounds-fr-wav',
    version: '1.6.1-1',
    sha256: '8d4e1bc32ed5ba7fbda40841ca1825ed20cc6232724a473c90f8bb0e53e6073e',
  },
  {
    name: 'asterisk-core-sounds-it-wav',
    version: '1.6.1-1',
    sha256: '5a26638089e134b8ac39363fe249c5c93c50cd8bfdc9b2499ae61ec4a35e2fcb',
  },
  {
    name: 'asterisk-core-sounds-ru-wav',
    version: '1.6.1-1',
    sha256: 'ccbfaebfa450b7a9ddf644ae0f3d1e9017d5df7c0aebe816e946345589d38201',
  },
  {
    name: 'klettres-data',
    version: '4:22.12.3-1',
    sha256: '1186d257a19e84230856baea0b0b1ded8be9195080fcdb2588970b5cd937f5a8',
  },
];
/** Clips kept per speaker: enough for thousands of impostor pairs, few enough for a quick evaluation. */
const ASTERISK_CLIPS = 40;
const ASTERISK_MIN_SECONDS = 2;
const KLETTRES_UTTERANCES = 30;
/** Speech per joined utterance: 1 s above the service's default gate (2 s), so gating tests the recording, not the cut. */
const KLETTRES_MIN_SPEECH_SECONDS = 3;

const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');

/** The .deb of a package in the cache, downloaded when missing or different. */
function fetchDeb(pkg) {
  const file = join(cacheDir, `${pkg.name}_${pkg.version.replace(':', '%3a')}_all.deb`);
  if ((!existsSync(file) || sha256(readFileSync(file)) !== pkg.sha256) && !restoreDownload(file, pkg.sha256)) {
    console.log(`fetch-test-speech: apt-get download ${pkg.name}=${pkg.version}`);
    try {
      execFileSync('apt-get', ['download', `${pkg.name}=${pkg.version}`], {
        cwd: cacheDir,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
    } catch {
      throw new Error(`apt-get download ${pkg.name}=${pkg.version} failed (run \`apt-get update\` first?)`);
    }
    const got = existsSync(file) ? sha256(readFileSync(file)) : 'nothing';
    if (got !== pkg.sha256) {
      rmSync(file, { force: true });
      throw new Error(`${pkg.name}: sha256 ${got}, expected ${pkg.sha256}`);
    }
  }
  keepDownload(file, pkg.sha256);
  const dir = join(cacheDir, pkg.name);
  if (!existsSync(join(dir, '.unpacked'))) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    execFileSync('dpkg-deb', ['-x', file, dir]);
    writeFileSync(join(dir, '.unpacked'), pkg.sha256);
  }
  return dir;
}

/** 16-bit PCM mono WAV (the same writer as src/biometrics/voice/wav.ts, kept here so scripts need no build). */
function wav16(samples, rate) {
  const out = Buffer.alloc(44 + samples.length * 2);
  out.write('RIFF', 0);
  out.writeUInt32LE(36 + samples.length * 2, 4);
  out.write('WAVE', 8);
  out.write('fmt ', 12);
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20);
  out.writeUInt16LE(1, 22);
  out.writeUInt32LE(rate, 24);
  out.writeUInt32LE(rate * 2, 28);
  out.writeUInt16LE(2, 32);
  out.writeUInt16LE(16, 34);
  out.write('data', 36);
  out.writeUInt32LE(samples.length * 2, 40);
  for (let i = 0; i < samples.length; i++) {
    const v = Math.max(-1, Math.min(1, samples[i]));
    out.writeInt16LE(Math.round(v < 0 ? v * 32768 : v * 32767), 44 + i * 2);
  }
  return out;
}

/** Seconds of audio in a plain PCM WAV, from its header (the asterisk prompts are all 16-bit 8 kHz mono). */
function wavSeconds(buf) {
  let o = 12,
    rate = 0,
    align = 0;
  while (o + 8 <= buf.length) {
    const id = buf.toString('latin1', o, o + 4),
      size = buf.readUInt32LE(o + 4);
    if (id === 'fmt ') {
      rate = buf.readUInt32LE(o + 12);
      align = buf.readUInt16LE(o + 20);
    }
    if (id === 'data') return rate && align ? size / align / rate : 0;
    o += 8 + size + (size & 1);
  }
  return 0;
}

/** Up to n items spread evenly over a sorted list (not just the first n: prompts are grouped by topic). */
const spread = (items, n) =>
  items.length <= n ? items : Array.from({ length: n }, (_, i) => items[Math.floor((i * items.length) / n)]);

function layAsterisk(dir, dest, prefix = '') {
  const soundsRoot = join(dir, 'usr', 'share', 'asterisk', 'sounds');
  const voice = readdirSync(soundsRoot)[0];
  const base = join(soundsRoot, voice);
  const clips = readdirSync(base)
    .filter((f) => f.endsWith('.wav'))
    .sort()
    .filter((f) => wavSeconds(readFileSync(join(base, f))) >= ASTERISK_MIN_SECONDS);
  mkdirSync(dest, { recursive: true });
  for (const f of spread(clips, ASTERISK_CLIPS)) writeFileSync(join(dest, prefix + f), readFileSync(join(base, f)));
  return voice;
}

/**
 * Seconds of speech in a clip for cutting utterances: its 10 ms frames within 25 dB of the clip's loudest
 * frame (letters and syllables are one short burst each, with room noise around it). A rough, deliberately
 * low count (weak consonants are missed) so that the service's own VAD, which judges the result, finds
 * 3 s or more in most utterances.
 */
function clipSpeechSeconds(mono, rate) {
  const frame = Math.round(rate / 100);
  const db = [];
  for (let o = 0; o + frame <= mono.length; o += frame) {
    let e = 0;
    for (let i = o; i < o + frame; i++) e += mono[i] * mono[i];
    db.push(10 * Math.log10(e / frame + 1e-12));
  }
  const top = Math.max(...db);
  return (db.filter((d) => d > top - 25).length * frame) / rate;
}

async function layKlettres(dir) {
  const { OggVorbisDecoder } = await import('@wasm-audio-decoders/ogg-vorbis');
  const decoder = new OggVorbisDecoder();
  await decoder.ready;
  const base = join(dir, 'usr', 'share', 'klettres');
  const speakers = [];
  for (const lang of readdirSync(base).sort()) {
    const sets = [];
    for (const sub of ['alpha', 'syllab']) {
      const d = join(base, lang, sub);
      if (!existsSync(d)) continue;
      const clips = [];
      let rate = 0;
      for (const f of readdirSync(d)
        .filter((x) => x.endsWith('.ogg'))
        .sort()) {
        await decoder.reset();
        const r = await decoder.decodeFile(new Uint8Array(readFileSync(join(d, f))));
        if (!r.samplesDecoded) continue;
        // One rate per set, and one the service reads (klettres-data's Danish letters are 128 kHz: left out).
        if ((rate && r.sampleRate !== rate) || r.sampleRate > 48000) continue;
        rate = r.sampleRate;
        const mono = new Float32Array(r.samplesDecoded);
        for (const ch of r.channelData) for (let i = 0; i < mono.length; i++) mono[i] += ch[i] / r.channelData.length;
        clips.push(mono);
      }
      if (clips.length) sets.push({ clips, rate, seconds: clips.reduce((a, c) => a + c.length, 0) / rate });
    }
    if (sets.length === 0) continue;
    const { clips, rate } = sets.sort((a, b) => b.seconds - a.seconds)[0];
    const utterances = [];
    let current = [],
      speech = 0;
    for (const mono of clips) {
      current.push(mono);
      speech += clipSpeechSeconds(mono, rate);
      if (speech >= KLETTRES_MIN_SPEECH_SECONDS) {
        utterances.push(concat(current));
        current = [];
        speech = 0;
      }
    }
    if (utterances.length < 4) continue; // too little speech to make genuine pairs
    const dest = join(outDir, `klettres-${lang}`);
    mkdirSync(dest, { recursive: true });
    spread(utterances, KLETTRES_UTTERANCES).forEach((u, i) =>
      writeFileSync(join(dest, `utterance-${String(i).padStart(2, '0')}.wav`), wav16(u, rate)),
    );
    speakers.push(`klettres-${lang}`);
  }
  decoder.free();
  return speakers;
}

function concat(parts) {
  const out = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

async function main() {
  const force = process.argv.includes('--force');
  const want = { layout: LAYOUT_VERSION, packages: PACKAGES.map((p) => p.sha256) };
  if (!force && existsSync(stampFile)) {
    const stamp = JSON.parse(readFileSync(stampFile, 'utf8'));
    if (JSON.stringify(stamp.want) === JSON.stringify(want)) {
      console.log(`fetch-test-speech: ${stamp.speakers.length} speakers already in test/fixtures/speech`);
      return;
    }
  }
  const laidOut = [outDir, crossDir];
  if (!force && restoreLayout('speech', LAYOUT_SHA256, root, laidOut)) {
    const speakers = readdirSync(outDir)
      .filter((name) => !name.startsWith('.'))
      .sort();
    writeFileSync(stampFile, JSON.stringify({ want, speakers }, null, 1));
    console.log(`fetch-test-speech: ${speakers.length} speakers copied from this machine's earlier layout`);
    return;
  }
  mkdirSync(cacheDir, { recursive: true });
  const dirs = Object.fromEntries(PACKAGES.map((p) => [p.name, fetchDeb(p)]));
  rmSync(outDir, { recursive: true, force: true });
  rmSync(crossDir, { recursive: true, force: true });
  const speakers = [];
  for (const lang of ['en', 'fr', 'it', 'ru']) {
    const dir = dirs[`asterisk-core-sounds-${lang}-wav`];
    const voice = readdirSync(join(dir, 'usr', 'share', 'asterisk', 'sounds'))[0];
    const name = `asterisk-${voice}`;
    layAsterisk(dir, join(outDir, name));
    speakers.push(name);
  }
  // Allison in Spanish, beside her English clips: the cross-language case, kept out of the main set.
  layAsterisk(dirs['asterisk-core-sounds-es-wav'], join(crossDir, 'allison'), 'es-');
  layAsterisk(dirs['asterisk-core-sounds-en-wav'], join(crossDir, 'allison'), 'en-');
  speakers.push(...(await layKlettres(dirs['klettres-data'])));
  const digest = layoutDigest(root, laidOut);
  if (digest === LAYOUT_SHA256) keepLayout('speech', digest, root, laidOut);
  else
    console.warn(`fetch-test-speech: the layout's digest is ${digest}, not LAYOUT_SHA256: not kept for other clones`);
  writeFileSync(stampFile, JSON.stringify({ want, speakers }, null, 1));
  console.log(
    `fetch-test-speech: ${speakers.length} speakers in test/fixtures/speech (+ speech-cross-language/allison)`,
  );
}

main().catch((err) => {
  console.error(`fetch-test-speech: FAILED: ${err.message}`);
  process.exitCode = 1;
});
