// Zoomed out on a big design, what far_canvas.jsx draws: every node as its compact block
// (the look of nodes.jsx's CompactBlock: kind and name in large type, the category's
// colour, error, selection, a find's highlight) and every wire, in flow coordinates, and
// which node a flow point falls on. Pure functions over React Flow's node lookup: no DOM
// but the one canvas a text is measured with.
import { getBezierPath } from "@xyflow/react";
import { dataPath, memoryPath } from "./edges.jsx";
import { COMPACT_SIZE } from "./viewport.js";
import { compactLines } from "./nodes.jsx";

const ZONE_HEAD = 64; // flow px: a zone's head at far zoom (canvas.css .fs-far .fs-zone-head)
const ARROW = 12; // flow px: a wire's closed arrow (half as wide each side)

const PORT_MARK = { step_input: "in", memory: "mem", output: "out" }; // nodes.jsx PortNode's

// The first line of a node's block when it is not the layer kind (nodes.jsx's `kind`).
function markOf(view) {
  if (view.type === "fold") return view.title; // "fc × 120"
  if (view.type === "step_input" && view.static) return "static";
  if (PORT_MARK[view.type]) return PORT_MARK[view.type];
  if (view.type === "group") return view.reverse ? "recurrent ⟲" : "recurrent ⟳";
  return null;
}

// One drawn node: its box in flow coordinates and what it shows.
function itemOf(internal) {
  const view = internal.data?.view;
  if (!view) return null;
  const { x, y } = internal.internals.positionAbsolute;
  const zone = view.type === "group";
  const open = zone && !view.collapsed && view.size;
  const [w, h] = open ? view.size : [COMPACT_SIZE.width, COMPACT_SIZE.height];
  const mark = markOf(view);
  const kind = view.layer === "op" && view.detail ? view.detail : view.layer; // an op node: its op type
  const lines = mark ? [mark, view.title] : compactLines(kind, view.title);
  return {
    id: internal.id, view, x, y, w, h, open, zone, fold: view.type === "fold", lines,
    parent: internal.parentId ?? null, selected: !!internal.selected,
    found: internal.className === "fs-found",
    title: [view.title, view.detail, view.error].filter(Boolean).join("\n"),
  };
}

// Where a wire ends on a drawn node: outputs on the right middle, inputs on the left
// middle (a compact block stacks its handles there); an open zone's outputs on its right
// border, what feeds them from inside onto the same border.
function endsOf(source, target) {
  return {
    sourceX: source.x + source.w, sourceY: source.open ? source.y + source.h - 40 : source.y + source.h / 2,
    targetX: target.open ? target.x + target.w : target.x,
    targetY: target.open ? target.y + target.h - 40 : target.y + target.h / 2,
    sourcePosition: "right", targetPosition: "left",
  };
}

// The scene: items in drawing order (zones before what they hold) and wires with their
// Path2D, from React Flow's node lookup and edges. Rebuilt when a node or edge changes,
// never for a move of the view.
export function buildScene(nodeLookup, edges) {
  const items = [];
  const byId = new Map();
  for (const internal of nodeLookup.values()) {
    const item = itemOf(internal);
    if (!item) continue;
    items.push(item);
    byId.set(item.id, item);
  }
  // zones first, so the blocks inside are drawn (and hit) over their frames
  items.sort((a, b) => (b.open ? 1 : 0) - (a.open ? 1 : 0));
  const wires = [];
  for (const e of edges) {
    const source = byId.get(e.source), target = byId.get(e.target);
    if (!source || !target) continue;
    const ends = endsOf(source, target);
    const kind = e.data?.kind ?? "data"; // flow_state.js mergeEdges
    const memory = e.type === "memory";
    const d = memory ? (memoryPath(ends) ?? getBezierPath(ends)[0]) : dataPath(ends)[0];
    const x0 = Math.min(ends.sourceX, ends.targetX) - 80, x1 = Math.max(ends.sourceX, ends.targetX) + 80;
    const y0 = Math.min(ends.sourceY, ends.targetY) - 80, y1 = Math.max(ends.sourceY, ends.targetY) + 120;
    wires.push({ id: e.id, kind, memory, selected: !!e.selected, path: new Path2D(d), ends, box: [x0, y0, x1, y1] });
  }
  return { items, byId, wires };
}

// The node drawn at flow point (x, y): the last one drawn there (a block over its zone).
export function itemAt(scene, x, y) {
  for (let k = scene.items.length - 1; k >= 0; k -= 1) {
    const it = scene.items[k];
    if (x >= it.x && y >= it.y && x <= it.x + it.w && y <= it.y + it.h) return it;
  }
  return null;
}

// On an open zone's head (a double-click there collapses it, as on the zone's own head).
export const onZoneHead = (item, y) => item.open && y <= item.y + ZONE_HEAD;

// Top-level ids whose boxes lie wholly inside the flow rectangle (box selection).
export function itemsInside(scene, x0, y0, x1, y1) {
  return scene.items.filter((it) => it.x >= x0 && it.y >= y0 && it.x + it.w <= x1 && it.y + it.h <= y1).map((it) => it.id);
}

// ---- drawing ----------------------------------------------------------------------

const FILL = { data: "#e7f3ec", loss: "#fbeee2", recurrent: "#eee9f7", sequence: "#eee9f7" };
const WIRE = { data: "#8593a3", memory: "#8e7cc3", boot: "#8e7cc3", static: "#6b7785", inlink: "#1a9a6c", outlink: "#1a9a6c" };
const DASH = { memory: [12, 8], boot: [4, 6], static: [4, 6] };
const ACCENT = "#2f6fdd", ERR = "#d0342c", FOUND = "#f5a623";

// Text at the compact block's sizes (canvas.css .fs-compact-kind/-name, nodes.jsx's
// fitting): 56 px, a line too long set smaller down to 46 px, else cut with an ellipsis.
const LINE_PX = 56, FIT_FLOOR = 46, LINE_WIDTH = 202, LETTER_SPACING = -0.04;
const fits = new Map(); // "bold|text" -> {size, text}

function fitted(ctx, family, bold, text) {
  const key = `${bold ? 1 : 0}|${text}`;
  let fit = fits.get(key);
  if (fit) return fit;
  ctx.font = `${bold ? 700 : 400} ${LINE_PX}px ${family}`;
  const width = ctx.measureText(text).width + text.length * LETTER_SPACING * LINE_PX;
  if (width <= LINE_WIDTH) fit = { size: LINE_PX, text };
  else {
    const size = Math.floor((LINE_PX * LINE_WIDTH) / width);
    if (size >= FIT_FLOOR) fit = { size, text };
    else { // cut: as many characters as fit with the ellipsis
      let cut = text;
      while (cut.length > 1 && ctx.measureText(`${cut}…`).width + (cut.length + 1) * LETTER_SPACING * LINE_PX > LINE_WIDTH) cut = cut.slice(0, -1);
      fit = { size: LINE_PX, text: `${cut}…` };
    }
  }
  fits.set(key, fit);
  return fit;
}

function roundRect(ctx, x, y, w, h, r) {
  ctx.beginPath();
  ctx.roundRect(x, y, w, h, r);
}

function drawZone(ctx, it, family, zoom) {
  roundRect(ctx, it.x, it.y, it.w, it.h, 10);
  ctx.fillStyle = "rgba(142,124,195,.05)";
  ctx.fill();
  ctx.setLineDash([12, 8]);
  ctx.lineWidth = Math.max(2, (it.selected ? 3 : 1.5) / zoom);
  ctx.strokeStyle = it.view.error ? ERR : it.selected ? ACCENT : "#8e7cc3";
  ctx.stroke();
  ctx.setLineDash([]);
  ctx.fillStyle = "rgba(142,124,195,.16)";
  ctx.fillRect(it.x, it.y, it.w, ZONE_HEAD);
  ctx.fillStyle = "#243447";
  ctx.font = `700 ${LINE_PX}px ${family}`;
  ctx.textBaseline = "middle";
  ctx.fillText(`${it.lines[0]} ${it.lines[1]}`, it.x + 12, it.y + ZONE_HEAD / 2, it.w - 24);
}

function drawBlock(ctx, it, family, zoom, withText) {
  const { view } = it;
  if (view.waiting_on) ctx.globalAlpha = 0.45;
  if (it.found) {
    ctx.lineWidth = 14;
    ctx.strokeStyle = FOUND;
    ctx.strokeRect(it.x - 13, it.y - 13, it.w + 26, it.h + 26);
  }
  roundRect(ctx, it.x, it.y, it.w, it.h, 10);
  ctx.fillStyle = view.error ? "#fdecea" : FILL[view.is_loss ? "loss" : view.category] ?? "#fff";
  ctx.fill();
  ctx.lineWidth = it.fold ? 4 : 2;
  ctx.strokeStyle = view.error ? ERR : it.selected ? ACCENT : it.zone ? "#8e7cc3" : "#8a97a6";
  ctx.stroke();
  if (it.fold) { // canvas.css: a fold's double border
    roundRect(ctx, it.x + 5, it.y + 5, it.w - 10, it.h - 10, 6);
    ctx.lineWidth = 1.5;
    ctx.stroke();
  }
  if (it.selected || view.error) { // the ring around a selected (or failing) block, >= 2 px on screen
    roundRect(ctx, it.x - 4, it.y - 4, it.w + 8, it.h + 8, 13);
    ctx.lineWidth = Math.max(4, 3 / zoom);
    ctx.strokeStyle = view.error ? "rgba(208,52,44,.35)" : "rgba(47,111,221,.45)";
    ctx.stroke();
  }
  if (withText) {
    ctx.textBaseline = "middle";
    for (let k = 0; k < 2; k += 1) {
      const bold = k === 0;
      const fit = fitted(ctx, family, bold, it.lines[k] ?? "");
      ctx.font = `${bold ? 700 : 400} ${fit.size}px ${family}`;
      ctx.fillStyle = bold ? (it.fold ? ACCENT : "#243447") : "#4b5661";
      ctx.fillText(fit.text, it.x + 8, it.y + 6 + 26 + 52 * k);
    }
  }
  ctx.globalAlpha = 1;
}

// Draws `scene` into `ctx` (a canvas of width x height device px) at the viewport
// transform [tx, ty, zoom] (`ratio`: device px per CSS px); only what is in view. A
// generator: it yields every STEP nodes or wires, so a caller can spread a drawing over
// several frames (far_canvas.jsx); it returns how many nodes and wires it drew.
const STEP = 50;
export function* drawSteps(ctx, scene, [tx, ty, zoom], width, height, ratio, family) {
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, width, height);
  ctx.setTransform(ratio * zoom, 0, 0, ratio * zoom, ratio * tx, ratio * ty);
  const x0 = -tx / zoom, y0 = -ty / zoom;
  const x1 = x0 + width / ratio / zoom, y1 = y0 + height / ratio / zoom;
  let drawnNodes = 0, drawnWires = 0;
  for (const it of scene.items) { // open zones first: the frames under everything
    if (!it.open || it.x > x1 || it.y > y1 || it.x + it.w < x0 || it.y + it.h < y0) continue;
    drawZone(ctx, it, family, zoom);
    drawnNodes += 1;
  }
  for (const w of scene.wires) {
    const [bx0, by0, bx1, by1] = w.box;
    if (bx0 > x1 || by0 > y1 || bx1 < x0 || by1 < y0) continue;
    ctx.lineCap = "round";
    ctx.setLineDash(DASH[w.kind] ?? []);
    ctx.lineWidth = w.selected ? 6 : 4;
    ctx.strokeStyle = w.selected ? ACCENT : WIRE[w.kind] ?? WIRE.data;
    ctx.stroke(w.path);
    const { targetX: x, targetY: y } = w.ends;
    ctx.beginPath();
    ctx.moveTo(x, y);
    ctx.lineTo(x - ARROW, y - ARROW / 2);
    ctx.lineTo(x - ARROW, y + ARROW / 2);
    ctx.closePath();
    ctx.fillStyle = ctx.strokeStyle;
    ctx.fill();
    drawnWires += 1;
    if (drawnWires % STEP === 0) yield;
  }
  ctx.setLineDash([]);
  const withText = LINE_PX * zoom >= 3; // below 3 px on screen a line is a smudge
  for (const it of scene.items) {
    if (it.open || it.x > x1 || it.y > y1 || it.x + it.w < x0 || it.y + it.h < y0) continue;
    drawBlock(ctx, it, family, zoom, withText);
    drawnNodes += 1;
    if (drawnNodes % STEP === 0) yield;
  }
  return { drawnNodes, drawnWires };
}

// drawSteps at once.
export function drawScene(...args) {
  const steps = drawSteps(...args);
  for (;;) {
    const { done, value } = steps.next();
    if (done) return value;
  }
}

// ---- the debugger link ------------------------------------------------------------

// debug_link.js's marks for the `link_state` trait, drawn over the scene: the node owning
// the op just run outlined in its phase's colour with a glow and its "▶ op" label above,
// a recurrent zone being stepped dashed with its frame "t 3 of 7", the loss node's live
// loss under it. Sizes in screen px (`u` flow px each) where debug_link.js's are in flow
// px: zoomed out to a whole 1,000-layer design, a 4 px outline would be under half a
// pixel on screen, and a user stepping the debugger there must still see where it is.
const PHASE_COLOR = { forward: "#f59e0b", backward: "#8b5cf6" }; // debug_link.js's
const FRAME_BG = "#8e7cc3";
const LOSS = { text: "#1a7f4b", fill: "#e7f6ee", line: "#9fd8b9" };

function tag(ctx, text, x, y, u, font, { fill, color, line = null, right = false, below = false }) {
  ctx.font = `600 ${12 * u}px ${font}`;
  const w = ctx.measureText(text).width + 12 * u, h = 18 * u;
  const left = right ? x - w : x, top = below ? y + 4 * u : y - 5 * u - h;
  roundRect(ctx, left, top, w, h, 3 * u);
  ctx.fillStyle = fill;
  ctx.fill();
  if (line) {
    ctx.lineWidth = u;
    ctx.strokeStyle = line;
    ctx.stroke();
  }
  ctx.fillStyle = color;
  ctx.textBaseline = "middle";
  ctx.fillText(text, left + 6 * u, top + h / 2);
}

// Draws `link` (the `link_state` trait) for `scene` into `ctx` (cleared first) at the
// viewport transform, as drawSteps places the scene. Returns the ids it lit: {node, zone}
// (null where the id is not drawn, e.g. inside a collapsed zone, as the DOM path lights
// nothing there either).
export function drawLink(ctx, scene, link, [tx, ty, zoom], width, height, ratio, font) {
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, width, height);
  const lit = { node: null, zone: null };
  if (!link) return lit;
  ctx.setTransform(ratio * zoom, 0, 0, ratio * zoom, ratio * tx, ratio * ty);
  const u = Math.max(1, 1 / zoom); // flow px per screen px, zoomed out; flow px zoomed in
  const color = PHASE_COLOR[link.phase] ?? "#6b7280";
  const node = link.active && link.node ? scene.byId.get(link.node) : null;
  const zone = link.active && link.zone ? scene.byId.get(link.zone) : null;
  if (zone && zone !== node) { // dashed, so a collapsed zone still shows where the session is
    roundRect(ctx, zone.x - 4.5 * u, zone.y - 4.5 * u, zone.w + 9 * u, zone.h + 9 * u, 4 * u);
    ctx.setLineDash([9 * u, 6 * u]);
    ctx.lineWidth = 3 * u;
    ctx.strokeStyle = color;
    ctx.stroke();
    ctx.setLineDash([]);
    lit.zone = zone.id;
  }
  if (zone && link.frame !== null && link.frame !== undefined) {
    tag(ctx, `t ${link.frame} of ${link.frames ?? "?"}`, zone.x + zone.w, zone.y, u, font, { fill: FRAME_BG, color: "#fff", right: true });
  }
  if (node) {
    const s = Math.max(1, 0.75 / zoom); // the outline >= 3 px on screen
    roundRect(ctx, node.x - 4.5 * s, node.y - 4.5 * s, node.w + 9 * s, node.h + 9 * s, 10 + 4.5 * s);
    ctx.lineWidth = 9 * s; // box-shadow 0 0 0 9px color40: the glow
    ctx.strokeStyle = `${color}40`;
    ctx.stroke();
    roundRect(ctx, node.x - 4 * s, node.y - 4 * s, node.w + 8 * s, node.h + 8 * s, 10 + 4 * s);
    ctx.lineWidth = 4 * s; // outline: 4px solid color, offset 2px
    ctx.strokeStyle = color;
    ctx.stroke();
    const label = `${link.phase === "backward" ? "◀ grad " : "▶ "}${link.op ?? ""}`;
    tag(ctx, label, node.x, node.y - 6 * s, u, font, { fill: color, color: "#fff" });
    lit.node = node.id;
  }
  const loss = link.loss?.node && link.loss.text ? scene.byId.get(link.loss.node) : null;
  if (loss) tag(ctx, `loss ${link.loss.text}`, loss.x, loss.y + loss.h, u, font, { fill: LOSS.fill, color: LOSS.text, line: LOSS.line, below: true });
  return lit;
}
