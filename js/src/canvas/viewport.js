// The first view of a design: the whole of it (Netron, TensorBoard and Model Explorer open
// a model whole; a first view showing 4 of 121 layers tells nothing). A design too big to
// read in full detail at that zoom draws its nodes as compact blocks (nodes.jsx, semantic
// zoom), and the default layout (widgets/canvas/layout.py) wraps long chains so that
// the block's labels stay legible at the fit of a 200-layer design.
const MAX = 1.1;
const MIN = 0.02;
const MARGIN = 24; // px (a zone's outputs hang outside its box)
const BOTTOM = 40; // px: the zoom buttons' row along the pane's bottom edge
// The compact block's size (canvas.css .fs-compact; layout.py COMPACT): a node not yet
// measured, or drawn compact at the fit, takes at least this room.
export const COMPACT_SIZE = { width: 220, height: 116 };

// Bounds of top-level React Flow nodes (children lie inside their zones), each at least
// the compact block's size (`atLeast`: a fit made before or across the switch to compact
// blocks). With `atLeast` null, the sizes as drawn where React Flow measured them: what
// is on screen now (whether the whole design is in view).
export function boundsOf(nodes, atLeast = COMPACT_SIZE) {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const n of nodes) {
    if (n.parentId) continue;
    const drawnW = n.style?.width ?? n.measured?.width, drawnH = n.style?.height ?? n.measured?.height;
    const w = atLeast ? Math.max(drawnW ?? 0, atLeast.width) : drawnW ?? COMPACT_SIZE.width;
    const h = atLeast ? Math.max(drawnH ?? 0, atLeast.height) : drawnH ?? COMPACT_SIZE.height;
    x0 = Math.min(x0, n.position.x); y0 = Math.min(y0, n.position.y);
    x1 = Math.max(x1, n.position.x + w); y1 = Math.max(y1, n.position.y + h);
  }
  return x0 === Infinity ? null : { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

// The viewport showing `bounds` whole and centred in a pane of width x height px.
export function wholeViewport(bounds, width, height) {
  const fit = Math.min((width - 2 * MARGIN) / bounds.width, (height - MARGIN - BOTTOM) / bounds.height);
  const zoom = Math.max(MIN, Math.min(MAX, fit));
  return {
    x: (width - bounds.width * zoom) / 2 - bounds.x * zoom,
    y: (height - BOTTOM + MARGIN - bounds.height * zoom) / 2 - bounds.y * zoom,
    zoom,
  };
}

// The box on screen of node `id` of the flow in `pane`: as drawn, or, for a node not
// drawn (out of view: app.jsx DRAW_VISIBLE_FROM), from React Flow's store (its
// position and measured size) and the viewport, placed on the flow's own box.
export function screenBox(flow, pane, id) {
  const drawn = pane.querySelector(`.react-flow__node[data-id="${CSS.escape(id)}"]`);
  if (drawn) return drawn.getBoundingClientRect();
  const node = flow.getInternalNode(id);
  const origin = pane.querySelector(".react-flow")?.getBoundingClientRect();
  if (!node || !origin) return null;
  const { x, y, zoom } = flow.getViewport();
  const at = node.internals.positionAbsolute;
  const left = origin.left + x + at.x * zoom, top = origin.top + y + at.y * zoom;
  return { left, top, right: left + (node.measured?.width ?? 0) * zoom, bottom: top + (node.measured?.height ?? 0) * zoom };
}
