// The first view of a design: readable before whole. fitView alone shrinks a long model
// (a 15-layer chain, a 200-layer design) until its text cannot be read; here the zoom
// never goes below READABLE, and a design still too big is shown from its start (top
// left, where its data layers are) instead of from its middle. The minimap shows the rest;
// the toolbar's "fit" still shows everything.
import { getNodesBounds } from "@xyflow/react";

const READABLE = 0.8;
const MAX = 1.1;
const MARGIN = 48; // px (a zone's outputs hang outside its box)

export function readableViewport(nodes, width, height) {
  const b = getNodesBounds(nodes);
  const zoom = Math.max(READABLE, Math.min(MAX, (width - 2 * MARGIN) / b.width, (height - 2 * MARGIN) / b.height));
  const x = b.width * zoom <= width - 2 * MARGIN ? (width - b.width * zoom) / 2 - b.x * zoom : MARGIN - b.x * zoom;
  const y = b.height * zoom <= height - 2 * MARGIN ? (height - b.height * zoom) / 2 - b.y * zoom : MARGIN - b.y * zoom;
  return { x, y, zoom };
}
