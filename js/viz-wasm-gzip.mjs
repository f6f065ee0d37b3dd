// esbuild plugin: ship viz.js's WebAssembly gzipped instead of as a JS string literal.
//
// @viz-js/viz is an emscripten SINGLE_FILE build: its 1 MB of WASM sits in dist/viz.js as
// one string literal with a character per byte, which grows to about 3.3 MB once anywidget
// sends the module as JSON (every control byte becomes \u00XX). This plugin
//   1. lets viz.js decode its own WASM in Node at build time (the bytes it hands to
//      WebAssembly.instantiate), so no hand-written decoder can drift from emscripten's;
//   2. gzips them and offers them base64-encoded as the module "virtual:viz-wasm-gz";
//   3. rewrites the one function `findWasmBinary(){return binaryDecode('...')}` in
//      dist/viz.js to read the bytes from globalThis[Symbol.for(WASM_GLOBAL)], where the
//      widget puts them (gunzipped) just before calling viz.js's instance().
// Patching minified emscripten output is brittle by nature, so the build fails loudly
// when the marker is missing or appears twice (an upgrade of @viz-js/viz then needs a look).
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

export const WASM_GLOBAL = "fluidscope.viz-js.wasm";
const MARKER = "function findWasmBinary(){return binaryDecode('";
const VIZ_DIST = /[\\/]@viz-js[\\/]viz[\\/]dist[\\/]viz\.js$/;

async function captureWasm(vizPath) {
  const original = WebAssembly.instantiate;
  let captured = null;
  WebAssembly.instantiate = function (source, imports) {
    if (captured === null && (source instanceof Uint8Array || source instanceof ArrayBuffer)) {
      captured = new Uint8Array(source).slice();
    }
    return original.call(this, source, imports);
  };
  try {
    const { instance } = await import(pathToFileURL(vizPath).href);
    await instance();
  } finally {
    WebAssembly.instantiate = original;
  }
  const magic = captured && Array.from(captured.subarray(0, 4)).join(",");
  if (magic !== "0,97,115,109") {
    throw new Error(`viz-wasm-gzip: could not capture viz.js's WebAssembly from ${vizPath}`);
  }
  return captured;
}

// End of the single-quoted literal that starts at `start` (index of its closing quote).
function literalEnd(source, start) {
  for (let i = start; i < source.length; i++) {
    if (source[i] === "\\") i++;
    else if (source[i] === "'") return i;
  }
  throw new Error("viz-wasm-gzip: unterminated WASM string literal in @viz-js/viz");
}

export function patchFindWasmBinary(source) {
  const at = source.indexOf(MARKER);
  if (at < 0 || source.indexOf(MARKER, at + 1) >= 0) {
    throw new Error(
      `viz-wasm-gzip: expected exactly one "${MARKER}..." in @viz-js/viz/dist/viz.js ` +
        `(found ${at < 0 ? "none" : "several"}); the plugin needs updating for this version`,
    );
  }
  const close = literalEnd(source, at + MARKER.length);
  if (source.slice(close, close + 3) !== "')}") {
    throw new Error("viz-wasm-gzip: findWasmBinary in @viz-js/viz has an unexpected shape");
  }
  const replacement =
    `function findWasmBinary(){return globalThis[Symbol.for(${JSON.stringify(WASM_GLOBAL)})]}`;
  return source.slice(0, at) + replacement + source.slice(close + 3);
}

export function vizWasmGzip() {
  return {
    name: "viz-wasm-gzip",
    setup(build) {
      const require = createRequire(import.meta.url);
      const vizPath = require.resolve("@viz-js/viz");
      let gzipBase64 = null;

      build.onResolve({ filter: /^virtual:viz-wasm-gz$/ }, (args) => ({
        path: args.path,
        namespace: "viz-wasm-gz",
      }));
      build.onLoad({ filter: /.*/, namespace: "viz-wasm-gz" }, async () => {
        // level 9 and Node's fixed gzip header (mtime 0) keep the output byte-stable
        gzipBase64 ??= gzipSync(await captureWasm(vizPath), { level: 9 }).toString("base64");
        return { contents: `export default ${JSON.stringify(gzipBase64)};`, loader: "js" };
      });
      build.onLoad({ filter: VIZ_DIST }, async (args) => ({
        contents: patchFindWasmBinary(await readFile(args.path, "utf8")),
        loader: "js",
      }));
    },
  };
}
