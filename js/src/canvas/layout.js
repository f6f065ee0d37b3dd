// Automatic layout with elkjs (layered, left to right), asked for by Python's
// `layout_request`. Expanded zones are laid out with their children in one pass
// (hierarchyHandling INCLUDE_CHILDREN), so edges that enter a zone are routed with it.
// Memory edges are left out: they point backwards by nature and would fold the step.
// The answer is one `move(positions, layout=true)` with every node's position, relative
// to its parent as the view gives them.
import ELK from "elkjs/lib/elk.bundled.js";

const ZONE_PADDING = "[top=44,left=24,bottom=20,right=24]";
const DEFAULT_SIZE = { width: 170, height: 70 };

let elk = null; // one engine per widget module (elk.bundled runs on the main thread)

// React Flow nodes (with their measured sizes) and edges -> {id: [x, y]}.
export async function computeLayout(nodes, edges) {
  elk ??= new ELK();
  const graphs = new Map();
  const root = {
    id: "__root__",
    layoutOptions: {
      "elk.algorithm": "layered", "elk.direction": "RIGHT",
      "elk.hierarchyHandling": "INCLUDE_CHILDREN",
      "elk.layered.spacing.nodeNodeBetweenLayers": "56", "elk.spacing.nodeNode": "28",
      "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF",
      "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
    },
    children: [], edges: [],
  };
  for (const n of nodes) {
    const size = n.measured?.width ? n.measured : DEFAULT_SIZE;
    const isZone = n.type === "zone" && n.style?.width;
    const item = isZone
      ? { id: n.id, children: [], layoutOptions: { "elk.padding": ZONE_PADDING } }
      : { id: n.id, width: size.width, height: size.height };
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
