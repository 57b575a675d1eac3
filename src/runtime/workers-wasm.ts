// Cloudflare Workers refuse to compile WebAssembly from bytes at run time: a module must arrive compiled, as
// an import of the .wasm file (the bundler turns it into a WebAssembly.Module). onnxruntime-web, though, hands
// its Emscripten glue the bytes of `env.wasm.wasmBinary` and calls WebAssembly.instantiate(bytes, imports).
// So ort is given a small placeholder as its binary, and WebAssembly.instantiate is wrapped to answer that one
// placeholder with an instance of the precompiled module. Every other call goes through unchanged.

const MARK = new TextEncoder().encode('\0asm:bims-precompiled-onnxruntime');

function isPlaceholder(source: unknown): boolean {
  const bytes = source instanceof Uint8Array ? source : source instanceof ArrayBuffer ? new Uint8Array(source) : null;
  return !!bytes && bytes.length === MARK.length && bytes.every((b, i) => b === MARK[i]);
}

/** The module the wrapper answers with (installed once: the extractor may be created again after a failure). */
let installedFor: WebAssembly.Module | null = null;
/** The linear memory ort's instance was given (Emscripten creates it and passes it among the imports). */
let ortMemory: WebAssembly.Memory | null = null;

/**
 * Let onnxruntime-web run on `module` (the compiled ort-wasm-simd-threaded.wasm); returns the placeholder to
 * pass as `wasmBinary`.
 */
export function precompiledOrtBinary(module: WebAssembly.Module): Uint8Array {
  if (installedFor === module) return MARK.slice();
  installedFor = module;
  const wasm = WebAssembly as unknown as {
    instantiate: (source: unknown, imports?: WebAssembly.Imports) => Promise<unknown>;
  };
  const original = wasm.instantiate.bind(WebAssembly);
  wasm.instantiate = async (source, imports) => {
    if (!isPlaceholder(source)) return original(source, imports);
    for (const namespace of Object.values(imports ?? {})) {
      for (const value of Object.values(namespace)) if (value instanceof WebAssembly.Memory) ortMemory = value;
    }
    // instantiate(Module) resolves to an Instance; the bytes form resolves to { instance, module }.
    const instance = (await original(module, imports)) as WebAssembly.Instance;
    return { instance, module };
  };
  return MARK.slice();
}

/** Bytes of onnxruntime's WebAssembly memory (models, sessions, buffers): the bulk of the isolate's memory. */
export function ortMemoryBytes(): number | null {
  return ortMemory ? ortMemory.buffer.byteLength : null;
}
