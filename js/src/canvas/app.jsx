// The DesignCanvas front end: palette | canvas | property panel, a toolbar and a
// breadcrumb above, the code pane below. Python owns the design (the `view` trait); this
// file turns gestures into actions (shared/protocol's sendAction) and keeps only what is
// transient: the viewport, a drag in progress, open menus, typed text.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useModel, useModelState } from "@anywidget/react";
import { Background, Controls, MiniMap, ReactFlow, ReactFlowProvider, MarkerType, applyNodeChanges, applyEdgeChanges, useReactFlow, useStore } from "@xyflow/react";
import { keepKeysInside } from "../shared/keyboard.js";
import { sendAction } from "../shared/protocol.js";
import { KINDS, layersAccepting, outputOf, validConnection } from "./connect.js";
import { SendContext } from "./context.js";
import { edgeTypes } from "./edges.jsx";
import { FarCanvas } from "./far_canvas.jsx";
import { FarEdges, drawnFar } from "./far_edges.jsx";
import { useFarDrawing } from "./far_mode.js";
import { mergeEdges, mergeNodes, moved, sameIds } from "./flow_state.js";
import { Inspector } from "./inspector.jsx";
import { commandOf } from "./keys.js";
import { computeLayout, layoutEngine } from "./layout.js";
import { boundsOf, screenBox, wholeViewport } from "./viewport.js";
import { FarContext, nodeTypes, useZoomedOut } from "./nodes.jsx";
import { Overlays } from "./overlays.jsx";
import { DRAG_TYPE, DropSearch, Palette } from "./palette.jsx";
import { Breadcrumb, CodePane, Toolbar } from "./toolbar.jsx";

const EMPTY_VIEW = { revision: 0, path: [], nodes: [], edges: [], summary: "" };
const DEFAULT_EDGE = { markerEnd: { type: MarkerType.ArrowClosed, width: 14, height: 14 } };
// hidden nodes count: the far canvas draws them (far_mode.js)
const FIT = { padding: 0.05, maxZoom: 1.1, includeHiddenNodes: true };
const NO_EDGES = [];
const WIDE = 1000; // px: from this canvas width the code pane goes beside the graph
const PRO = { hideAttribution: false };
// Layout answers already sent, per widget model: a second view of the same widget (or a
// re-render) does not lay the design out again over the user's moves.
const ANSWERED = (globalThis[Symbol.for("fluidscope.canvas.layout")] ??= new Map());

// From this many nodes on, only the nodes in view are drawn (React Flow's
// onlyRenderVisibleElements): zoomed in on a 1,000-node design a page of 20,000 elements
// shrinks to the few dozen nodes on screen, and every restyle, layout and paint after an
// edit or an undo with it; zoomed out to the whole design, every node is in view and
// drawn. (Drawing every node while zoomed out, compact, was tried: a zoom out across the
// compact threshold then mounted all 1,000 in one frame, 0.9 s, where culling mounts
// them a few steps at a time.) A node is drawn once before any view asks (React Flow
// draws every node not yet measured), so each has a size.
const DRAW_VISIBLE_FROM = 300;

const MINIMAP_SIZE = { width: 160, height: 100 };
const MINIMAP_BACK_MS = 400; // after the user's last move of the view
const MINIMAP_COLOR = (n) => (n.data?.view?.error ? "#d33" : n.type === "zone" ? "#e8e1f5" : "#b9c6d8");

function useTrait(key, fallback) {
  const [value] = useModelState(key);
  return value ?? fallback;
}

// Absolute flow position of `node` (React Flow keeps it in the internals).
function absolute(flow, id) {
  return flow.getInternalNode(id)?.internals.positionAbsolute ?? { x: 0, y: 0 };
}

function Canvas({ rootRef }) {
  const model = useModel();
  const flow = useReactFlow();
  const view = useTrait("view", EMPTY_VIEW);
  const palette = useTrait("palette", []);
  const selectedTrait = useTrait("selected", []);
  const inspector = useTrait("inspector", {});
  const message = useTrait("message", "");
  const status = useTrait("status", "");
  const code = useTrait("code", "");
  const canUndo = useTrait("can_undo", false);
  const canRedo = useTrait("can_redo", false);
  const layoutRequest = useTrait("layout_request", 0);
  const codeVisible = useTrait("code_visible", false);
  const found = useTrait("found", {});
  const [nodes, setNodes] = useState([]);
  const [edges, setEdges] = useState([]);
  const [dropSearch, setDropSearch] = useState(null);
  const viewsById = useRef(new Map());
  const pointer = useRef(null); // last pointer position in flow coordinates (for paste)
  // 0: not fitted yet; 1: fitted on estimated sizes; 2: done (measured, or the user moved
  // the view, or the canvas was first seen empty: a first drop must land where it fell)
  const fitted = useRef(0);
  const userMoved = useRef(false);
  const relayout = useRef(0); // the revision before a set_pane whose new layout is awaited
  const paneSent = useRef(false);
  const [wide, setWide] = useState(false);
  const far = useZoomedOut(); // zoomed out: zone heads and fold titles in large type too
  // the minimap only while part of the design is out of view (over a whole design it
  // would only cover nodes and the handles of a zone's right border), judged on the
  // nodes' sizes as drawn: after a fit of full-size nodes it covered the bottom-right one
  const bounds = useMemo(() => boundsOf(nodes, null), [nodes]);
  const whole = useStore(useCallback((s) => {
    if (!bounds) return true;
    const [tx, ty, z] = s.transform;
    return bounds.x * z + tx >= 0 && bounds.y * z + ty >= 0
      && (bounds.x + bounds.width) * z + tx <= s.width && (bounds.y + bounds.height) * z + ty <= s.height;
  }, [bounds]));

  // the mark lets benchmarks/canvas_browser.py time a press to its message leaving the page
  const send = useCallback((action, args) => {
    performance.mark("fluidscope.canvas.send");
    sendAction(model, action, args);
  }, [model]);

  // view -> nodes and edges, merged so React Flow keeps its measurements and selection.
  // The marks let benchmarks/canvas_browser.py tell the kernel's time from the page's.
  useEffect(() => {
    performance.mark("fluidscope.canvas.view");
    viewsById.current = new Map(view.nodes.map((n) => [n.id, n]));
    // Python's selection goes only on nodes new to the page: one already shown keeps what
    // the page has, since a click the kernel has not yet echoed is newer than this view
    // (a view arriving between a click and the Delete pressed after it must not move the
    // selection back and delete the node selected before). Python's own selection changes
    // arrive through the selected trait (the effect below).
    const chosen = new Set(model.get("selected") ?? []);
    const merged = (prev) => {
      const shown = new Set(prev.map((n) => n.id));
      return mergeNodes(view.nodes, prev).map((n) =>
        (shown.has(n.id) || n.selected === chosen.has(n.id) ? n : { ...n, selected: chosen.has(n.id) }));
    };
    // the layout Python made for this pane's real size (set_pane): show it whole too
    if (relayout.current && view.revision > relayout.current) {
      relayout.current = 0;
      if (!userMoved.current) fitted.current = 0;
    }
    // the first view: fit on the sizes nodes will at least have, before React Flow mounts
    // them, so a big design's first paint is already its compact whole
    const pane = rootRef.current?.querySelector(".fs-flow");
    if (fitted.current === 0 && pane?.offsetWidth && pane.offsetHeight) {
      const bounds = boundsOf(merged([]));
      if (bounds) {
        flow.setViewport(wholeViewport(bounds, pane.offsetWidth, pane.offsetHeight));
        fitted.current = 1;
      } else fitted.current = 2;
    }
    setNodes(merged);
    setEdges((prev) => mergeEdges(view.edges, view.nodes, prev));
    // a frame later the view is on screen: say so, and the kernel's full garbage
    // collection after a paused edit runs now, while the person reads the result, not
    // while the page draws (widgets/canvas/collector.py); not marked as a send
    let timer = null;
    const frame = requestAnimationFrame(() => { timer = setTimeout(() => sendAction(model, "drawn"), 0); });
    return () => { cancelAnimationFrame(frame); clearTimeout(timer); };
  }, [view, model, flow, rootRef]);

  useEffect(() => { performance.mark("fluidscope.canvas.drawn"); }, [nodes]);

  // Python's selection (after add_node, paste, select from Python) -> React Flow
  useEffect(() => {
    const chosen = new Set(selectedTrait);
    setNodes((prev) => prev.map((n) => (n.selected === chosen.has(n.id) ? n : { ...n, selected: chosen.has(n.id) })));
  }, [selectedTrait]);

  // fit once the canvas is first visible with nodes (a hidden notebook cell has no size),
  // and again when the zone being shown changes; never on ordinary edits
  const pathKey = (view.path ?? []).map((p) => p.id).join("/");
  const pathShown = useRef(pathKey);
  useEffect(() => {
    if (pathShown.current !== pathKey) fitted.current = 0;
    pathShown.current = pathKey;
  }, [pathKey]);
  // Reads the pane's size, so it runs from a ResizeObserver (after layout) and, while a fit
  // or the pane's report is pending, after new nodes; never after an ordinary edit, where
  // reading offsetWidth would force a layout of every node (1,000 of them).
  const nodesNow = useRef(nodes);
  nodesNow.current = nodes;
  const tryFit = useCallback(() => {
    const el = rootRef.current;
    if (!el) return;
    const shown = nodesNow.current;
    setWide(el.offsetWidth >= WIDE);
    const pane = el.querySelector(".fs-flow");
    if (!paneSent.current && shown.length && pane?.offsetWidth && pane.offsetHeight) {
      // once: the default layout was shaped for a typical pane; this one may differ
      paneSent.current = true;
      const [w, h] = model.get("view")?.pane ?? [0, 0];
      if (Math.abs(pane.offsetWidth - w) > 0.2 * pane.offsetWidth || Math.abs(pane.offsetHeight - h) > 0.2 * pane.offsetHeight) {
        relayout.current = model.get("view")?.revision ?? 0;
        send("set_pane", { width: pane.offsetWidth, height: pane.offsetHeight });
      }
    }
    if (fitted.current === 2 || !pane?.offsetWidth || !pane.offsetHeight) return;
    if (!shown.length) { fitted.current = 2; return; } // seen empty: drops land as dropped
    if (!shown.every((n) => n.measured?.width)) return; // after React Flow measured them
    fitted.current = 2;
    const bounds = boundsOf(shown);
    requestAnimationFrame(() => flow.setViewport(wholeViewport(bounds, pane.offsetWidth, pane.offsetHeight)));
  }, [flow, rootRef, model, send]);
  useEffect(() => {
    const seen = new ResizeObserver(tryFit);
    if (rootRef.current) seen.observe(rootRef.current);
    return () => seen.disconnect();
  }, [tryFit, rootRef]);
  useEffect(() => {
    if (fitted.current !== 2 || (!paneSent.current && nodes.length)) tryFit();
  }, [nodes, tryFit]);

  // the node being edited stays in view when the property panel opens and narrows the pane,
  // and comes into view when it was not (selected from Python, or by a find elsewhere)
  const editing = inspector?.id;
  useEffect(() => {
    if (!editing) return undefined;
    const frame = requestAnimationFrame(() => requestAnimationFrame(() => {
      const pane = rootRef.current?.querySelector(".fs-flow");
      if (!pane) return;
      const p = pane.getBoundingClientRect();
      const b = screenBox(flow, pane, editing);
      if (!b) return;
      const margin = 16;
      let dx = b.right > p.right - margin ? p.right - margin - b.right : b.left < p.left + margin ? p.left + margin - b.left : 0;
      let dy = b.bottom > p.bottom - margin ? p.bottom - margin - b.bottom : b.top < p.top + margin ? p.top + margin - b.top : 0;
      if (dx || dy) {
        const v = flow.getViewport();
        flow.setViewport({ x: v.x + dx, y: v.y + dy, zoom: v.zoom }, { duration: 150 });
      }
    }));
    return () => cancelAnimationFrame(frame);
  }, [editing, flow, rootRef]);

  // a find (Python's `found`): highlight its matches, pan to the one it points at
  useEffect(() => {
    const ids = new Set(found?.ids ?? []);
    setNodes((prev) => prev.map((n) => {
      const want = ids.has(n.id) ? "fs-found" : undefined;
      return n.className === want ? n : { ...n, className: want };
    }));
    const focus = found?.focus && flow.getInternalNode(found.focus);
    if (!focus) return;
    const at = focus.internals.positionAbsolute;
    const w = focus.measured?.width ?? 0, h = focus.measured?.height ?? 0;
    fitted.current = 2;
    flow.setCenter(at.x + w / 2, at.y + h / 2, { zoom: Math.max(flow.getZoom(), 0.75), duration: 250 });
  }, [found, flow]);

  // layout_request -> elk -> one move carrying every position
  useEffect(() => {
    const key = model.model_id ?? model.cid ?? "widget";
    if (!layoutRequest || ANSWERED.get(key) === layoutRequest || !nodes.length) return;
    if (!nodes.every((n) => n.measured?.width || n.type === "zone")) return; // wait for sizes
    ANSWERED.set(key, layoutRequest);
    const pane = rootRef.current?.querySelector(".fs-flow");
    const aspect = pane?.offsetHeight ? pane.offsetWidth / pane.offsetHeight : 1.8;
    layoutEngine(model, send).then((elk) => computeLayout(elk, nodes, edges, aspect)).then((positions) => {
      fitted.current = 0; // show the new arrangement whole
      send("move", { positions, layout: true });
    }).catch((err) => console.error("fluidscope canvas: layout failed", err));
  }, [layoutRequest, nodes, edges, model, send, rootRef]);

  const viewOf = useCallback((id) => viewsById.current.get(id), []);
  const isValidConnection = useCallback((c) => validConnection(c, viewOf), [viewOf]);

  const onNodesChange = useCallback((changes) => {
    // removal is ours (keys), never React Flow's; everything else is local until a drag ends
    const kept = changes.filter((c) => c.type !== "remove");
    setNodes((prev) => moved(applyNodeChanges(kept, prev), kept));
  }, []);
  const onEdgesChange = useCallback((changes) => {
    setEdges((prev) => applyEdgeChanges(changes.filter((c) => c.type !== "remove"), prev));
  }, []);

  // one move with every node the drag carried, at its end
  const onNodeDragStop = useCallback((_event, _node, dragged) => {
    const positions = {};
    for (const n of dragged) positions[n.id] = [Math.round(n.position.x), Math.round(n.position.y)];
    send("move", { positions });
  }, [send]);

  // React Flow reports the selection again when only the edges' selection or its store
  // changed (after a group, the box-selected layers come back once the new view is in
  // its store, after Python already selected the group): only a change of the nodes it
  // reported last is the user's, so a stale report cannot undo Python's selection.
  const reported = useRef([]);
  const onSelectionChange = useCallback(({ nodes: picked }) => {
    const ids = picked.map((n) => n.id);
    const changed = !sameIds(ids, reported.current);
    reported.current = ids;
    if (changed && !sameIds(ids, model.get("selected") ?? [])) send("select", { ids });
  }, [model, send]);

  const onConnect = useCallback((c) => {
    const source = viewOf(c.source);
    const out = outputOf(source, c.sourceHandle);
    send("connect", { source: c.source, source_index: out?.index ?? 0, target: c.target, handle: c.targetHandle });
  }, [send, viewOf]);

  // highlight the handles that take the kind being dragged
  const onConnectStart = useCallback((_e, { nodeId, handleId, handleType }) => {
    const kind = handleType === "source" ? outputOf(viewOf(nodeId), handleId)?.kind : null;
    const el = rootRef.current;
    el.classList.add("fs-connecting");
    if (kind) el.classList.add(`fs-connecting-${kind}`);
  }, [viewOf, rootRef]);

  // a link dropped on empty canvas opens the search for layers taking its kind
  const onConnectEnd = useCallback((event, state) => {
    const el = rootRef.current;
    el.classList.remove("fs-connecting", ...KINDS.map((k) => `fs-connecting-${k}`));
    if (state.isValid || state.toNode || !state.fromNode || state.fromHandle?.type !== "source") return;
    const point = "changedTouches" in event ? event.changedTouches[0] : event;
    const box = el.querySelector(".fs-flow").getBoundingClientRect();
    const source = viewOf(state.fromNode.id);
    const out = outputOf(source, state.fromHandle.id);
    const at = flow.screenToFlowPosition({ x: point.clientX, y: point.clientY });
    setDropSearch({
      left: point.clientX - box.left, top: point.clientY - box.top, kind: out?.kind ?? null,
      source: source.id, sourceIndex: out?.index ?? 0, group: source.parent ?? null,
      x: at.x - (source.parent ? absolute(flow, source.parent).x : 0),
      y: at.y - (source.parent ? absolute(flow, source.parent).y : 0),
    });
  }, [flow, viewOf, rootRef]);

  // the innermost expanded zone under a flow point, with the point relative to it
  const zoneAt = useCallback((point) => {
    let found = null;
    for (const n of flow.getNodes()) {
      if (n.type !== "zone" || !n.style?.width) continue;
      const p = absolute(flow, n.id);
      const inside = point.x >= p.x && point.y >= p.y && point.x <= p.x + n.style.width && point.y <= p.y + n.style.height;
      if (inside && (!found || n.parentId === found.id)) found = n;
    }
    if (!found) return { group: null, x: point.x, y: point.y };
    const p = absolute(flow, found.id);
    return { group: found.id, x: point.x - p.x, y: point.y - p.y };
  }, [flow]);

  const addAt = useCallback((layer, point) => {
    const { group, x, y } = zoneAt(point);
    send("add_node", { layer, x: Math.round(x), y: Math.round(y), group });
  }, [send, zoneAt]);

  const onDrop = useCallback((e) => {
    const layer = e.dataTransfer.getData(DRAG_TYPE);
    if (!layer) return;
    e.preventDefault();
    addAt(layer, flow.screenToFlowPosition({ x: e.clientX, y: e.clientY }));
  }, [addAt, flow]);

  // double-click in the palette: the middle of what is shown, nudged so repeats do not stack
  const nudge = useRef(0);
  const onPaletteAdd = useCallback((layer) => {
    const box = rootRef.current.querySelector(".fs-flow").getBoundingClientRect();
    const center = flow.screenToFlowPosition({ x: box.left + box.width / 2, y: box.top + box.height / 2 });
    const step = (nudge.current = (nudge.current + 1) % 8) * 24;
    addAt(layer, { x: center.x - 80 + step, y: center.y - 30 + step });
  }, [addAt, flow, rootRef]);

  const onNodeDoubleClick = useCallback((e, node) => {
    if (node.type === "zone" && e.target.closest(".fs-zone-head")) send("toggle_zone", { group: node.id });
    if (node.type === "fold") send("unfold", { node: node.id });
  }, [send]);

  const onKeyDown = useCallback((e) => {
    const command = commandOf(e);
    if (!command) return;
    e.preventDefault();
    const ids = flow.getNodes().filter((n) => n.selected).map((n) => n.id);
    const edgeIds = flow.getEdges().filter((ed) => ed.selected).map((ed) => ed.id);
    if (command === "undo" || command === "redo") send(command);
    else if (command === "copy" && ids.length) send("copy", { ids });
    else if (command === "duplicate" && ids.length) send("duplicate", { ids });
    else if (command === "group" && ids.length) send("group", { ids });
    else if (command === "paste") {
      const at = pointer.current ?? { x: 40, y: 40 };
      send("paste", { x: Math.round(at.x), y: Math.round(at.y) });
    } else if (command === "remove") {
      if (ids.length) send("remove", { ids });
      for (const edge of edgeIds) send("disconnect", { edge });
    } else if (command === "select_all") send("select", { ids: flow.getNodes().map((n) => n.id) });
    else if (command === "deselect") { send("select", { ids: [] }); setDropSearch(null); }
    else if (command === "find") rootRef.current?.querySelector(".fs-find")?.focus();
  }, [flow, send, rootRef]);

  // the pane swallows mousedown (d3-zoom prevents its default), so a click on empty canvas
  // would leave the focus in a notebook cell and the canvas's keys would go there. The
  // focus goes to an empty element in the pane, not the pane: JupyterLab's stylesheets
  // hold `:focus ::selection` rules, for which Chromium restyles every descendant of an
  // element that gains or loses the focus (the pane: 10,000-20,000 elements at 1,000 nodes).
  // A press on empty canvas (a pan, or a box selection) also captures the pointer: Chromium
  // then sends the drag's moves to the pane without hit-testing the page under the
  // pointer, which at 1,000 nodes cost more than the rest of each frame of a pan.
  const keysRef = useRef(null);
  const onPointerDownCapture = useCallback((e) => {
    const pane = e.currentTarget;
    if (!pane.contains(document.activeElement)) keysRef.current?.focus({ preventScroll: true });
    if (e.button === 0 && e.target.classList?.contains("react-flow__pane")) e.target.setPointerCapture?.(e.pointerId);
  }, []);

  // the user moved the view: no later fit takes it from them. While a gesture of theirs
  // moves it, and MINIMAP_BACK_MS after, the minimap is not drawn (canvas.css .fs-moving):
  // it would redraw its mask and restyle its svg on every frame. A class, not a re-render:
  // under load a wheel's steps come more than d3's 150 ms apart, each one a gesture, and
  // mounting the minimap's thousand nodes again between them cost more than it saved.
  // For the same reason the minimap is mounted or unmounted (the design leaving the view
  // or coming back whole, `whole`) only once the view is still: a zoom in from the whole
  // design mounted its 1,000 nodes in the middle of the gesture, its longest frame.
  // A move from the minimap itself (no event) keeps it.
  const movedLast = useRef(0);
  const moving = useRef(false);
  const wholeNow = useRef(whole);
  wholeNow.current = whole;
  const [miniShown, setMiniShown] = useState(!whole);
  useEffect(() => { if (!moving.current) setMiniShown(!whole); }, [whole]);
  useEffect(() => () => clearTimeout(movedLast.current), []);
  const onMoveStart = useCallback((event) => {
    if (!event) return;
    fitted.current = 2;
    userMoved.current = true;
    moving.current = true;
    clearTimeout(movedLast.current);
    rootRef.current?.classList.add("fs-moving");
  }, [rootRef]);
  const releaseNow = useRef(() => {});
  const onMoveEnd = useCallback(() => {
    clearTimeout(movedLast.current);
    movedLast.current = setTimeout(() => {
      moving.current = false;
      rootRef.current?.classList.remove("fs-moving");
      setMiniShown(!wholeNow.current);
      releaseNow.current();
    }, MINIMAP_BACK_MS);
  }, [rootRef]);
  const isMoving = useCallback(() => moving.current, []);

  const onPointerMove = useCallback((e) => {
    pointer.current = flow.screenToFlowPosition({ x: e.clientX, y: e.clientY });
  }, [flow]);

  const toggleCode = useCallback(() => send("show_code", { visible: !codeVisible }), [codeVisible, send]);
  const groupSelection = useCallback(() => {
    const ids = flow.getNodes().filter((n) => n.selected).map((n) => n.id);
    if (ids.length) send("group", { ids });
  }, [flow, send]);
  const fit = useCallback(() => flow.fitView({ ...FIT, duration: 200 }), [flow]);

  // a layout waits for every node's measured size: until it is sent, every node is drawn
  const layoutPending = !!layoutRequest && ANSWERED.get(model.model_id ?? model.cid ?? "widget") !== layoutRequest;
  const drawVisibleOnly = nodes.length >= DRAW_VISIBLE_FROM && !layoutPending;
  // zoomed out on a big design, its nodes and wires are drawn by one canvas (far_mode.js,
  // far_canvas.jsx); until every node was measured once, the top-level wires by one svg
  // layer (far_edges.jsx) and the nodes by React Flow as compact blocks
  const { drawn: farDrawn, flowNodes, release } = useFarDrawing({
    nodes, big: drawVisibleOnly, far, pathKey, flow, isMoving });
  releaseNow.current = release;
  const [flowEdges, farEdges] = useMemo(() => {
    if (farDrawn) return [NO_EDGES, null];
    if (!(drawVisibleOnly && far)) return [edges, null];
    return [edges.filter((e) => !drawnFar(e)), edges.filter(drawnFar)];
  }, [edges, drawVisibleOnly, far, farDrawn]);

  const acceptingEntries = useMemo(
    () => (dropSearch ? layersAccepting(palette, dropSearch.kind) : []), [dropSearch, palette]);
  const selectedCount = nodes.reduce((k, n) => k + (n.selected ? 1 : 0), 0);

  return (
    <SendContext.Provider value={send}>
    <FarContext.Provider value={far}>
      <Toolbar canUndo={canUndo} canRedo={canRedo} codeVisible={codeVisible} canGroup={selectedCount > 0}
        onFit={fit} onToggleCode={toggleCode} onGroup={groupSelection} found={found} />
      <Breadcrumb path={view.path} summary={view.summary} status={status} />
      {message ? <div className="fs-message" role="alert">{message}</div> : null}
      <div className="fs-body" onKeyDown={onKeyDown}>
        <Palette entries={palette} onAdd={onPaletteAdd} />
        <div className={`fs-flow${far ? " fs-far" : ""}`} tabIndex={0} onDragOver={(e) => { e.preventDefault(); e.dataTransfer.dropEffect = "copy"; }}
          onDrop={onDrop} onPointerMove={onPointerMove} onPointerDownCapture={onPointerDownCapture}>
          <div className="fs-keys" tabIndex={-1} ref={keysRef} />
          <ReactFlow nodes={flowNodes} edges={flowEdges} nodeTypes={nodeTypes} edgeTypes={edgeTypes}
            onNodesChange={onNodesChange} onEdgesChange={onEdgesChange}
            onNodeDragStop={onNodeDragStop} onSelectionChange={onSelectionChange}
            onConnect={onConnect} onConnectStart={onConnectStart} onConnectEnd={onConnectEnd}
            isValidConnection={isValidConnection} onNodeDoubleClick={onNodeDoubleClick}
            onPaneClick={() => setDropSearch(null)} onMoveStart={onMoveStart} onMoveEnd={onMoveEnd}
            defaultEdgeOptions={DEFAULT_EDGE} deleteKeyCode={null} selectionKeyCode="Shift"
            multiSelectionKeyCode={["Meta", "Control"]} selectionOnDrag={false} panOnDrag
            zoomOnScroll={false} zoomOnPinch panOnScroll={false} preventScrolling={false}
            zoomOnDoubleClick={false} minZoom={0.05} maxZoom={2.5} onlyRenderVisibleElements={drawVisibleOnly}
            proOptions={PRO}>
            <Background gap={16} size={1} />
            {farEdges ? <FarEdges edges={farEdges} /> : null}
            {farDrawn ? <FarCanvas edges={edges} send={send} setNodes={setNodes} /> : null}
            {/* the minimap draws only nodes React Flow draws: none while the far canvas does */}
            {miniShown && !farDrawn ? <MiniMap pannable zoomable nodeColor={MINIMAP_COLOR} nodeStrokeWidth={2} style={MINIMAP_SIZE} /> : null}
            <Controls showInteractive={false} orientation="horizontal" />
          </ReactFlow>
          {dropSearch ? (
            <DropSearch at={dropSearch} entries={acceptingEntries} onClose={() => setDropSearch(null)}
              onPick={(layer) => {
                send("add_node", { layer, x: Math.round(dropSearch.x), y: Math.round(dropSearch.y),
                  group: dropSearch.group, source: dropSearch.source, source_index: dropSearch.sourceIndex });
                setDropSearch(null);
              }} />
          ) : null}
        </div>
        {/* the panel takes room only while there is something to edit: the canvas keeps its width */}
        {inspector?.id || selectedCount > 1
          ? <Inspector inspector={inspector} message={message} count={selectedCount} palette={palette} />
          : null}
        {codeVisible && wide ? <CodePane code={code} beside /> : null}
      </div>
      {codeVisible && !wide ? <CodePane code={code} /> : null}
    </FarContext.Provider>
    </SendContext.Provider>
  );
}

export function App() {
  const height = useTrait("height", 560);
  const rootRef = useRef(null);
  useEffect(() => keepKeysInside(rootRef.current), []);
  return (
    <div className="fs-canvas" ref={rootRef} style={{ height: `${height}px` }} tabIndex={-1}>
      <ReactFlowProvider>
        <Canvas rootRef={rootRef} />
        <Overlays rootRef={rootRef} />
      </ReactFlowProvider>
    </div>
  );
}
