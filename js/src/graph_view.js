// GraphView front end. Python makes the DOT text and decides who lays it out
// (`resolved_renderer`): "python" sends a finished SVG in `svg`; "browser" leaves `svg`
// empty and this file lays `dot` out with viz.js (WebAssembly Graphviz), which only the
// graph_view_viz.js bundle carries. Either way this file only shows the SVG, zooms (wheel)
// and pans (drag) it, reports clicks in `selected`, and reports back how the graph got on
// screen (`rendered_by`, `render_ms`, `error`).
//
// The toolbar's mode switch sets `mode`; "layers as boxes" and double-clicks (a layer's
// box opens it, an op of an open layer closes it) are requests to Python's collapse /
// expand / toggle_group, sent as messages: which layer a double-click folds is decided
// there, from the program. After each new SVG the highlighted op (class `fs-current`) is
// panned into view if it fell outside, at the same zoom, and tagged with a badge.
//
// Fit: a graph is shown whole only when its labels stay legible (MIN_LABEL_PX); a larger
// one is shown at the legible scale from its top (or around the highlighted op), with the
// minimap as the overview: the wheel pans it, Ctrl+wheel zooms. A resize fits again
// unless the user has moved the view since; the highlighted op stays in view.

import { make } from "./shared/dom.js";
import { keepKeysInside } from "./shared/keyboard.js";
import { sendAction, showMessage } from "./shared/protocol.js";
import { detailsPanel, minimap, searchBox } from "./graph_view_panels.js";
import { button, internalToggle, keyAt, keyOf, layersToggle, modeSwitch } from "./graph_view_toolbar.js";

const MIN_SCALE = 0.05;
const MAX_SCALE = 8;
const CLICK_SLOP = 4; // px a pointer may move and still count as a click, not a pan
const FOLDABLE = /^(op|group):/; // what a double-click can open or close
const REVEAL_MARGIN = 8; // px kept between a revealed node and the viewport's edge
const MIN_LABEL_PX = 12; // node labels are never fitted smaller than this on screen
const PAN_SLACK = 40; // px the graph may be panned beyond its edges
// A new SVG this soon after the user changed what is drawn (mode, layers as boxes) is
// shown whole. A time window, not a flag: a change that draws the same graph sends no
// new SVG, and a flag would then refit the next step's graph instead.
const REFIT_WINDOW_MS = 5000;

// `loadViz`: () => Promise<viz.js instance>, or null in the bundle without viz.js.
export function createGraphView({ loadViz }) {
  function render({ model, el }) {
    el.classList.add("fs-graph");
    const releaseKeys = keepKeysInside(el);

    const viewport = make("div", "fs-graph-viewport");
    const canvas = make("div", "fs-graph-canvas");
    viewport.append(canvas);
    const status = make("span", "fs-graph-status");

    let view = { x: 0, y: 0, k: 1 };
    let fitted = false;
    let refitUntil = 0; // see REFIT_WINDOW_MS
    let drawn = 0; // bumps on every draw, so a slow in-browser layout never shows stale DOT
    let alive = true;
    let moved = false; // the user panned or zoomed since the last fit
    const badge = make("div", "fs-graph-now");
    badge.hidden = true;
    const overview = minimap((sx, sy) => {
      view = clamp({ ...view, x: viewport.clientWidth / 2 - sx * view.k,
        y: viewport.clientHeight / 2 - sy * view.k });
      moved = true;
      apply();
    });
    const updateMinimap = (remeasure = false) =>
      overview.update(canvas.querySelector("svg"), view, viewport, remeasure);
    const apply = () => {
      canvas.style.transform = `translate(${view.x}px, ${view.y}px) scale(${view.k})`;
      placeBadge();
      updateMinimap(false);
    };
    const hasSvg = () => canvas.querySelector("svg") !== null;

    function zoomAt(px, py, factor) {
      const low = Math.min(MIN_SCALE, view.k); // a huge graph may be fitted below MIN_SCALE
      const k = Math.min(MAX_SCALE, Math.max(low, view.k * factor));
      view = { x: px - ((px - view.x) * k) / view.k, y: py - ((py - view.y) * k) / view.k, k };
      moved = true;
      apply();
      updateMinimap(true);
    }

    // On-screen px of a node label at scale 1: its font size in SVG units times px per unit.
    function labelPx(svg, box) {
      const text = svg.querySelector("g.node:not(#legend) text[font-size]");
      const units = svg.viewBox?.baseVal?.width || box.width;
      const size = text ? parseFloat(text.getAttribute("font-size")) : 10;
      return size * (box.width / units);
    }

    // `whole`: the whole graph, however small; else the legible fit (see the header).
    function fit(whole = false) {
      const svg = canvas.querySelector("svg");
      view = { x: 0, y: 0, k: 1 };
      apply();
      if (!svg) return;
      const box = svg.getBoundingClientRect();
      const vw = viewport.clientWidth;
      const vh = viewport.clientHeight;
      if (!box.width || !box.height || !vw || !vh) return; // not laid out yet
      const kFit = Math.min(1, vw / box.width, vh / box.height);
      const kLegible = Math.min(1, MIN_LABEL_PX / labelPx(svg, box));
      const k = whole ? kFit : Math.max(kFit, kLegible);
      const w = box.width * k;
      const h = box.height * k;
      view = { x: (vw - w) / 2, y: h <= vh ? (vh - h) / 2 : 0, k };
      el.dataset.fit = k === kFit ? "whole" : "legible";
      apply();
      fitted = true;
      moved = false;
      if (k !== kFit) {
        // too big to show whole: start at the highlighted op, else at the first op (the
        // top of the program), rather than at the middle of an empty stretch
        const current = canvas.querySelector("g.fs-current");
        const first = canvas.querySelector('g.node[id^="op:"], g.node[id^="group:"]');
        if (current) reveal(current, true);
        else if (first) placeNear(first);
      }
      updateMinimap(true);
    }

    // Keep some of the graph in view: pans stop PAN_SLACK px beyond its edges.
    function clamp(next) {
      const svg = canvas.querySelector("svg");
      if (!svg) return next;
      const box = svg.getBoundingClientRect();
      const vw = viewport.clientWidth;
      const vh = viewport.clientHeight;
      const lo = (room, size) => Math.min(0, room - size) - PAN_SLACK;
      const hi = (room, size) => Math.max(0, room - size) + PAN_SLACK;
      return {
        ...next,
        x: Math.min(hi(vw, box.width), Math.max(lo(vw, box.width), next.x)),
        y: Math.min(hi(vh, box.height), Math.max(lo(vh, box.height), next.y)),
      };
    }

    // Pan (same zoom) so `node` is in view (centred when it was not, or when `centre`).
    function reveal(node, centre = false) {
      if (!node) return;
      const r = node.getBoundingClientRect();
      const v = openArea();
      if (!v.width || !v.height || !r.width) return; // hidden, or not laid out yet
      const m = REVEAL_MARGIN;
      const inside = r.left >= v.left + m && r.right <= v.right - m &&
        r.top >= v.top + m && r.bottom <= v.bottom - m;
      if (inside && !centre) return;
      view = {
        ...view,
        x: view.x + (v.left + v.width / 2) - (r.left + r.width / 2),
        y: view.y + (v.top + v.height / 2) - (r.top + r.height / 2),
      };
      apply();
    }

    // Pan so that `node` is centred across and a little below the top of the view.
    function placeNear(node) {
      const r = node.getBoundingClientRect();
      const v = openArea();
      if (!v.width || !r.width) return;
      const top = Math.min(v.height / 3, 140); // room for the op's inputs above it
      view = clamp({
        ...view,
        x: view.x + (v.left + v.width / 2) - (r.left + r.width / 2),
        y: view.y + (v.top + top) - r.top,
      });
      apply();
    }

    // The part of the viewport not under the details panel: {left, right, top, bottom, width, height}.
    function openArea() {
      const v = viewport.getBoundingClientRect();
      const panel = details.panel;
      if (panel.hidden) return v;
      const right = Math.max(v.left + 40, panel.getBoundingClientRect().left);
      return { left: v.left, right, top: v.top, bottom: v.bottom, width: right - v.left, height: v.height };
    }

    // The highlighted op, or the box it is folded into (or the op standing in for it).
    function revealCurrent(centre = false) {
      reveal(canvas.querySelector("g.fs-current"), centre);
    }

    // The badge over the highlighted op: "now", or why another op stands in for it.
    function placeBadge() {
      const node = canvas.querySelector("g.fs-current");
      badge.hidden = !node;
      if (!node) return;
      const note = model.get("current_note");
      badge.textContent = note ? `\u25b6 ${note}` : "\u25b6 now";
      badge.title = note || "the op the position is at";
      const r = node.getBoundingClientRect();
      const v = viewport.getBoundingClientRect();
      badge.style.left = `${Math.max(2, r.left - v.left)}px`;
      badge.style.top = `${Math.max(2, r.top - v.top - badge.offsetHeight - 2)}px`;
    }

    function placeNewSvg() {
      if (!fitted || performance.now() < refitUntil) {
        refitUntil = 0;
        // the first SVG may not be laid out yet: fit on the next frame
        requestAnimationFrame(() => { fit(); revealCurrent(); });
      } else {
        revealCurrent();
        updateMinimap(true);
      }
    }

    function markSelected() {
      const key = model.get("selected");
      const found = new Set(model.get("found") ?? []);
      let chosen = null;
      for (const g of canvas.querySelectorAll(".fs-selected, .fs-found")) {
        g.classList.remove("fs-selected", "fs-found");
      }
      for (const g of canvas.querySelectorAll("g.node, g.cluster")) {
        const k = keyOf(g);
        if (key && k === key) {
          g.classList.add("fs-selected");
          chosen ??= g;
        }
        if (found.has(k)) g.classList.add("fs-found");
      }
      status.textContent = key ? `selected: ${key}` : "";
      search.show();
      details.draw();
      return chosen;
    }

    // The selected node when it is a search result (the selection Python made for `find`).
    function foundNode() {
      const found = model.get("found") ?? [];
      return found.includes(model.get("selected")) ? canvas.querySelector("g.fs-selected") : null;
    }

    // A search result: pan to it, once the details panel has taken its room.
    function showFound() {
      markSelected();
      updateMinimap(true);
      if (foundNode()) requestAnimationFrame(() => reveal(foundNode()));
    }

    function report(renderedBy, ms, error) {
      el.dataset.renderedBy = renderedBy; // lets a page (or a test) see what happened
      model.set("rendered_by", renderedBy);
      model.set("render_ms", Math.round(ms * 100) / 100);
      model.set("error", error);
      model.save_changes();
    }

    function showSvg(svgText, renderedBy, started) {
      // viz.js starts with an XML prolog and a doctype; HTML wants the <svg> element alone
      const at = svgText.indexOf("<svg");
      canvas.innerHTML = at > 0 ? svgText.slice(at) : svgText;
      canvas.querySelector("svg > title")?.remove(); // "program": no page-wide tooltip
      viewport.classList.remove("fs-graph-nosvg");
      markSelected();
      placeNewSvg();
      report(renderedBy, performance.now() - started, "");
    }

    // No SVG: a note saying why, and the DOT text, so the graph is still readable.
    function showDotText(reason) {
      const note = make("div", "fs-graph-note", reason);
      const pre = make("pre", "fs-graph-dot", model.get("dot"));
      canvas.replaceChildren(note, pre);
      viewport.classList.add("fs-graph-nosvg");
      el.dataset.renderedBy = "";
      markSelected();
    }

    async function layOutInBrowser(ticket) {
      if (!loadViz) {
        // Only while anywidget swaps this small build for the one with viz.js, which
        // Python sends together with the first in-browser graph.
        showDotText("Loading the in-browser Graphviz (viz.js)\u2026");
        return;
      }
      const started = performance.now();
      let viz;
      try {
        viz = await loadViz();
      } catch (err) {
        if (!alive || ticket !== drawn) return;
        const error = `in-browser Graphviz (viz.js) could not start: ${err?.message ?? err}`;
        showDotText(error);
        report("", performance.now() - started, error);
        return;
      }
      if (!alive || ticket !== drawn) return; // a newer draw owns the canvas now
      const layoutStart = performance.now();
      const result = viz.render(model.get("dot"), { format: "svg", engine: "dot" });
      if (result.status === "success") {
        showSvg(result.output, "browser", layoutStart);
      } else {
        const messages = result.errors.map((e) => `${e.level ?? "error"}: ${e.message}`);
        const error = `in-browser Graphviz (viz.js) could not lay out the graph:\n${messages.join("\n")}`;
        showDotText(error);
        report("", performance.now() - layoutStart, error);
      }
    }

    function draw() {
      const ticket = ++drawn;
      if (model.get("resolved_renderer") === "browser") {
        if (!hasSvg()) showDotText("Laying the graph out in the browser\u2026");
        layOutInBrowser(ticket);
      } else if (model.get("svg")) {
        showSvg(model.get("svg"), "python", performance.now());
      } else {
        showDotText(model.get("error") ||
          "System Graphviz (dot) is not installed here, so the graph is shown as DOT text.");
      }
    }

    // Python sends dot, svg, error and resolved_renderer together; one draw per message.
    let queued = false;
    function scheduleDraw() {
      if (queued) return;
      queued = true;
      queueMicrotask(() => {
        queued = false;
        if (alive) draw();
      });
    }

    // Python's reason for having no SVG changed. (This view writes `error` too, but only in
    // browser mode or next to an SVG, where this does nothing, so it never loops.)
    function redrawNote() {
      if (model.get("resolved_renderer") !== "browser" && !model.get("svg")) scheduleDraw();
    }

    function resize() {
      viewport.style.height = `${model.get("height")}px`;
    }

    // Ctrl (or a pinch) + wheel zooms; the wheel pans a graph larger than the view, and
    // scrolls the notebook once the graph can go no further that way.
    function onWheel(e) {
      if (!hasSvg()) return;
      if (e.ctrlKey || e.metaKey) {
        e.preventDefault();
        const r = viewport.getBoundingClientRect();
        zoomAt(e.clientX - r.left, e.clientY - r.top, Math.exp(-e.deltaY * 0.0015));
        return;
      }
      const dx = e.shiftKey ? e.deltaY : e.deltaX;
      const dy = e.shiftKey ? 0 : e.deltaY;
      const next = clamp({ ...view, x: view.x - dx, y: view.y - dy });
      if (Math.abs(next.x - view.x) < 0.5 && Math.abs(next.y - view.y) < 0.5) return;
      e.preventDefault();
      view = next;
      moved = true;
      apply();
    }

    let press = null;
    let pressedKey = null; // the node under the last press: what a double-click acts on
    function onDown(e) {
      if (e.button !== 0 || !hasSvg()) return;
      press = { cx: e.clientX, cy: e.clientY, x: view.x, y: view.y, moved: false, key: keyAt(e.target) };
      pressedKey = press.key;
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
      moved = true;
      viewport.classList.add("fs-graph-panning");
      view = clamp({ ...view, x: press.x + dx, y: press.y + dy });
      apply();
    }
    function onUp() {
      if (!press) return;
      const { moved, key } = press;
      press = null;
      viewport.classList.remove("fs-graph-panning");
      if (moved) return;
      // A click on a node selects it (and opens its details); a click on the background
      // clears the selection.
      if (key) details.ask();
      model.set("selected", key ?? "");
      model.save_changes();
    }
    function onCancel() {
      press = null;
      viewport.classList.remove("fs-graph-panning");
    }
    // The event's target may be the viewport (it captured the pointer): use the press's node.
    function onDoubleClick(e) {
      if (!hasSvg() || !pressedKey || !FOLDABLE.test(pressedKey)) return;
      e.preventDefault();
      sendAction(model, "toggle_group", { key: pressedKey });
    }

    const bar = make("div", "fs-graph-bar");
    const center = (factor) => () =>
      zoomAt(viewport.clientWidth / 2, viewport.clientHeight / 2, factor);
    const refit = () => { refitUntil = performance.now() + REFIT_WINDOW_MS; };
    const modes = modeSwitch(model, refit);
    const layers = layersToggle(model, refit);
    const internal = internalToggle(model);
    const message = make("span", "fs-graph-message");
    const search = searchBox(model);
    const details = detailsPanel(model, () => {
      model.set("selected", "");
      model.save_changes();
    });
    search.onAsk(details.ask);
    bar.append(
      modes.select,
      layers.label,
      internal.label,
      search.box,
      button("+", "zoom in", center(1.25)),
      button("\u2212", "zoom out", center(0.8)),
      button("fit", "fit the graph in view, labels kept legible", () => fit(false)),
      button("all", "the whole graph, however small", () => fit(true)),
      button("1:1", "actual size", () => { view = { x: 0, y: 0, k: 1 }; moved = true; apply(); }),
      status,
      message,
    );
    viewport.append(badge, overview.canvas);
    const body = make("div", "fs-graph-body");
    body.append(viewport, details.panel);
    el.append(bar, body);

    // A narrower (or wider) window: fit again, unless the user moved the view; the
    // highlighted op stays in view either way.
    let lastSize = "";
    const resized = new ResizeObserver(() => {
      const size = `${viewport.clientWidth}x${viewport.clientHeight}`;
      if (size === lastSize || !hasSvg() || !viewport.clientWidth) return;
      lastSize = size;
      if (!moved) fit(false);
      revealCurrent();
      reveal(foundNode());
      updateMinimap(false);
    });
    resized.observe(viewport);

    viewport.addEventListener("wheel", onWheel, { passive: false });
    viewport.addEventListener("pointerdown", onDown);
    viewport.addEventListener("pointermove", onMove);
    viewport.addEventListener("pointerup", onUp);
    viewport.addEventListener("pointercancel", onCancel);
    viewport.addEventListener("dblclick", onDoubleClick);
    // One table of model listeners, so cleanup can never miss one.
    const listeners = [
      ["change:svg", scheduleDraw], ["change:dot", scheduleDraw],
      ["change:resolved_renderer", scheduleDraw],
      ["change:error", redrawNote],
      ["change:selected", showFound], ["change:found", showFound],
      ["change:details", () => details.draw()], ["change:details_auto", () => details.draw()], ["change:current_note", placeBadge],
      ["change:internal_shown", internal.show], ["change:height", resize],
      ["change:mode", modes.show], ["change:mode_labels", modes.fill],
      ["change:collapse_all", layers.show], ["change:collapsed", layers.show],
    ];
    for (const [event, handler] of listeners) model.on(event, handler);
    const releaseMessage = showMessage(model, message);
    resize();
    apply();
    draw();

    return () => {
      alive = false;
      resized.disconnect();
      for (const [event, handler] of listeners) model.off(event, handler);
      releaseMessage();
      releaseKeys();
    };
  }

  return { render };
}

export default createGraphView({ loadViz: null });
