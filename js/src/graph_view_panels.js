// GraphView's side pieces: the details panel of the selected node, the search box and the
// minimap. Each draws what Python (or the main view) hands it; none holds program logic.
//
// Hooks for browser tests: .fs-graph-details (hidden without a selection) with
// .fs-graph-details-title, .fs-graph-details-subtitle, table rows tr[data-field] and
// tr.fs-graph-io[data-slot][data-name]; input.fs-graph-search and .fs-graph-found;
// canvas.fs-graph-minimap (hidden while the whole graph is in view).

import { input, make } from "./shared/dom.js";
import { sendAction } from "./shared/protocol.js";

function row(field, label, value) {
  const tr = make("tr");
  tr.dataset.field = field;
  tr.append(make("th", "", label), make("td", "", value));
  return tr;
}

function ioRows(title, rows) {
  if (!rows.length) return [];
  const head = make("tr", "fs-graph-details-section");
  const th = make("th", "", title);
  th.colSpan = 2;
  head.append(th);
  return [head, ...rows.map((r) => {
    const tr = make("tr", `fs-graph-io fs-graph-kind-${r.kind}`);
    tr.dataset.slot = r.slot;
    tr.dataset.name = r.name;
    const name = make("td", "fs-graph-io-name", `${r.slot}: ${r.name}`);
    const type = make("td", "fs-graph-io-type", r.type + (r.internal ? " (internal)" : ""));
    tr.append(name, type);
    return tr;
  })];
}

// The details panel; `onClose` clears the selection. It opens for a node the user picked
// here (a click, a search: `ask()`), and for one Python selected when `details_auto` is
// set (a DebuggerView clears it: its inspector already shows what it selects).
export function detailsPanel(model, onClose) {
  let asked = false;
  const panel = make("aside", "fs-graph-details");
  const close = make("button", "fs-graph-button fs-graph-details-close", "\u00d7");
  close.title = "close the details (clears the selection)";
  close.addEventListener("click", () => {
    asked = false;
    onClose();
  });
  const title = make("div", "fs-graph-details-title");
  const subtitle = make("div", "fs-graph-details-subtitle");
  const doc = make("div", "fs-graph-details-doc");
  const table = make("table", "fs-graph-details-table");
  panel.append(close, title, subtitle, doc, table);

  function draw() {
    const d = model.get("details") ?? {};
    panel.hidden = !d.key || !(asked || model.get("details_auto"));
    if (panel.hidden) return;
    panel.dataset.key = d.key;
    title.textContent = d.title;
    subtitle.textContent = d.subtitle ?? "";
    doc.textContent = d.doc ?? "";
    const rows = [];
    if (d.kind === "var") {
      rows.push(row("type", "type", d.type));
      if (d.lod) rows.push(row("lod", "LoD levels", String(d.lod)));
      if (d.numel !== null && d.numel !== undefined) rows.push(row("numel", "elements", d.numel.toLocaleString()));
      if (d.flags?.length) rows.push(row("flags", "flags", d.flags.join(", ")));
      rows.push(row("written_by", "written by", d.written_by.join(", ") || "\u2014 (fed or initialised)"));
      rows.push(row("read_by", "read by", d.read_by.join(", ") || "\u2014"));
    } else {
      if (d.layer) rows.push(row("layer", "layer", d.layer));
      if (d.kind === "group") rows.push(row("ops", "ops", d.ops.join(", ")));
      if (d.parameters !== undefined) {
        const names = d.parameter_names?.length ? ` (${d.parameter_names.join(", ")})` : "";
        rows.push(row("parameters", "parameters", `${d.parameters.toLocaleString()}${names}`));
      }
      if (d.source) {
        const tr = row("source", "made at", d.source);
        if (d.source_text) tr.lastChild.append(make("code", "fs-graph-source", d.source_text));
        rows.push(tr);
      }
      for (const [name, value] of d.attrs ?? []) rows.push(row(`attr-${name}`, name, value));
      rows.push(...ioRows("inputs", d.inputs ?? []), ...ioRows("outputs", d.outputs ?? []));
    }
    table.replaceChildren(...rows);
  }
  draw();
  const ask = () => { asked = true; };
  return { panel, draw, ask };
}

// The search box: Enter asks Python's find (again: the next match); shows the match count.
export function searchBox(model) {
  const box = make("span", "fs-graph-search-box");
  const field = input("fs-graph-search", "search", "find op, variable, layer",
    "find a node by op type, variable name or layer name (Enter: next match)");
  const count = make("span", "fs-graph-found");
  box.append(field, count);
  let onAsk = () => {};
  field.addEventListener("keydown", (e) => {
    if (e.key !== "Enter" || !field.value.trim()) return;
    e.preventDefault();
    onAsk();
    sendAction(model, "find", { query: field.value.trim() });
  });
  function show() {
    const found = model.get("found") ?? [];
    const at = found.indexOf(model.get("selected"));
    count.textContent = found.length && at >= 0 ? `${at + 1}/${found.length}` : "";
  }
  show();
  return { box, show, onAsk: (f) => { onAsk = f; } };
}

// Fill colour of a node: its shape's fill attribute, else a neutral grey.
function fillOf(g) {
  const shape = g.querySelector("polygon, path, ellipse");
  const fill = shape?.getAttribute("fill");
  return fill && fill !== "none" ? fill : "#cfcfcf";
}

// The minimap: every node as a small box (the current op red), the part in view as a
// frame; a press or a drag on it centres the view there. `view()` gives the canvas
// transform {x, y, k}, `centre(x, y)` pans so that SVG pixel (x, y) at k=1 is centred.
export function minimap(onCentre) {
  const canvas = make("canvas", "fs-graph-minimap");
  canvas.width = 180;
  canvas.height = 130;
  canvas.title = "overview: click or drag to move the view";
  let geometry = null; // {scale, ox, oy} of the last draw
  let boxes = [];

  // Node boxes in SVG pixels at k=1 (relative to the svg's top-left), measured once per SVG.
  function measure(svg, k) {
    const origin = svg.getBoundingClientRect();
    boxes = [...svg.querySelectorAll("g.node")].map((g) => {
      const r = g.getBoundingClientRect();
      return {
        x: (r.left - origin.left) / k, y: (r.top - origin.top) / k, w: r.width / k, h: r.height / k,
        fill: fillOf(g), current: g.classList.contains("fs-current"),
        found: g.classList.contains("fs-found"),
      };
    });
    return { w: origin.width / k, h: origin.height / k };
  }

  let size = { w: 0, h: 0 };
  function update(svg, view, viewport, remeasure) {
    if (!svg) {
      canvas.hidden = true;
      return;
    }
    if (remeasure) size = measure(svg, view.k);
    const vw = viewport.clientWidth;
    const vh = viewport.clientHeight;
    // at most about a third of a narrow view, so it never hides what it maps
    canvas.width = Math.round(Math.max(80, Math.min(180, vw * 0.3)));
    canvas.height = Math.round(Math.max(60, Math.min(130, vh * 0.3)));
    const whole = size.w * view.k <= vw + 1 && size.h * view.k <= vh + 1;
    canvas.hidden = whole || !size.w;
    if (canvas.hidden) return;
    const ctx = canvas.getContext("2d");
    const scale = Math.min((canvas.width - 4) / size.w, (canvas.height - 4) / size.h);
    const ox = (canvas.width - size.w * scale) / 2;
    const oy = (canvas.height - size.h * scale) / 2;
    geometry = { scale, ox, oy };
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.fillStyle = "rgba(255,255,255,0.92)";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    for (const b of boxes) {
      ctx.fillStyle = b.current ? "#d62728" : b.found ? "#ff9800" : b.fill;
      const w = Math.max(1.5, b.w * scale);
      const h = Math.max(1.5, b.h * scale);
      ctx.fillRect(ox + b.x * scale, oy + b.y * scale, w, h);
    }
    // the part in view: viewport (0,0)-(vw,vh) in SVG pixels is (-x/k, -y/k) ...
    ctx.strokeStyle = "#1a5fb4";
    ctx.lineWidth = 1.5;
    ctx.strokeRect(ox + (-view.x / view.k) * scale, oy + (-view.y / view.k) * scale,
      (vw / view.k) * scale, (vh / view.k) * scale);
  }

  function toSvg(e) {
    const r = canvas.getBoundingClientRect();
    const { scale, ox, oy } = geometry;
    return [(e.clientX - r.left - ox) / scale, (e.clientY - r.top - oy) / scale];
  }
  let dragging = false;
  canvas.addEventListener("pointerdown", (e) => {
    if (!geometry) return;
    e.stopPropagation(); // not a pan of the graph underneath
    dragging = true;
    canvas.setPointerCapture?.(e.pointerId);
    onCentre(...toSvg(e));
  });
  canvas.addEventListener("pointermove", (e) => {
    if (dragging && geometry) onCentre(...toSvg(e));
  });
  const stop = (e) => { dragging = false; e.stopPropagation(); };
  canvas.addEventListener("pointerup", stop);
  canvas.addEventListener("pointercancel", stop);
  canvas.addEventListener("wheel", (e) => e.stopPropagation());
  return { canvas, update };
}
