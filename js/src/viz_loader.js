// One viz.js (Graphviz compiled to WebAssembly) instance per page.
//
// anywidget evaluates a widget's module again for every widget model, so a module-level
// cache would compile the 1 MB of WASM once per GraphView; the promise is kept on
// globalThis instead, under a key that names the Graphviz build so that two different
// bundles on one page never share an instance.
import { graphvizVersion, instance } from "@viz-js/viz";
import wasmGzipBase64 from "virtual:viz-wasm-gz";

const INSTANCE_KEY = Symbol.for(`fluidscope.viz-js.instance@${graphvizVersion}`);
const WASM_KEY = Symbol.for("fluidscope.viz-js.wasm"); // read by the patched findWasmBinary

async function gunzipBase64(text) {
  const packed = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

async function createInstance() {
  globalThis[WASM_KEY] = await gunzipBase64(wasmGzipBase64);
  try {
    return await instance();
  } finally {
    delete globalThis[WASM_KEY];
  }
}

export function loadViz() {
  const pending = (globalThis[INSTANCE_KEY] ??= createInstance());
  // A failed start is not cached: the next widget may try again.
  pending.catch(() => {
    if (globalThis[INSTANCE_KEY] === pending) delete globalThis[INSTANCE_KEY];
  });
  return pending;
}
