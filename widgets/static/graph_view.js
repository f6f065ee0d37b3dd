// GraphView front end (plain ES module, no build step). Python makes the DOT and the
// SVG; this file only shows the SVG, zooms (wheel) and pans (drag) it, and reports the
// clicked node in `selected`. Without an SVG (no system Graphviz) it shows the DOT text.

const MIN_SCALE = 0.05;
const MAX_SCALE = 8;
const CLICK_SLOP = 4; // px a pointer may move and still count as a click, not a pan

// Selection key of an SVG node: its `id` ("op:0:3", "var:0:fc_0.w_0"), or, for an SVG
// made without ids, its title ("op_0_3", "var_0_x-40-GRAD") decoded the same way.
function nodeKey(g) {
  if (!g) return null;
  if (/^(op|var):/.test(g.id)) return g.id;
  const title = g.querySelector("title")?.textContent ?? "";
  const m = /^(op|var)_(\d+)_(.*)$/.exec(title);
  if (!m) return null;
  const rest = m[3].replace(/-([0-9a-f]+)-/g, (_, hex) => String.fromCodePoint(parseInt(hex, 16)));
  return `${m[1]}:${m[2]}:${rest}`;
}

function button(text, title, onClick) {
  const b = document.createElement("button");
  b.className = "fs-graph-button";
  b.textContent = text;
  b.title = title;
  b.addEventListener("click", onClick);
  return b;
}

function render({ model, el }) {
  el.classList.add("fs-graph");
  // JupyterLab runs command-mode shortcuts ("d d" deletes the cell) on a focused element
  // inside the cell unless the focus target itself opts out.
  const suppress = (e) => e.target.setAttribute("data-lm-suppress-shortcuts", "true");
  el.addEventListener("focusin", suppress);

  const viewport = document.createElement("div");
  viewport.className = "fs-graph-viewport";
  const canvas = document.createElement("div");
  canvas.className = "fs-graph-canvas";
  viewport.append(canvas);
  const status = document.createElement("span");
  status.className = "fs-graph-status";

  let view = { x: 0, y: 0, k: 1 };
  let fitted = false;
  const apply = () => {
    canvas.style.transform = `translate(${view.x}px, ${view.y}px) scale(${view.k})`;
  };
  const hasSvg = () => canvas.querySelector("svg") !== null;

  function zoomAt(px, py, factor) {
    const low = Math.min(MIN_SCALE, view.k); // a huge graph may be fitted below MIN_SCALE
    const k = Math.min(MAX_SCALE, Math.max(low, view.k * factor));
    view = { x: px - ((px - view.x) * k) / view.k, y: py - ((py - view.y) * k) / view.k, k };
    apply();
  }

  function fit() {
    const svg = canvas.querySelector("svg");
    view = { x: 0, y: 0, k: 1 };
    apply();
    if (!svg) return;
    const box = svg.getBoundingClientRect();
    const vw = viewport.clientWidth;
    const vh = viewport.clientHeight;
    if (!box.width || !box.height || !vw || !vh) return; // not laid out yet
    const k = Math.min(1, vw / box.width, vh / box.height);
    view = { x: (vw - box.width * k) / 2, y: Math.max(0, (vh - box.height * k) / 2), k };
    apply();
    fitted = true;
  }

  function markSelected() {
    const key = model.get("selected");
    for (const g of canvas.querySelectorAll(".fs-selected")) g.classList.remove("fs-selected");
    for (const g of canvas.querySelectorAll("g.node")) {
      if (key && nodeKey(g) === key) g.classList.add("fs-selected");
    }
    status.textContent = key ? `selected: ${key}` : "";
  }

  function draw() {
    const svg = model.get("svg");
    canvas.replaceChildren();
    if (svg) {
      canvas.innerHTML = svg;
      viewport.classList.remove("fs-graph-nosvg");
      if (!fitted) requestAnimationFrame(fit);
    } else {
      const note = document.createElement("div");
      note.className = "fs-graph-note";
      note.textContent = model.get("error") ||
        "System Graphviz (dot) is not installed here, so the graph is shown as DOT text.";
      const pre = document.createElement("pre");
      pre.className = "fs-graph-dot";
      pre.textContent = model.get("dot");
      canvas.append(note, pre);
      viewport.classList.add("fs-graph-nosvg");
    }
    markSelected();
  }

  function drawIfText() {
    if (!model.get("svg")) draw();
  }

  function resize() {
    viewport.style.height = `${model.get("height")}px`;
  }

  function onWheel(e) {
    if (!hasSvg()) return;
    e.preventDefault();
    const r = viewport.getBoundingClientRect();
    zoomAt(e.clientX - r.left, e.clientY - r.top, Math.exp(-e.deltaY * 0.0015));
  }

  let press = null;
  function onDown(e) {
    if (e.button !== 0 || !hasSvg()) return;
    press = {
      cx: e.clientX, cy: e.clientY, x: view.x, y: view.y, moved: false,
      key: nodeKey(e.target.closest?.("g.node")),
    };
    try {
      viewport.setPointerCapture(e.pointerId); // keep panning when the pointer leaves
    } catch {
      // a pointer the browser no longer tracks: panning still works inside the view
    }
  }
  function onMove(e) {
    if (!press) return;
    const dx = e.clientX - press.cx;
    const dy = e.clientY - press.cy;
    if (!press.moved && Math.abs(dx) + Math.abs(dy) <= CLICK_SLOP) return;
    press.moved = true;
    viewport.classList.add("fs-graph-panning");
    view = { ...view, x: press.x + dx, y: press.y + dy };
    apply();
  }
  function onUp() {
    if (!press) return;
    const { moved, key } = press;
    press = null;
    viewport.classList.remove("fs-graph-panning");
    if (moved) return;
    // A click on a node selects it; a click on the background clears the selection.
    model.set("selected", key ?? "");
    model.save_changes();
  }
  function onCancel() {
    press = null;
    viewport.classList.remove("fs-graph-panning");
  }

  const bar = document.createElement("div");
  bar.className = "fs-graph-bar";
  const center = (factor) => () =>
    zoomAt(viewport.clientWidth / 2, viewport.clientHeight / 2, factor);
  bar.append(
    button("+", "zoom in", center(1.25)),
    button("\u2212", "zoom out", center(0.8)),
    button("fit", "fit the graph in view", fit),
    button("1:1", "actual size", () => { view = { x: 0, y: 0, k: 1 }; apply(); }),
    status,
  );
  el.append(bar, viewport);

  viewport.addEventListener("wheel", onWheel, { passive: false });
  viewport.addEventListener("pointerdown", onDown);
  viewport.addEventListener("pointermove", onMove);
  viewport.addEventListener("pointerup", onUp);
  viewport.addEventListener("pointercancel", onCancel);
  // One table of model listeners, so cleanup can never miss one.
  const listeners = [
    ["change:svg", draw], ["change:dot", drawIfText], ["change:error", drawIfText],
    ["change:selected", markSelected], ["change:height", resize],
  ];
  for (const [event, handler] of listeners) model.on(event, handler);
  resize();
  apply();
  draw();

  return () => {
    for (const [event, handler] of listeners) model.off(event, handler);
    el.removeEventListener("focusin", suppress);
  };
}

export default { render };
