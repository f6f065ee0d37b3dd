// TrainingMonitor's plot: one panel per quantity (Python sends the panels, their series
// and y ranges), each with tick labels, axis titles and a legend; the PNG export paints
// every panel onto one canvas. Drawing only: the ranges and the curves come from Python.

import { typedArray } from "./shared/buffers.js";

export const MARGIN = { left: 66, right: 14, top: 10, bottom: 36 };
export const COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"];

export function num(value, digits = 3) {
  if (value == null || !isFinite(value)) return "\u2013";
  const v = Number(value);
  if (Math.abs(v) >= 10 ** digits && Math.abs(v) < 1e9) {
    return Math.round(v).toLocaleString("en-US");
  }
  if (v !== 0 && Math.abs(v) < 1e-3) return v.toExponential(1);
  // trailing zeros of the fraction only: "1.50" -> "1.5", "100" stays
  return v.toPrecision(digits).replace(/(\.\d*?)0+(e|$)/, "$1$2").replace(/\.(e|$)/, "$1");
}

// About `count` round ticks (1, 2, 5 times a power of ten) within [lo, hi].
export function niceTicks(lo, hi, count = 5) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const ticks = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    ticks.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  }
  return ticks;
}

// Log axis ticks (in log10 units): whole decades, with 2 and 5 when the span is short.
function logTicks(a, b) {
  const ticks = [];
  const short = b - a < 2;
  for (let d = Math.floor(a); d <= Math.ceil(b); d++) {
    for (const m of short ? [1, 2, 5] : [1]) {
      const v = d + Math.log10(m);
      if (v >= a - 1e-9 && v <= b + 1e-9) ticks.push(v);
    }
  }
  return ticks.length ? ticks : [a, b];
}

// The curves of one panel: [{name, kind, xs, ys, color}]; the loss comes from the curve
// buffers, every other series from model.get("series").
export function panelCurves(model, panel) {
  const loss = model.get("fetch_names")[0];
  const all = model.get("series");
  return panel.series.map((name, k) => {
    if (name === loss || (!all.length && k === 0)) {
      return { name, kind: "loss", xs: typedArray(model.get("curve_steps"), "f4"),
        ys: typedArray(model.get("curve_losses"), "f4") };
    }
    const s = all.find((each) => each.name === name);
    return { name, kind: s ? s.kind : "added", xs: typedArray(s?.steps, "f4"),
      ys: typedArray(s?.values, "f4") };
  }).map((c, k) => ({ ...c, label: panel.labels?.[k] ?? c.name, color: COLORS[k % COLORS.length] }));
}

// Draw one panel into `canvas` (CSS size already set). xRange: [x0, x1] shared by panels.
export function drawPanel(canvas, panel, curves, xRange, log, xTitle) {
  const ratio = window.devicePixelRatio || 1;
  const width = canvas.clientWidth;
  const height = canvas.clientHeight;
  if (!width || !height) return;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  Object.assign(canvas.dataset, { yTitle: panel.y_title, xTitle, log: String(log), yTicks: "" });
  const style = getComputedStyle(canvas);
  const ink = style.getPropertyValue("--fs-train-ink").trim() || "#555";
  ctx.font = "11px sans-serif";
  ctx.fillStyle = ink;
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = height - MARGIN.top - MARGIN.bottom;
  ctx.strokeStyle = ink;
  ctx.globalAlpha = 0.35;
  ctx.strokeRect(MARGIN.left, MARGIN.top, plotW, plotH);
  ctx.globalAlpha = 1;
  // axis titles: y rotated at the left, x under the ticks
  ctx.save();
  ctx.translate(12, MARGIN.top + plotH / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fillText(log ? `${panel.y_title} (log)` : panel.y_title, 0, 0);
  ctx.restore();
  ctx.textAlign = "center";
  ctx.textBaseline = "bottom";
  ctx.fillText(xTitle, MARGIN.left + plotW / 2, height - 2);
  const steps = curves.reduce((n, c) => n + c.xs.length, 0);
  if (!steps || panel.lo == null || panel.hi == null) {
    ctx.textAlign = "left";
    ctx.textBaseline = "top";
    ctx.fillText(steps ? "no finite value to draw" : "no steps yet", MARGIN.left + 8, MARGIN.top + 8);
    return;
  }
  const toY = (v) => (log ? Math.log10(v) : v);
  const yTicks = log ? logTicks(toY(panel.lo), toY(panel.hi)) : niceTicks(panel.lo, panel.hi);
  canvas.dataset.yTicks = yTicks.map((t) => num(log ? 10 ** t : t)).join(" ");
  const y0 = toY(panel.lo);
  const y1 = toY(panel.hi);
  const [x0, x1] = xRange;
  const px = (x) => MARGIN.left + ((x - x0) / (x1 - x0)) * plotW;
  const py = (v) => MARGIN.top + (1 - (v - y0) / (y1 - y0)) * plotH;
  // y ticks and light grid lines
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  for (const t of yTicks) {
    const Y = py(t);
    ctx.fillText(num(log ? 10 ** t : t), MARGIN.left - 5, Y);
    ctx.globalAlpha = 0.12;
    ctx.beginPath();
    ctx.moveTo(MARGIN.left, Y);
    ctx.lineTo(MARGIN.left + plotW, Y);
    ctx.stroke();
    ctx.globalAlpha = 1;
  }
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  for (const t of niceTicks(x0, x1, Math.max(2, Math.floor(plotW / 80)))) {
    if (Number.isInteger(t)) ctx.fillText(num(t, 6), px(t), MARGIN.top + plotH + 4);
  }
  ctx.save();
  ctx.beginPath();
  ctx.rect(MARGIN.left, MARGIN.top, plotW, plotH);
  ctx.clip();
  for (const c of curves) drawCurve(ctx, c, px, py, log, toY);
  ctx.restore();
}

// One curve; a NaN/Inf (or a non-positive value on a log axis) breaks it, and a NaN/Inf
// gets a red tick at the top. Added series (validation) are dashed with dots: they are
// sparse, one point per epoch.
function drawCurve(ctx, c, px, py, log, toY) {
  ctx.strokeStyle = c.color;
  ctx.fillStyle = c.color;
  ctx.lineWidth = 1.5;
  ctx.setLineDash(c.kind === "added" ? [5, 3] : []);
  ctx.beginPath();
  let drawing = false;
  const bad = [];
  for (let i = 0; i < c.xs.length; i++) {
    const y = c.ys[i];
    if (!isFinite(y) || (log && y <= 0)) {
      if (!isFinite(y)) bad.push(c.xs[i]);
      drawing = false;
      continue;
    }
    const X = px(c.xs[i]);
    const Y = py(toY(y));
    if (drawing) ctx.lineTo(X, Y);
    else ctx.moveTo(X, Y);
    drawing = true;
  }
  ctx.stroke();
  ctx.setLineDash([]);
  if (c.kind === "added") {
    for (let i = 0; i < c.xs.length; i++) {
      if (!isFinite(c.ys[i]) || (log && c.ys[i] <= 0)) continue;
      ctx.beginPath();
      ctx.arc(px(c.xs[i]), py(toY(c.ys[i])), 2.5, 0, 2 * Math.PI);
      ctx.fill();
    }
  }
  ctx.strokeStyle = "#d62728";
  for (const x of bad) {
    ctx.beginPath();
    ctx.moveTo(px(x), MARGIN.top);
    ctx.lineTo(px(x), MARGIN.top + 8);
    ctx.stroke();
  }
}

// Every panel (canvas + its legend text) on one white canvas, as a PNG data URL.
export function panelsPng(parts) {
  const ratio = window.devicePixelRatio || 1;
  const legendH = 18;
  const width = Math.max(...parts.map((p) => p.canvas.width));
  const height = parts.reduce((h, p) => h + p.canvas.height + legendH * ratio, 0);
  const out = document.createElement("canvas");
  out.width = width;
  out.height = height;
  const ctx = out.getContext("2d");
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, width, height);
  let y = 0;
  for (const { canvas, curves } of parts) {
    ctx.font = `${12 * ratio}px sans-serif`;
    ctx.textBaseline = "middle";
    let x = MARGIN.left * ratio;
    for (const c of curves) {
      ctx.fillStyle = c.color;
      ctx.fillRect(x, y + 5 * ratio, 14 * ratio, 4 * ratio);
      ctx.fillStyle = "#222";
      ctx.fillText(c.label, x + 18 * ratio, y + 8 * ratio);
      x += (ctx.measureText(c.label).width + 34 * ratio);
    }
    y += legendH * ratio;
    ctx.drawImage(canvas, 0, y);
    y += canvas.height;
  }
  return out.toDataURL("image/png");
}
