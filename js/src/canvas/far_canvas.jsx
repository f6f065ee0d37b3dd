// Zoomed out on a big design, every node and wire drawn into one <canvas> instead of
// React Flow's node components (app.jsx hands React Flow the nodes hidden meanwhile).
//
// Why: at 1,000 layers, zooming mounted and unmounted hundreds of node components per
// wheel step (React Flow draws only the nodes in view there, each a component with its
// store subscriptions, a ResizeObserver and handles), the longest frames of a zoom. A
// canvas redraws the blocks in view in a few milliseconds per frame whatever the zoom,
// and a move of the view re-renders no React component: the canvas subscribes to the
// store and redraws on the next animation frame.
//
// What a user does with a node still works here: a click selects it (Ctrl/Cmd+click adds
// or removes it), a press and move drags it (or the selection it belongs to), a
// double-click unfolds a fold or collapses an open zone, a right-click opens the node's
// menu (overlays.jsx asks farNodeAt), Shift+drag selects the blocks inside the box, the
// pointer over a block shows its name, detail and error (the pane's title). Wires take
// no gesture here, as on the compact blocks (too thin to aim at): zoom in to use them.
//
// A linked debugger's marks (debug_link.js: the node just run, the zone and its frame,
// the live loss) are drawn on a second canvas over this one, at the same transform: a
// stop of the debugger redraws those few marks, not the 1,000 blocks under them.
import { memo, useEffect, useRef } from "react";
import { useModelState } from "@anywidget/react";
import { useStoreApi } from "@xyflow/react";
import { buildScene, drawLink, drawScene, drawSteps, itemAt, itemsInside, onZoneHead } from "./far_scene.js";
import { placed } from "./flow_state.js";

const DRAG_FROM = 3; // px the pointer moves before a press becomes a drag
// px the canvas reaches past the pane on each side (canvas.css .fs-far-canvas): a pan
// within it moves the drawn canvas (a transform the compositor applies) instead of
// drawing it again; at 1,000 blocks in view, drawing on every frame of a pan cost more
// main-thread time than the pan did before.
const MARGIN = 160;
// While the zoom changes, the canvas drawn at one zoom is scaled by the compositor (a
// transform, as a map does) for up to this factor either way, and drawn again, sharp, at
// the zoom reached once the view has been still for SHARP_AFTER_MS: drawing 1,000 blocks
// with their text on every wheel step was most of a zoom frame's main-thread time.
const SCALE_UP_TO = 1.6;
const SHARP_AFTER_MS = 120;
// A drawing for a move of the view (not for a change of the design) is made off screen a
// few milliseconds per frame, the canvas drawn before following the view meanwhile: a
// whole drawing of 1,000 blocks took 25-40 ms of main thread, a dropped frame on a
// loaded machine wherever it landed in a gesture.
const STEP_BUDGET_MS = 6;
// The marks' canvas lies exactly over the far canvas (canvas.css .fs-far-canvas's box),
// under its own class: what counts or waits on `.fs-far-canvas` finds the one drawing.
const LINK_CANVAS = {
  position: "absolute", left: -MARGIN, top: -MARGIN, width: `calc(100% + ${2 * MARGIN}px)`,
  height: `calc(100% + ${2 * MARGIN}px)`, zIndex: 3, pointerEvents: "none", willChange: "transform", transformOrigin: "0 0",
};
// The hit test of each canvas on the page, by its flow element: overlays.jsx's context
// menu and tests find the node under a point through it.
const HITS = new WeakMap();

const farOf = (root) => {
  const flowEl = root?.querySelector?.(".fs-flow");
  return (flowEl && HITS.get(flowEl)) ?? null;
};
// The id of the node the far canvas draws at (clientX, clientY) inside `root`, or null.
export const farNodeAt = (root, clientX, clientY) => farOf(root)?.hit(clientX, clientY)?.id ?? null;
// The box on screen (client coordinates) of node `id` as the far canvas draws it, or null.
export const farNodeBox = (root, id) => farOf(root)?.box(id) ?? null;

// Selection and position changes of our own, applied to the app's node array.
const selectOnly = (ids) => (prev) => prev.map((n) => {
  const want = ids.has(n.id);
  return !!n.selected === want ? n : { ...n, selected: want };
});

export const FarCanvas = memo(function FarCanvas({ edges, send, setNodes }) {
  const store = useStoreApi();
  const canvasRef = useRef(null);
  const edgesRef = useRef(edges);
  edgesRef.current = edges;
  const rebuildRef = useRef(null); // rebuilds the scene and redraws (set by the effect below)
  const linkCanvasRef = useRef(null);
  const [link] = useModelState("link_state");
  const linkRef = useRef(link);
  linkRef.current = link;
  const relinkRef = useRef(null); // redraws the debugger's marks only (set by the effect below)
  useEffect(() => { relinkRef.current?.(); }, [link]);
  // the edges reach the canvas as a prop only (React Flow is handed none meanwhile)
  useEffect(() => { rebuildRef.current?.(); }, [edges]);

  useEffect(() => {
    performance.mark("fluidscope.canvas.far"); // benchmarks/canvas_browser.py: this front end has it
    const canvas = canvasRef.current;
    const flowEl = canvas.closest(".fs-flow");
    const ctx = canvas.getContext("2d");
    const family = getComputedStyle(canvas).fontFamily;
    const linkCanvas = linkCanvasRef.current;
    const linkCtx = linkCanvas.getContext("2d");
    const codeFamily = getComputedStyle(canvas).getPropertyValue("--jp-code-font-family").trim() || "monospace";
    let scene = buildScene(store.getState().nodeLookup, edgesRef.current);
    let frame = 0;
    let drawnAt = null; // the viewport transform the canvas was drawn at
    let stale = true; // the scene or the canvas's size changed since
    let sharpen = 0; // the timer that draws a scaled canvas again at its zoom
    // The transform that shows the canvas drawn at `drawnAt` at the viewport [tx, ty,
    // zoom], or null where it would leave part of the pane uncovered: a flow point p
    // drawn at canvas px p*z0 + t0 + MARGIN must land on pane px p*zoom + t.
    const placement = (tx, ty, zoom, covering) => {
      const [x0, y0, z0] = drawnAt;
      const k = zoom / z0;
      if (covering && (k > SCALE_UP_TO || k < 1 / SCALE_UP_TO)) return null;
      const dx = tx + MARGIN - k * (x0 + MARGIN), dy = ty + MARGIN - k * (y0 + MARGIN);
      const left = dx - MARGIN, top = dy - MARGIN; // the canvas's corner on the pane
      const w = canvas.clientWidth, h = canvas.clientHeight; // the pane's size + 2 MARGIN
      if (covering && (left > 0 || top > 0 || left + k * w < w - 2 * MARGIN || top + k * h < h - 2 * MARGIN)) return null;
      return k === 1 ? `translate(${tx - x0}px, ${ty - y0}px)` : `translate(${dx}px, ${dy}px) scale(${k})`;
    };
    const sizeOf = () => {
      const ratio = window.devicePixelRatio || 1;
      return { ratio, width: Math.round(canvas.clientWidth * ratio), height: Math.round(canvas.clientHeight * ratio) };
    };
    // both canvases move together: the marks are drawn at the transform the blocks were
    const place = (transform) => {
      canvas.style.transform = transform;
      linkCanvas.style.transform = transform;
    };
    const drawLinkAt = (at) => {
      const { ratio, width, height } = sizeOf();
      if (linkCanvas.width !== width || linkCanvas.height !== height) { linkCanvas.width = width; linkCanvas.height = height; }
      const lit = drawLink(linkCtx, scene, linkRef.current, shifted(at), width, height, ratio, codeFamily);
      linkCanvas.dataset.debugNode = lit.node ?? ""; // what tests read, next to the pixels
      linkCanvas.dataset.debugZone = lit.zone ?? "";
    };
    const shown = (counts, at) => {
      drawnAt = at;
      place("");
      drawLinkAt(at);
      canvas.dataset.nodes = String(scene.items.length);
      canvas.dataset.wires = String(scene.wires.length);
      canvas.dataset.drawnNodes = String(counts.drawnNodes);
      canvas.dataset.drawnWires = String(counts.drawnWires);
    };
    // the canvas's origin is the pane's (-MARGIN, -MARGIN)
    const shifted = ([tx, ty, zoom]) => [tx + MARGIN, ty + MARGIN, zoom];

    // a drawing at the view `at`, off screen, STEP_BUDGET_MS per frame; shown when done
    let job = null;
    const back = document.createElement("canvas");
    const backCtx = back.getContext("2d");
    const step = () => {
      if (!job) return;
      const until = performance.now() + STEP_BUDGET_MS;
      for (;;) {
        const { done, value } = job.steps.next();
        if (done) {
          ctx.setTransform(1, 0, 0, 1, 0, 0);
          ctx.clearRect(0, 0, canvas.width, canvas.height);
          ctx.drawImage(back, 0, 0);
          shown(value, job.at);
          job = null;
          const [tx, ty, zoom] = store.getState().transform; // the view may have moved on meanwhile
          place(placement(tx, ty, zoom, false));
          later();
          return;
        }
        if (performance.now() >= until) break;
      }
      job.frame = requestAnimationFrame(step);
    };
    const startJob = (at) => {
      const { ratio, width, height } = sizeOf();
      if (back.width !== width || back.height !== height) { back.width = width; back.height = height; }
      job = { at, steps: drawSteps(backCtx, scene, shifted(at), width, height, ratio, family) };
      job.frame = requestAnimationFrame(step);
    };
    const stopJob = () => {
      if (job) cancelAnimationFrame(job.frame);
      job = null;
    };

    const draw = () => {
      frame = 0;
      const at = store.getState().transform;
      const [tx, ty, zoom] = at;
      if (!stale && drawnAt) {
        const moved = placement(tx, ty, zoom, true);
        clearTimeout(sharpen);
        if (moved) { // the canvas as drawn covers the pane: moved and scaled by the compositor
          place(moved);
          if (zoom !== drawnAt[2] && !job) sharpen = setTimeout(() => { if (!job) startJob(store.getState().transform); }, SHARP_AFTER_MS);
          return;
        }
        // the view left what was drawn: follow it with the old drawing until the new one is made
        place(placement(tx, ty, zoom, false));
        if (!job) startJob(at);
        return;
      }
      // the design changed (or the canvas's size): drawn at once
      clearTimeout(sharpen);
      stopJob();
      stale = false;
      const { ratio, width, height } = sizeOf();
      if (canvas.width !== width || canvas.height !== height) { canvas.width = width; canvas.height = height; }
      shown(drawScene(ctx, scene, shifted(at), width, height, ratio, family), at);
    };
    const later = () => { if (!frame) frame = requestAnimationFrame(draw); };
    relinkRef.current = () => { if (drawnAt) drawLinkAt(drawnAt); };
    rebuildRef.current = () => { scene = buildScene(store.getState().nodeLookup, edgesRef.current); stale = true; later(); };
    draw();

    // A change of nodes or edges (or React Flow's measuring pass) rebuilds the scene; a
    // move of the view only redraws it. A finished box selection selects what it holds.
    let selecting = null; // the last rectangle of a box selection in progress
    const unsubscribe = store.subscribe((state, before) => {
      if (state.nodeLookup !== before.nodeLookup || state.nodes !== before.nodes) {
        scene = buildScene(state.nodeLookup, edgesRef.current);
        stale = true;
      }
      // the box on screen at the transform of its last change (a selection near the pane's
      // edge pans the view after it)
      if (state.userSelectionRect) {
        if (state.userSelectionRect !== before.userSelectionRect) selecting = { r: state.userSelectionRect, at: state.transform };
      } else if (selecting && before.userSelectionRect) {
        const { r, at: [tx, ty, z] } = selecting;
        selecting = null;
        const inside = itemsInside(scene, (r.x - tx) / z, (r.y - ty) / z, (r.x + r.width - tx) / z, (r.y + r.height - ty) / z);
        if (inside.length) setNodes(selectOnly(new Set(inside)));
      }
      if (state.transform !== before.transform || state.nodes !== before.nodes) later();
    });
    const resized = new ResizeObserver(() => { stale = true; later(); });
    resized.observe(canvas);

    // the pane's box on screen (the canvas's own is offset by MARGIN and by a pan)
    const paneBox = () => flowEl.querySelector(".react-flow").getBoundingClientRect();
    const flowPoint = (clientX, clientY) => {
      const r = paneBox();
      const [tx, ty, z] = store.getState().transform;
      return { x: (clientX - r.left - tx) / z, y: (clientY - r.top - ty) / z };
    };
    const hit = (clientX, clientY) => {
      const r = paneBox();
      if (clientX < r.left || clientY < r.top || clientX > r.right || clientY > r.bottom) return null;
      const p = flowPoint(clientX, clientY);
      return itemAt(scene, p.x, p.y);
    };
    const box = (id) => {
      const it = scene.byId.get(id);
      if (!it) return null;
      const r = paneBox();
      const [tx, ty, z] = store.getState().transform;
      const left = r.left + tx + it.x * z, top = r.top + ty + it.y * z;
      return { left, top, right: left + it.w * z, bottom: top + it.h * z };
    };
    HITS.set(flowEl, { hit, box });
    // only presses on the canvas's own ground (the pane), not on panels, menus or controls
    const onGround = (e) => e.target.classList?.contains("react-flow__pane");

    let press = null; // {item, x, y, drag: null | {ids, from: Map(id -> position)}}
    const onMove = (e) => {
      if (!press) return;
      const dx = e.clientX - press.x, dy = e.clientY - press.y;
      if (!press.drag && Math.hypot(dx, dy) < DRAG_FROM) return;
      const z = store.getState().transform[2];
      if (!press.drag) {
        // the selection it belongs to moves with it; otherwise it alone, selected
        const { nodeLookup } = store.getState();
        const chosen = press.item.selected
          ? [...nodeLookup.values()].filter((n) => n.selected).map((n) => n.id) : [press.item.id];
        press.drag = { ids: new Set(chosen), from: new Map(chosen.map((id) => [id, nodeLookup.get(id)?.position ?? { x: 0, y: 0 }])) };
        if (!press.item.selected) setNodes(selectOnly(press.drag.ids));
      }
      const { from } = press.drag;
      setNodes((prev) => prev.map((n) => {
        const at = from.get(n.id);
        return at ? placed({ ...n, dragging: true, position: { x: at.x + dx / z, y: at.y + dy / z } }) : n;
      }));
    };
    const onUp = (e) => {
      window.removeEventListener("pointermove", onMove, true);
      window.removeEventListener("pointerup", onUp, true);
      const done = press;
      press = null;
      if (!done) return;
      if (done.drag) {
        const z = store.getState().transform[2];
        const dx = (e.clientX - done.x) / z, dy = (e.clientY - done.y) / z;
        const positions = {};
        for (const [id, at] of done.drag.from) positions[id] = [Math.round(at.x + dx), Math.round(at.y + dy)];
        setNodes((prev) => prev.map((n) => (done.drag.from.has(n.id) ? { ...n, dragging: false } : n)));
        send("move", { positions });
        return;
      }
      const id = done.item.id;
      if (done.toggle) {
        setNodes((prev) => prev.map((n) => (n.id === id ? { ...n, selected: !n.selected } : n)));
      } else setNodes(selectOnly(new Set([id])));
    };
    // capture, on the flow element: before React Flow's pane starts a pan or clears the
    // selection, and only when a block is under the pointer (empty canvas pans as ever)
    const onPointerDown = (e) => {
      ours = false;
      if (e.button !== 0 || e.shiftKey || !onGround(e)) return;
      const item = hit(e.clientX, e.clientY);
      if (!item) return;
      ours = true;
      e.stopPropagation();
      press = { item, x: e.clientX, y: e.clientY, drag: null, toggle: e.ctrlKey || e.metaKey };
      window.addEventListener("pointermove", onMove, true);
      window.addEventListener("pointerup", onUp, true);
    };
    // the same press's mousedown and click never reach the pane (its click would clear
    // the selection); decided at the press, since after a drag the block may not yet be
    // under the pointer in the scene (React Flow's store follows a render behind)
    let ours = false;
    const swallowDown = (e) => { if (e.button === 0 && ours) e.stopPropagation(); };
    const swallowClick = (e) => {
      if (e.button === 0 && ours) e.stopPropagation();
      ours = false;
    };
    const onDoubleClick = (e) => {
      if (!onGround(e)) return;
      const item = hit(e.clientX, e.clientY);
      if (!item) return;
      e.stopPropagation();
      if (item.fold) send("unfold", { node: item.id });
      else if (item.zone && (!item.open || onZoneHead(item, flowPoint(e.clientX, e.clientY).y))) send("toggle_zone", { group: item.id });
    };
    // the pointer over a block: its name, detail and error as the pane's tooltip
    let hovered = null;
    const onHover = (e) => {
      if (press || e.buttons || !onGround(e)) return;
      const item = hit(e.clientX, e.clientY);
      if (item === hovered) return;
      hovered = item;
      e.target.title = item ? item.title : "";
      e.target.dataset.farHover = item ? item.id : "";
      e.target.style.cursor = item ? "pointer" : "";
    };
    const capture = { capture: true };
    flowEl.addEventListener("pointerdown", onPointerDown, capture);
    flowEl.addEventListener("mousedown", swallowDown, capture);
    flowEl.addEventListener("click", swallowClick, capture);
    flowEl.addEventListener("dblclick", onDoubleClick, capture);
    flowEl.addEventListener("pointermove", onHover, capture);
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(sharpen);
      stopJob();
      rebuildRef.current = null;
      relinkRef.current = null;
      unsubscribe();
      resized.disconnect();
      HITS.delete(flowEl);
      flowEl.removeEventListener("pointerdown", onPointerDown, capture);
      flowEl.removeEventListener("mousedown", swallowDown, capture);
      flowEl.removeEventListener("click", swallowClick, capture);
      flowEl.removeEventListener("dblclick", onDoubleClick, capture);
      flowEl.removeEventListener("pointermove", onHover, capture);
      window.removeEventListener("pointermove", onMove, true);
      window.removeEventListener("pointerup", onUp, true);
      const pane = flowEl.querySelector(".react-flow__pane");
      if (pane) { pane.title = ""; pane.style.cursor = ""; pane.dataset.farHover = ""; }
    };
  }, [store, send, setNodes]);

  return (
    <>
      <canvas className="fs-far-canvas" ref={canvasRef} />
      <canvas className="fs-far-link" style={LINK_CANVAS} ref={linkCanvasRef} />
    </>
  );
});
