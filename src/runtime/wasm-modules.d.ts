// `.wasm` imports in the Workers entry: the bundler (wrangler's CompiledWasm rule) turns each into a
// WebAssembly.Module compiled at deployment, which is the only way Workers run WebAssembly.
declare module '*.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
