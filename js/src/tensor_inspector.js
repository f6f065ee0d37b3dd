// TensorInspector front end: draws the summaries Python computed; it never computes
// statistics. Arrays arrive as binary buffers (DataView) inside the value/gradient dicts.
//
// Hooks for browser tests: .fs-insp root (data-selected, data-frame, data-version);
// select.fs-insp-select; .fs-insp-where; .fs-insp-message; .fs-insp-pane[data-role=
// "value"|"gradient"][data-state]; [data-field="shape"|"dtype"|"place"|"lod"] .fs-insp-text;
// [data-stat="min"|"max"|"mean"|"std"|"nan"|"inf"] .fs-insp-number; svg.fs-insp-hist
// (rect per bin, data-total); canvas.fs-insp-heatmap[data-rows][data-cols];
// table.fs-insp-seqs tr[data-sequence]; .fs-insp-preview.

import { typedArray } from "./shared/buffers.js";
import { make as el } from "./shared/dom.js";
import { keepKeysInside } from "./shared/keyboard.js";
import { onChanges, sendAction, showMessage } from "./shared/protocol.js";

const STATS = ["min", "max", "mean", "std", "nan", "inf"];
const NAN_COLOR = [255, 0, 255];
const INF_COLOR = [255, 140, 0];

function fmt(x) {
  if (x === null || x === undefined) return "—";
  if (typeof x !== "number") return String(x);
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return String(x);
  const a = Math.abs(x);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? x.toExponential(4) : x.toPrecision(5);
}

function field(list, key, label, text) {
  const row = el("div", "fs-insp-field");
  row.dataset.field = key;
  row.append(el("span", "fs-insp-label", label), el("span", "fs-insp-text", text));
  list.append(row);
}

function lodText(lod) {
  if (!lod || !lod.length) return "none";
  return lod.map((level) => (level.length > 12
    ? `[${level.slice(0, 12).join(", ")}, … ${level[level.length - 1]}]`
    : `[${level.join(", ")}]`)).join(" ");
}

function statsBlock(stats) {
  const box = el("div", "fs-insp-stats");
  for (const key of STATS) {
    const cell = el("div", "fs-insp-stat");
    cell.dataset.stat = key;
    const bad = (key === "nan" || key === "inf") && stats[key] > 0;
    if (bad) cell.classList.add("fs-insp-bad");
    cell.append(el("span", "fs-insp-label", key), el("span", "fs-insp-number", fmt(stats[key])));
    box.append(cell);
  }
  return box;
}

function histogramBlock(hist) {
  const counts = typedArray(hist.counts, "u4");
  const peak = Math.max(1, ...counts);
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  const w = 240, h = 60, bar = w / Math.max(1, counts.length);
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.setAttribute("class", "fs-insp-hist");
  svg.dataset.total = String(counts.reduce((a, b) => a + b, 0));
  counts.forEach((c, i) => {
    const r = document.createElementNS(ns, "rect");
    const height = (c / peak) * (h - 2);
    r.setAttribute("x", String(i * bar + 0.5));
    r.setAttribute("y", String(h - height));
    r.setAttribute("width", String(Math.max(0.5, bar - 1)));
    r.setAttribute("height", String(height));
    const title = document.createElementNS(ns, "title");
    const lo = hist.lo + (i * (hist.hi - hist.lo)) / counts.length;
    const hi = hist.lo + ((i + 1) * (hist.hi - hist.lo)) / counts.length;
    title.textContent = `[${fmt(lo)}, ${fmt(hi)}): ${c}`;
    r.append(title);
    svg.append(r);
  });
  const box = el("div", "fs-insp-hist-box");
  const axis = el("div", "fs-insp-axis");
  axis.append(el("span", "", fmt(hist.lo)), el("span", "", fmt(hist.hi)));
  box.append(svg, axis);
  return box;
}

function color(v, lo, hi) {
  if (Number.isNaN(v)) return NAN_COLOR;
  if (!Number.isFinite(v)) return INF_COLOR;
  if (lo === null || hi === null || hi === lo) return [160, 160, 160];
  if (lo < 0 && hi > 0) {  // diverging around zero: blue, white, red
    const s = v < 0 ? Math.min(1, v / lo) : Math.min(1, v / hi);
    const k = Math.round(255 * (1 - s));
    return v < 0 ? [k, k, 255] : [255, k, k];
  }
  const s = (v - lo) / (hi - lo);  // sequential: dark blue to yellow
  return [Math.round(30 + 225 * s), Math.round(40 + 200 * s), Math.round(120 - 80 * s)];
}

function heatmapBlock(map) {
  const values = typedArray(map.data, "f4");
  const canvas = el("canvas", "fs-insp-heatmap");
  canvas.width = map.cols;
  canvas.height = map.rows;
  canvas.dataset.rows = String(map.rows);
  canvas.dataset.cols = String(map.cols);
  const scale = Math.max(1, Math.min(24, Math.floor(240 / Math.max(map.cols, map.rows))));
  canvas.style.width = `${map.cols * scale}px`;
  canvas.style.height = `${map.rows * scale}px`;
  const ctx = canvas.getContext("2d");
  if (ctx) {
    const image = ctx.createImageData(map.cols, map.rows);
    values.forEach((v, i) => {
      const [r, g, b] = color(v, map.lo, map.hi);
      image.data.set([r, g, b, 255], i * 4);
    });
    ctx.putImageData(image, 0, 0);
  }
  const box = el("div", "fs-insp-heatmap-box");
  const note = map.binned
    ? `${map.source_rows}×${map.source_cols} binned to ${map.rows}×${map.cols}`
    : `${map.rows}×${map.cols}`;
  box.append(canvas, el("div", "fs-insp-caption", `${note}; ${fmt(map.lo)} … ${fmt(map.hi)}`));
  return box;
}

function sequencesBlock(seqs) {
  const table = el("table", "fs-insp-seqs");
  const head = el("tr");
  for (const h of ["#", "rows", "len", "min", "max", "mean", "std", "nan", "inf"]) {
    head.append(el("th", "", h));
  }
  table.append(head);
  for (const r of seqs.rows) {
    const tr = el("tr");
    tr.dataset.sequence = String(r.index);
    if (r.nan > 0 || r.inf > 0) tr.classList.add("fs-insp-bad");
    for (const v of [r.index, `${r.start}–${r.end}`, r.length, r.min, r.max, r.mean, r.std,
      r.nan, r.inf]) tr.append(el("td", "", fmt(v)));
    table.append(tr);
  }
  const box = el("div", "fs-insp-seqs-box");
  const more = seqs.total > seqs.rows.length ? ` (first ${seqs.rows.length})` : "";
  box.append(el("div", "fs-insp-caption", `${seqs.total} sequences${more}`), table);
  return box;
}

function previewBlock(p) {
  const values = Array.from(typedArray(p.data, "f8"), fmt);
  const more = p.total > p.count ? ` … (${p.total} values)` : "";
  return el("div", "fs-insp-preview", `[${values.join(", ")}${more}]`);
}

const STATE_TEXT = {
  none: "Pick a variable.",
  unset: "not computed yet at this position",
  missing: "no such variable in the program",
};

function pane(role, info) {
  const box = el("div", "fs-insp-pane");
  box.dataset.role = role;
  box.dataset.state = info.state ?? "none";
  box.append(el("div", "fs-insp-title", `${role === "value" ? "value" : "gradient"}: ${info.name || "—"}`));
  if (info.state !== "value") {
    const text = info.state === "holder" ? `${info.type} (not a tensor)`
      : info.state === "error" ? `could not be read: ${info.error}` : STATE_TEXT[info.state] ?? "";
    box.append(el("div", "fs-insp-empty", text));
    return box;
  }
  const fields = el("div", "fs-insp-fields");
  field(fields, "shape", "shape", `[${info.shape.join(", ")}]`);
  field(fields, "dtype", "dtype", info.dtype);
  field(fields, "place", "place", info.place);
  field(fields, "lod", "LoD", lodText(info.lod));
  if (info.note) field(fields, "note", "note", info.note);
  box.append(fields);
  if (info.stats) box.append(statsBlock(info.stats));
  if (info.histogram && info.stats && info.stats.finite > 0) box.append(histogramBlock(info.histogram));
  if (info.heatmap) box.append(heatmapBlock(info.heatmap));
  if (info.sequences) box.append(sequencesBlock(info.sequences));
  if (info.preview) box.append(previewBlock(info.preview));
  return box;
}

function render({ model, el: root }) {
  root.classList.add("fs-insp");
  const releaseKeys = keepKeysInside(root);

  const bar = el("div", "fs-insp-bar");
  const picker = el("select", "fs-insp-select");
  picker.title = "variable to inspect";
  picker.addEventListener("change", () => sendAction(model, "select", { name: picker.value }));
  const where = el("span", "fs-insp-where");
  bar.append(el("span", "fs-insp-label", "variable"), picker, where);
  const message = el("div", "fs-insp-message");
  const panes = el("div", "fs-insp-panes");
  root.append(bar, message, panes);
  const releaseMessage = showMessage(model, message);

  function draw() {
    const names = model.get("variables");
    const selected = model.get("selected");
    const options = ["", ...names];
    if (selected && !names.includes(selected)) options.push(selected);
    picker.replaceChildren(...options.map((n) => {
      const o = el("option", "", n || "(none)");
      o.value = n;
      return o;
    }));
    picker.value = selected;
    const frame = model.get("frame");
    where.textContent = `at ${model.get("where")}${frame === null ? "" : ` · reading frame ${frame}`}`;
    panes.replaceChildren(pane("value", model.get("value")), pane("gradient", model.get("gradient")));
    root.dataset.selected = selected;
    root.dataset.frame = frame === null ? "" : String(frame);
    root.dataset.version = String(model.get("version"));
  }

  const releaseDraw = onChanges(model, ["variables", "selected", "value", "gradient", "where",
    "frame", "version"], draw);
  draw();
  return () => {
    releaseDraw();
    releaseMessage();
    releaseKeys();
  };
}

export default { render };
