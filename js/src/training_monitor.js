// TrainingMonitor front end. Python owns the run and every number; this file draws the
// progress bar, the rates, the loss curve (from two float32 buffers) and sends the
// "stop" action when the stop button is clicked.

import { typedArray } from "./shared/buffers.js";
import { make as element } from "./shared/dom.js";
import { keepKeysInside } from "./shared/keyboard.js";
import { sendAction } from "./shared/protocol.js";

const MARGIN = { left: 56, right: 12, top: 10, bottom: 22 };

function clock(seconds) {
  if (seconds == null || !isFinite(seconds)) return "\u2013";
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (n) => String(n).padStart(2, "0");
  return h ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
}

function num(value, digits = 3) {
  if (value == null || !isFinite(value)) return "\u2013";
  const v = Number(value);
  if (Math.abs(v) >= 10 ** digits && Math.abs(v) < 1e9) {
    return Math.round(v).toLocaleString("en-US");
  }
  // trailing zeros of the fraction only: "1.50" -> "1.5", "100" stays
  return v.toPrecision(digits).replace(/(\.\d*?)0+(e|$)/, "$1$2").replace(/\.(e|$)/, "$1");
}

// The y range of the finite (on a log axis: positive) values, padded a little.
function yRange(ys, log) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const y of ys) {
    if (!isFinite(y) || (log && y <= 0)) continue;
    const v = log ? Math.log10(y) : y;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (lo > hi) return null;
  if (lo === hi) return [lo - 0.5, hi + 0.5];
  const pad = (hi - lo) * 0.05;
  return [lo - pad, hi + pad];
}

function drawCurve(canvas, xs, ys, log) {
  const ratio = window.devicePixelRatio || 1;
  const width = canvas.clientWidth;
  const height = canvas.clientHeight;
  if (!width || !height) return;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  const style = getComputedStyle(canvas);
  const ink = style.getPropertyValue("--fs-train-ink").trim() || "#555";
  const line = style.getPropertyValue("--fs-train-line").trim() || "#1f77b4";
  ctx.font = "11px sans-serif";
  ctx.fillStyle = ink;
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = height - MARGIN.top - MARGIN.bottom;
  ctx.strokeStyle = ink;
  ctx.globalAlpha = 0.35;
  ctx.strokeRect(MARGIN.left, MARGIN.top, plotW, plotH);
  ctx.globalAlpha = 1;
  const range = yRange(ys, log);
  if (!xs.length || !range) {
    const empty = xs.length ? "no finite loss to draw" : "no steps yet";
    ctx.fillText(empty, MARGIN.left + 8, MARGIN.top + 16);
    return;
  }
  const x0 = xs[0];
  const x1 = Math.max(xs[xs.length - 1], x0 + 1);
  const px = (x) => MARGIN.left + ((x - x0) / (x1 - x0)) * plotW;
  const py = (v) => MARGIN.top + (1 - (v - range[0]) / (range[1] - range[0])) * plotH;
  // y labels: top, middle, bottom of the range (powers of ten on a log axis)
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  for (const v of [range[1], (range[0] + range[1]) / 2, range[0]]) {
    ctx.fillText(num(log ? 10 ** v : v), MARGIN.left - 4, py(v));
  }
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  ctx.fillText(`step ${Math.round(x0)}`, MARGIN.left + 24, MARGIN.top + plotH + 4);
  const last = `${Math.round(xs[xs.length - 1])}`;
  ctx.fillText(last, MARGIN.left + plotW - 12, MARGIN.top + plotH + 4);
  // The curve; a NaN/Inf (or non-positive on a log axis) breaks it and gets a red tick.
  ctx.strokeStyle = line;
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  let drawing = false;
  const bad = [];
  for (let i = 0; i < xs.length; i++) {
    const y = ys[i];
    if (!isFinite(y) || (log && y <= 0)) {
      if (!isFinite(y)) bad.push(xs[i]);
      drawing = false;
      continue;
    }
    const X = px(xs[i]);
    const Y = py(log ? Math.log10(y) : y);
    if (drawing) ctx.lineTo(X, Y);
    else ctx.moveTo(X, Y);
    drawing = true;
  }
  ctx.stroke();
  ctx.strokeStyle = "#d62728";
  for (const x of bad) {
    ctx.beginPath();
    ctx.moveTo(px(x), MARGIN.top);
    ctx.lineTo(px(x), MARGIN.top + 8);
    ctx.stroke();
  }
}

function render({ model, el }) {
  el.classList.add("fs-train");
  const releaseKeys = keepKeysInside(el);

  const head = element("div", "fs-train-head");
  const badge = element("span", "fs-train-status");
  const position = element("span", "fs-train-position");
  const loss = element("span", "fs-train-loss");
  const spacer = element("span", "fs-train-spacer");
  const logLabel = element("label", "fs-train-log");
  const logBox = element("input");
  logBox.type = "checkbox";
  logLabel.append(logBox, document.createTextNode(" log"));
  const stopButton = element("button", "fs-train-stop", "stop");
  head.append(badge, position, loss, spacer, logLabel, stopButton);

  const track = element("div", "fs-train-track");
  const bar = element("div", "fs-train-bar");
  track.append(bar);
  const stats = element("div", "fs-train-stats");
  const canvas = element("canvas", "fs-train-curve");
  const note = element("div", "fs-train-message");
  el.append(head, track, stats, canvas, note);

  function drawText() {
    const status = model.get("status");
    const done = model.get("done");
    const total = model.get("total");
    el.dataset.status = status;
    badge.textContent = status;
    const epochs = model.get("epochs");
    const epoch = model.get("epoch");
    const of = total == null ? "" : ` / ${total}`;
    position.textContent = epoch ? `epoch ${epoch}/${epochs} \u00b7 step ${done}${of}` : "";
    const text = model.get("loss_text");
    const names = model.get("fetch_names");
    loss.textContent = text ? `loss ${text}` : "";
    loss.title = names.length ? `the first fetch, ${names[0]}` : "";
    loss.classList.toggle("fs-train-bad", /nan|inf/i.test(text));
    const known = total != null && total > 0;
    bar.style.width = known ? `${Math.min(100, (100 * done) / total)}%` : "";
    track.classList.toggle("fs-train-unknown", !known && status === "running");
    const sampleRate = model.get("sample_rate");
    const parts = [`${num(model.get("rate"))} steps/s`];
    if (sampleRate != null) parts.push(`${num(sampleRate)} samples/s`);
    if (status === "running") parts.push(`ETA ${clock(model.get("eta_s"))}`);
    parts.push(`elapsed ${clock(model.get("elapsed_s"))}`);
    stats.textContent = parts.join(" \u00b7 ");
    note.textContent = model.get("message") || model.get("error"); // message says where
    note.classList.toggle("fs-train-bad", status === "error" || model.get("nan_step") != null);
    const running = status === "running";
    const stopping = model.get("stop_requested");
    const threaded = model.get("threaded");
    stopButton.disabled = !running || stopping || !threaded;
    stopButton.textContent = running && stopping ? "stopping\u2026" : "stop";
    stopButton.title = running && !threaded
      ? "This run blocks the kernel, so the button cannot reach it: interrupt the kernel"
      : "Stop after the step in progress (the parameters stay consistent)";
    logBox.checked = model.get("log_scale");
  }

  function drawPlot() {
    canvas.style.height = `${model.get("height")}px`;
    drawCurve(canvas, typedArray(model.get("curve_steps"), "f4"),
      typedArray(model.get("curve_losses"), "f4"),
      model.get("log_scale"));
  }

  stopButton.addEventListener("click", () => {
    stopButton.disabled = true;
    stopButton.textContent = "stopping\u2026";
    sendAction(model, "stop");
  });
  logBox.addEventListener("change", () => {
    model.set("log_scale", logBox.checked);
    model.save_changes();
  });

  // A Python update changes many traits at once: draw once per animation frame.
  const pending = new Set();
  function schedule(draw) {
    if (!pending.size) {
      requestAnimationFrame(() => {
        const draws = [...pending];
        pending.clear();
        for (const d of draws) d();
      });
    }
    pending.add(draw);
  }
  const later = (draw) => () => schedule(draw);

  const textKeys = ["status", "message", "error", "epoch", "epochs", "step", "done", "total",
    "rate", "sample_rate", "eta_s", "elapsed_s", "loss_text", "nan_step", "stop_requested",
    "threaded", "fetch_names", "log_scale"];
  const listeners = [
    ...textKeys.map((key) => [`change:${key}`, later(drawText)]),
    ...["curve_losses", "curve_steps", "log_scale", "height"].map(
      (key) => [`change:${key}`, later(drawPlot)]),
  ];
  for (const [event, handler] of listeners) model.on(event, handler);
  const resize = new ResizeObserver(later(drawPlot));
  resize.observe(canvas);
  drawText();
  drawPlot();

  return () => {
    for (const [event, handler] of listeners) model.off(event, handler);
    resize.disconnect();
    releaseKeys();
  };
}

export default { render };
