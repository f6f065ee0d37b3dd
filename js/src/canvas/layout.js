// Automatic layout with elkjs (layered, left to right, with the nodes' measured sizes),
// asked for by Python's `layout_request`. Expanded zones are laid out with their children
// in one pass (hierarchyHandling INCLUDE_CHILDREN), so edges that enter a zone are routed
// with it; a design without an expanded zone wraps a long chain into rows shaped like
// the pane (elk's MULTI_EDGE wrapping), as the default layout does.
// Memory edges are left out: they point backwards by nature and would fold the step.
// The answer is one `move(positions, layout=true)` with every node's position, relative
// to its parent as the view gives them.
//
// elkjs is 1.4 MB, more than React Flow and the app together, and most sessions never
// ask for a layout: it is not in the canvas's bundle. The first layout asks Python for it
// (the `layout_engine` action answers with widgets/static/design_canvas_layout.js as a
// binary message), and it is imported from a blob: URL, which works offline and inside
// anywidget's own blob:-loaded module, where a relative import would resolve to nothing.
import { COMPACT_SIZE } from "./viewport.js";

const ZONE_PADDING = "[top=44,left=24,bottom=20,right=24]";
const ENGINE = Symbol.for("fluidscope.canvas.elk");

// The elk engine, loaded once per page: asks `model`'s Python side for it the first time.
export function layoutEngine(model, send) {
  const cache = globalThis;
  cache[ENGINE] ??= new Promise((resolve, reject) => {
    const onMessage = (msg, buffers) => {
      if (msg?.kind !== "layout_engine") return;
      model.off("msg:custom", onMessage);
      const url = URL.createObjectURL(new Blob([buffers[0]], { type: "text/javascript" }));
      import(/* a blob: URL, never a network one */ url)
        .then((module) => resolve(new module.default()))
        .catch(reject)
        .finally(() => URL.revokeObjectURL(url));
    };
    model.on("msg:custom", onMessage);
    send("layout_engine");
  });
  cache[ENGINE].catch(() => { delete cache[ENGINE]; }); // a later layout asks again
  return cache[ENGINE];
}

// React Flow nodes (with their measured sizes) and edges -> {id: [x, y]}.
export async function computeLayout(elk, nodes, edges, aspect) {
  const graphs = new Map();
  const zones = nodes.some((n) => n.type === "zone" && n.style?.width);
  const root = {
    id: "__root__",
    layoutOptions: {
      "elk.algorithm": "layered", "elk.direction": "RIGHT",
      "elk.hierarchyHandling": "INCLUDE_CHILDREN",
      "elk.layered.spacing.nodeNodeBetweenLayers": "56", "elk.spacing.nodeNode": "28",
      "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF",
      "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
      ...(zones ? {} : { "elk.layered.wrapping.strategy": "MULTI_EDGE", "elk.aspectRatio": String(aspect) }),
    },
    children: [], edges: [],
  };
  for (const n of nodes) {
    const size = n.measured?.width ? n.measured : COMPACT_SIZE;
    const isZone = n.type === "zone" && n.style?.width;
    const item = isZone
      ? { id: n.id, children: [], layoutOptions: { "elk.padding": ZONE_PADDING } }
      : { id: n.id, width: size.width, height: Math.max(size.height, COMPACT_SIZE.height) };
    graphs.set(n.id, item);
    (graphs.get(n.parentId) ?? root).children.push(item);
  }
  for (const e of edges) {
    if (e.data?.kind === "memory" || !graphs.has(e.source) || !graphs.has(e.target)) continue;
    root.edges.push({ id: e.id, sources: [e.source], targets: [e.target] });
  }
  const laid = await elk.layout(root);
  const positions = {};
  const walk = (item) => {
    for (const child of item.children ?? []) {
      positions[child.id] = [Math.round(child.x), Math.round(child.y)];
      walk(child);
    }
  };
  walk(laid);
  return positions;
}
