/**
 * Read the ZIP files the API's downloads answer (images of a case, a subject or an operation) in the browser.
 * The API stores entries without compression; deflated entries (method 8) are inflated with the browser's
 * DecompressionStream in case another writer sent them. Entries are found through the central directory.
 */

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/** Every file of the archive: [{ name, bytes }] in directory order. */
export async function unzip(buffer) {
  const view = new DataView(buffer);
  let end = -1;
  // The end record sits in the last 22 bytes plus at most a 64 KiB comment.
  for (let i = buffer.byteLength - 22; i >= Math.max(0, buffer.byteLength - 22 - 0xffff); i--) {
    if (view.getUint32(i, true) === EOCD) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new Error('The download is not a ZIP file');
  const count = view.getUint16(end + 10, true);
  let at = view.getUint32(end + 16, true);
  const decoder = new TextDecoder();
  const files = [];
  for (let n = 0; n < count; n++) {
    if (view.getUint32(at, true) !== CENTRAL) throw new Error('The ZIP directory is damaged');
    const method = view.getUint16(at + 10, true);
    const size = view.getUint32(at + 20, true);
    const nameLength = view.getUint16(at + 28, true);
    const extraLength = view.getUint16(at + 30, true);
    const commentLength = view.getUint16(at + 32, true);
    const local = view.getUint32(at + 42, true);
    const name = decoder.decode(new Uint8Array(buffer, at + 46, nameLength));
    if (view.getUint32(local, true) !== LOCAL) throw new Error(`The ZIP entry ${name} is damaged`);
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    const stored = new Uint8Array(buffer, start, size);
    files.push({ name, bytes: method === 0 ? stored : await inflate(stored, method, name) });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return files;
}

async function inflate(bytes, method, name) {
  if (method !== 8)
    throw new Error(`The ZIP entry ${name} uses compression method ${method}, which the dashboard cannot read`);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
