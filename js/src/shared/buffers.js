// Tensors cross from Python as binary buffers, never as JSON lists. A synced `bytes`
// value arrives as a DataView (ipywidgets 8); an ArrayBuffer or a typed array is taken
// too. Python packs little-endian ("<f4", "<f8", "<u4"), so values are read through a
// DataView with that byte order, which also copies them into an aligned array whatever
// the buffer's offset.

const READERS = {
  f4: [Float32Array, (dv, at) => dv.getFloat32(at, true)],
  f8: [Float64Array, (dv, at) => dv.getFloat64(at, true)],
  u4: [Uint32Array, (dv, at) => dv.getUint32(at, true)],
};

// value -> a typed array of `dtype` ("f4", "f8" or "u4"); empty for a missing value.
// A trailing partial element is ignored.
export function typedArray(value, dtype) {
  const [Type, read] = READERS[dtype] ?? [];
  if (!Type) throw new Error(`typedArray: unknown dtype ${dtype}`);
  if (!value) return new Type(0);
  const dv = value instanceof DataView ? value
    : ArrayBuffer.isView(value) ? new DataView(value.buffer, value.byteOffset, value.byteLength)
      : new DataView(value);
  const out = new Type(Math.floor(dv.byteLength / Type.BYTES_PER_ELEMENT));
  for (let i = 0; i < out.length; i++) out[i] = read(dv, i * Type.BYTES_PER_ELEMENT);
  return out;
}
