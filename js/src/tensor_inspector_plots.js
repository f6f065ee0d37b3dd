// TensorInspector's plots: heatmap (cells never thinner than MIN_CELL px, sequence rows
// labelled), colour bar, histogram with count and value axes, NCHW feature-map grid.
// Pure drawing of what Python summarized; no statistics are computed here.
//
// Hooks for browser tests: canvas.fs-insp-heatmap[data-rows][data-cols][data-cell-w]
// [data-cell-h]; .fs-insp-colorbar[data-lo][data-hi]; .fs-insp-seq-label; svg.fs-insp-hist
// [data-total][data-peak] (rect per bin, .fs-insp-tick); .fs-insp-grid[data-sample]
// [data-tiles] canvas.fs-insp-tile.

import { typedArray } from "./shared/buffers.js";
import { make as el } from "./shared/dom.js";

export const MIN_CELL = 4;      // px: a [64, 1] or [3, 96] tensor keeps visible cells
const MAX_CELL = 24;
const HEAT_BOX = 320;           // px the longer side aims at
const NAN_COLOR = [255, 0, 255];
const INF_COLOR = [255, 140, 0];
const SVG = "http://www.w3.org/2000/svg";

export function fmt(x) {
  if (x === null || x === undefined) return "—";
  if (typeof x !== "number") return String(x);
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return String(x);
  const a = Math.abs(x);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? x.toExponential(3) : x.toPrecision(4);
}

// Diverging (blue, white, red) around zero when the range spans it, else sequential.
export function color(v, lo, hi) {
  if (Number.isNaN(v)) return NAN_COLOR;
  if (!Number.isFinite(v)) return INF_COLOR;
  if (lo === null || hi === null || hi === lo) return [160, 160, 160];
  if (lo < 0 && hi > 0) {
    const s = v < 0 ? Math.min(1, v / lo) : Math.min(1, v / hi);
    const k = Math.round(255 * (1 - s));
    return v < 0 ? [k, k, 255] : [255, k, k];
  }
  const s = Math.min(1, Math.max(0, (v - lo) / (hi - lo)));
  return [Math.round(30 + 225 * s), Math.round(40 + 200 * s), Math.round(120 - 80 * s)];
}

function paint(canvas, values, rows, cols, lo, hi, offset = 0) {
  canvas.width = cols;
  canvas.height = rows;
  const ctx = canvas.getContext("2d");
  if (!ctx) return;
  const image = ctx.createImageData(cols, rows);
  for (let i = 0; i < rows * cols; i++) {
    const [r, g, b] = color(values[offset + i], lo, hi);
    image.data.set([r, g, b, 255], i * 4);
  }
  ctx.putImageData(image, 0, 0);
}

// Cell size along one axis: fill HEAT_BOX, never under MIN_CELL nor over MAX_CELL.
function cellSize(count) {
  return Math.max(MIN_CELL, Math.min(MAX_CELL, Math.floor(HEAT_BOX / Math.max(1, count))));
}

export function colorBar(lo, hi) {
  const box = el("div", "fs-insp-colorbar");
  box.dataset.lo = String(lo);
  box.dataset.hi = String(hi);
  const strip = el("canvas", "fs-insp-colorbar-strip");
  const steps = 64;
  const values = new Float32Array(steps);
  for (let i = 0; i < steps; i++) values[i] = hi - ((hi - lo) * i) / (steps - 1);
  paint(strip, values, steps, 1, lo, hi);
  const labels = el("div", "fs-insp-colorbar-labels");
  const middle = lo < 0 && hi > 0 ? 0 : (lo + hi) / 2;
  labels.append(el("span", "", fmt(hi)), el("span", "", fmt(middle)), el("span", "", fmt(lo)));
  box.append(strip, labels);
  return box;
}

// Row labels at sequence starts (LoD): "#i" where the sequence's first row is drawn.
function sequenceLabels(map, seqs, cellH) {
  const column = el("div", "fs-insp-seq-labels");
  column.style.height = `${map.rows * cellH}px`;
  let lastTop = -Infinity;
  for (const r of seqs.rows) {
    const top = (r.start / map.source_rows) * map.rows * cellH;
    const rule = el("div", "fs-insp-seq-rule");
    rule.style.top = `${top}px`;
    column.append(rule);
    if (top - lastTop < 12) continue;  // labels never overlap; the rule still shows
    const label = el("div", "fs-insp-seq-label", `#${r.index}`);
    label.title = `sequence ${r.index}: rows ${r.start}–${r.end} (length ${r.length})`;
    label.style.top = `${top}px`;
    column.append(label);
    lastTop = top;
  }
  return column;
}

export function heatmapBlock(map, seqs) {
  const values = typedArray(map.data, "f4");
  const canvas = el("canvas", "fs-insp-heatmap");
  paint(canvas, values, map.rows, map.cols, map.lo, map.hi);
  const cellW = cellSize(map.cols);
  const cellH = cellSize(map.rows);
  Object.assign(canvas.dataset, { rows: String(map.rows), cols: String(map.cols),
    cellW: String(cellW), cellH: String(cellH) });
  canvas.style.width = `${map.cols * cellW}px`;
  canvas.style.height = `${map.rows * cellH}px`;
  canvas.title = `${map.source_rows} rows × ${map.source_cols} columns`;
  const figure = el("div", "fs-insp-heatmap-row");
  if (seqs) figure.append(sequenceLabels(map, seqs, cellH));
  const scroll = el("div", "fs-insp-heatmap-scroll");
  const stack = el("div", "fs-insp-heatmap-stack");
  stack.append(canvas);
  if (seqs) {  // a line across the map where each sequence after the first starts
    for (const r of seqs.rows.slice(1)) {
      const line = el("div", "fs-insp-seq-line");
      line.style.top = `${(r.start / map.source_rows) * map.rows * cellH}px`;
      stack.append(line);
    }
  }
  scroll.append(stack);
  figure.append(scroll);
  if (map.lo !== null && map.hi !== null) figure.append(colorBar(map.lo, map.hi));
  const box = el("div", "fs-insp-heatmap-box");
  const note = map.binned
    ? `${map.source_rows}×${map.source_cols} shown as ${map.rows}×${map.cols} block means`
    : `${map.rows}×${map.cols}`;
  box.append(figure, el("div", "fs-insp-caption", `heatmap: ${note} (rows = dim 0)`));
  return box;
}

function svgNode(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

// Bars with a count axis (0, half, peak) and a value axis (lo, middle, hi).
export function histogramBlock(hist) {
  const counts = typedArray(hist.counts, "u4");
  const peak = Math.max(1, ...counts);
  const total = counts.reduce((a, b) => a + b, 0);
  const w = 300, h = 110, left = 44, bottom = 30, top = 6, right = 8;
  const plotW = w - left - right, plotH = h - top - bottom;
  const bar = plotW / Math.max(1, counts.length);
  const svg = svgNode("svg", { viewBox: `0 0 ${w} ${h}`, class: "fs-insp-hist",
    width: w, height: h });
  svg.dataset.total = String(total);
  svg.dataset.peak = String(Math.max(...counts, 0));
  counts.forEach((c, i) => {
    const height = (c / peak) * plotH;
    const r = svgNode("rect", { x: left + i * bar + 0.5, y: top + plotH - height,
      width: Math.max(0.5, bar - 1), height });
    const lo = hist.lo + (i * (hist.hi - hist.lo)) / counts.length;
    const hi = hist.lo + ((i + 1) * (hist.hi - hist.lo)) / counts.length;
    r.append(svgNode("title", {}, `[${fmt(lo)}, ${fmt(hi)}): ${c} values`));
    svg.append(r);
  });
  svg.append(svgNode("line", { x1: left, y1: top, x2: left, y2: top + plotH, class: "fs-insp-axis-line" }));
  svg.append(svgNode("line", { x1: left, y1: top + plotH, x2: left + plotW, y2: top + plotH,
    class: "fs-insp-axis-line" }));
  for (const c of [0, Math.round(peak / 2), peak]) {
    const y = top + plotH - (c / peak) * plotH;
    svg.append(svgNode("text", { x: left - 4, y: y + 3, "text-anchor": "end",
      class: "fs-insp-tick" }, String(c)));
  }
  const mid = (hist.lo + hist.hi) / 2;
  [[hist.lo, "start"], [mid, "middle"], [hist.hi, "end"]].forEach(([v, anchor], k) => {
    svg.append(svgNode("text", { x: left + (k * plotW) / 2, y: top + plotH + 12,
      "text-anchor": anchor, class: "fs-insp-tick" }, fmt(v)));
  });
  svg.append(svgNode("text", { x: left + plotW / 2, y: h - 3, "text-anchor": "middle",
    class: "fs-insp-axis-title" }, `value (${counts.length} bins, ${total} finite)`));
  svg.append(svgNode("text", { x: 10, y: top + plotH / 2, "text-anchor": "middle",
    class: "fs-insp-axis-title", transform: `rotate(-90 10 ${top + plotH / 2})` }, "count"));
  const box = el("div", "fs-insp-hist-box");
  box.append(svg);
  return box;
}

// One sample of an NCHW tensor: a tile per channel on one shared colour scale.
export function featureGrid(maps, onSample) {
  const values = typedArray(maps.data, "f4");
  const box = el("div", "fs-insp-grid-box");
  const head = el("div", "fs-insp-grid-head");
  const picker = el("select", "fs-insp-sample");
  picker.title = "sample (dim 0) whose channels are drawn";
  for (let n = 0; n < maps.samples; n++) {
    const o = el("option", "", `sample ${n}`);
    o.value = String(n);
    picker.append(o);
  }
  picker.value = String(maps.sample);
  picker.addEventListener("change", () => onSample(Number(picker.value)));
  const more = maps.shown < maps.channels ? ` (first ${maps.shown})` : "";
  head.append(el("span", "fs-insp-label", "feature maps"), picker,
    el("span", "fs-insp-caption", `${maps.channels} channels${more} of ${maps.height}×${maps.width}`
      + (maps.binned ? `, shown as ${maps.tile_rows}×${maps.tile_cols}` : "")));
  const grid = el("div", "fs-insp-grid");
  grid.dataset.sample = String(maps.sample);
  grid.dataset.tiles = String(maps.shown);
  const scale = Math.max(2, Math.floor(64 / Math.max(maps.tile_rows, maps.tile_cols)));
  const size = maps.tile_rows * maps.tile_cols;
  for (let c = 0; c < maps.shown; c++) {
    const tile = el("figure", "fs-insp-tile-box");
    const canvas = el("canvas", "fs-insp-tile");
    paint(canvas, values, maps.tile_rows, maps.tile_cols, maps.lo, maps.hi, c * size);
    canvas.style.width = `${maps.tile_cols * scale}px`;
    canvas.style.height = `${maps.tile_rows * scale}px`;
    tile.append(canvas, el("figcaption", "", `c${c}`));
    grid.append(tile);
  }
  const row = el("div", "fs-insp-heatmap-row");
  row.append(grid);
  if (maps.lo !== null && maps.hi !== null) row.append(colorBar(maps.lo, maps.hi));
  box.append(head, row);
  return box;
}
