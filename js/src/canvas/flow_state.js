// The view trait -> React Flow's node and edge arrays.
//
// Python owns the design; React Flow owns only what it measures and what the user is doing
// (sizes, selection, a drag). A new view is therefore merged by id into the previous
// arrays: React Flow's `measured`, `selected` and `dragging` are kept, and a node whose
// `sig` did not change keeps its previous `data` object, so its memoised component does
// not render again (an edit re-renders only the nodes it changed).

const NODE_TYPES = {
  layer: "layer", op: "layer", mixed: "mixed", group: "zone",
  step_input: "port", memory: "port", output: "port", fold: "fold",
};

// Every handle id a node view draws (inputs, mixed rows, outputs). Kept per view object:
// a patch leaves an unchanged node's view as it was (view_patch.js), so an edit of one
// node at 1,000 layers builds one set, not 1,000.
const HANDLES = new WeakMap();
export function handlesOf(view) {
  let ids = HANDLES.get(view);
  if (!ids) HANDLES.set(view, (ids = handleIds(view)));
  return ids;
}

function handleIds(view) {
  const ids = new Set();
  for (const p of view.inputs ?? []) ids.add(p.handle);
  for (const p of view.outputs ?? []) ids.add(p.handle);
  for (const r of view.rows ?? []) {
    ids.add(r.handle);
    for (const p of r.inputs ?? []) ids.add(p.handle);
  }
  return ids;
}

function rfNode(view, previous) {
  const expandedZone = view.type === "group" && !view.collapsed && view.size;
  const node = {
    id: view.id,
    type: NODE_TYPES[view.type] ?? "layer",
    position: { x: view.position?.[0] ?? 0, y: view.position?.[1] ?? 0 },
    // same sig -> same data object -> the memoised component skips its render
    data: previous && previous.data.view.sig === view.sig ? previous.data : { view },
    selected: previous?.selected ?? false,
  };
  if (view.parent) {
    node.parentId = view.parent;
    node.extent = "parent"; // an inner node stays inside its zone; leaving it is a Python edit
  }
  if (expandedZone) {
    node.style = { width: view.size[0], height: view.size[1] };
    node.width = view.size[0];
    node.height = view.size[1];
    node.zIndex = -1; // zones under their children and the edges that reach them
  }
  if (previous?.measured) node.measured = previous.measured;
  if (previous?.className) node.className = previous.className; // a find's highlight
  if (previous?.dragging) {
    node.dragging = true;
    node.position = previous.position; // a drag in progress wins until it ends
  }
  placed(node);
  return previous && sameFields(node, previous) ? previous : node;
}

// A top-level node is placed by left/top in its style, not by React Flow's
// translate(x, y): a transform gives each node a transform node of its own in Chromium's
// paint, and with it paint chunks that are layerized again on every frame a pan or zoom
// repaints (at 1,000 nodes a third of a pan's main-thread time) and walked by every hit
// test. Its style comes after React Flow's transform, which it sets to none; a node in a
// zone keeps the translate (its position is relative to the zone, React Flow's absolute
// one is not in the node). Set again whenever the position changes (onNodesChange).
export function placed(node) {
  if (node.parentId) return node;
  const { x, y } = node.position;
  if (node.style?.left === x && node.style?.top === y) return node;
  node.style = { ...node.style, transform: "none", left: x, top: y };
  return node;
}

// React Flow's changes applied, each top-level node it moved placed again (placed()).
export function moved(nodes, changes) {
  const ids = new Set(changes.filter((c) => c.type === "position" && c.position).map((c) => c.id));
  if (!ids.size) return nodes;
  return nodes.map((n) => (ids.has(n.id) && !n.parentId ? placed({ ...n }) : n));
}

// Equal field by field (position and style by value): a node or edge a new view did not
// change keeps its object, so React Flow skips it (at 1,000 nodes, re-adopting every node
// on each edit cost more than the edit itself).
const BY_VALUE = { position: ["x", "y"], style: ["width", "height", "left", "top", "transform"], markerEnd: ["type"] };
function sameFields(a, b) {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    const fields = BY_VALUE[key];
    if (fields ? !fields.every((f) => a[key]?.[f] === b[key]?.[f]) : a[key] !== b[key]) return false;
  }
  return true;
}

// view.nodes (parents first, as the protocol promises) merged into `previous`.
export function mergeNodes(viewNodes, previous) {
  const before = new Map(previous.map((n) => [n.id, n]));
  return (viewNodes ?? []).map((v) => rfNode(v, before.get(v.id)));
}

const EDGE_CLASS = {
  data: "fs-edge-data", memory: "fs-edge-memory", boot: "fs-edge-boot",
  static: "fs-edge-static", inlink: "fs-edge-inlink", outlink: "fs-edge-outlink",
};

// view.edges -> React Flow edges. A handle id the end node does not draw (a zone collapsed
// since, say) is dropped, so React Flow attaches the edge to the node's first handle
// instead of refusing to draw it.
export function mergeEdges(viewEdges, viewNodes, previous) {
  const handles = new Map((viewNodes ?? []).map((n) => [n.id, handlesOf(n)]));
  const inZone = new Set((viewNodes ?? []).filter((n) => n.parent).map((n) => n.id));
  const selected = new Set(previous.filter((e) => e.selected).map((e) => e.id));
  const before = new Map(previous.map((e) => [e.id, e]));
  const edges = [];
  for (const e of viewEdges ?? []) {
    if (!handles.has(e.source) || !handles.has(e.target)) continue;
    const kind = e.kind ?? "data";
    const edge = {
      id: e.id,
      source: e.source,
      target: e.target,
      sourceHandle: handles.get(e.source).has(e.sourceHandle) ? e.sourceHandle : null,
      targetHandle: handles.get(e.target).has(e.targetHandle) ? e.targetHandle : null,
      type: kind === "memory" ? "memory" : "data",
      className: `fs-edge ${EDGE_CLASS[kind] ?? "fs-edge-data"}`,
      data: { kind, label: e.label ?? null },
      selected: selected.has(e.id),
      // Edges into an expanded zone's inner nodes are drawn above the zone; every other
      // edge stays under the nodes, so one crossing a node never takes its clicks.
      zIndex: inZone.has(e.source) || inZone.has(e.target) ? 1 : 0,
    };
    const old = before.get(e.id);
    // an unchanged edge keeps its object (its data compared by value: a new one each view)
    edges.push(old && old.data?.kind === kind && old.data?.label === edge.data.label
      && sameFields({ ...edge, data: old.data }, old) ? old : edge);
  }
  return edges;
}

// The same ids in the same order: nothing to tell Python.
export function sameIds(a, b) {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((id) => set.has(id));
}
