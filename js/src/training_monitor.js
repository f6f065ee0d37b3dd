// TrainingMonitor front end. Python owns the run and every number; this file draws the
// progress bar, the rates, one plot panel per quantity (the loss from two float32
// buffers, metrics and validation series from `series`), and sends the "stop",
// "export_csv", "export_png" and "save_png" (the PNG it painted) actions.
//
// Hooks for browser tests: .fs-train[data-status]; .fs-train-panel[data-panel]
// (canvas.fs-train-curve[data-series], .fs-train-legend-item[data-series][data-kind]);
// button.fs-train-csv, button.fs-train-png; .fs-train-saved; .fs-train[data-png-sent].

import { make as element } from "./shared/dom.js";
import { keepKeysInside } from "./shared/keyboard.js";
import { sendAction } from "./shared/protocol.js";
import { drawPanel, num, panelCurves, panelsPng } from "./training_monitor_plot.js";

function clock(seconds) {
  if (seconds == null || !isFinite(seconds)) return "\u2013";
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (n) => String(n).padStart(2, "0");
  return h ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
}

// The panels to draw: Python's, or (before a run) one for the loss.
function panelsOf(model) {
  const panels = model.get("panels");
  if (panels.length) return panels;
  const loss = model.get("fetch_names")[0] ?? "loss";
  return [{ name: loss, y_title: loss, series: [loss], labels: [loss], lo: null, hi: null }];
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
  const csvButton = element("button", "fs-train-csv", "CSV");
  csvButton.title = "save every step's figures as training_monitor.csv (kernel's folder)";
  const pngButton = element("button", "fs-train-png", "PNG");
  pngButton.title = "save these plots as training_monitor.png (kernel's folder)";
  head.append(badge, position, loss, spacer, logLabel, csvButton, pngButton, stopButton);

  const track = element("div", "fs-train-track");
  const bar = element("div", "fs-train-bar");
  track.append(bar);
  const stats = element("div", "fs-train-stats");
  const plots = element("div", "fs-train-panels");
  const note = element("div", "fs-train-message");
  const saved = element("div", "fs-train-saved");
  el.append(head, track, stats, plots, note, saved);
  let drawn = [];  // [{canvas, curves}] of the panels on screen, for the PNG

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
    const path = model.get("saved");
    saved.textContent = path ? `saved ${path}` : "";
    saved.hidden = !path;
  }

  function drawPlot() {
    const panels = panelsOf(model);
    const withCurves = panels.map((panel) => ({ panel, curves: panelCurves(model, panel) }));
    let x1 = 1;
    for (const { curves } of withCurves) {
      for (const c of curves) if (c.xs.length) x1 = Math.max(x1, c.xs[c.xs.length - 1]);
    }
    const xRange = [1, Math.max(x1, 2)];
    const log = model.get("log_scale");
    const keep = new Map([...plots.children].map((node) => [node.dataset.panel, node]));
    const nodes = [];
    drawn = [];
    for (const { panel, curves } of withCurves) {
      const node = keep.get(panel.name) ?? newPanel(panel.name);
      const legend = node.querySelector(".fs-train-legend");
      legend.replaceChildren(...curves.map((c) => {
        const item = element("span", "fs-train-legend-item");
        item.dataset.series = c.name;
        item.dataset.kind = c.kind;
        const swatch = element("span", `fs-train-swatch${c.kind === "added" ? " fs-train-dashed" : ""}`);
        swatch.style.borderColor = c.color;
        const last = c.ys.length ? ` ${num(c.ys[c.ys.length - 1], 4)}` : "";
        item.title = c.name;
        item.append(swatch, document.createTextNode(`${c.label}${last}`));
        return item;
      }));
      const canvas = node.querySelector("canvas");
      canvas.dataset.series = String(curves.length);
      canvas.style.height = `${model.get("height")}px`;
      nodes.push(node);
      drawn.push({ canvas, curves, panel });
    }
    plots.replaceChildren(...nodes);
    for (const { canvas, curves, panel } of drawn) {
      drawPanel(canvas, panel, curves, xRange, log, model.get("x_title"));
    }
  }

  function newPanel(name) {
    const node = element("div", "fs-train-panel");
    node.dataset.panel = name;
    const canvas = element("canvas", "fs-train-curve");
    node.append(element("div", "fs-train-legend"), canvas);
    resize.observe(canvas);
    return node;
  }

  // Python asks for a PNG (export_png): paint the panels as they are and send it back.
  let answered = model.get("png_request").id ?? 0;
  function answerPng() {
    const request = model.get("png_request");
    if (!request.id || request.id <= answered) return;
    answered = request.id;
    drawPlot();
    const data = panelsPng(drawn);
    sendAction(model, "save_png", { data, request: request.id });
    el.dataset.pngSent = String(request.id);
  }

  stopButton.addEventListener("click", () => {
    stopButton.disabled = true;
    stopButton.textContent = "stopping\u2026";
    sendAction(model, "stop");
  });
  csvButton.addEventListener("click", () => sendAction(model, "export_csv"));
  pngButton.addEventListener("click", () => sendAction(model, "export_png"));
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
    "threaded", "fetch_names", "log_scale", "saved"];
  const listeners = [
    ...textKeys.map((key) => [`change:${key}`, later(drawText)]),
    ...["curve_losses", "curve_steps", "log_scale", "height", "series", "panels", "x_title"].map(
      (key) => [`change:${key}`, later(drawPlot)]),
    ["change:png_request", later(answerPng)],
  ];
  for (const [event, handler] of listeners) model.on(event, handler);
  const resize = new ResizeObserver(later(drawPlot));
  drawText();
  drawPlot();

  return () => {
    for (const [event, handler] of listeners) model.off(event, handler);
    resize.disconnect();
    releaseKeys();
  };
}

export default { render };
