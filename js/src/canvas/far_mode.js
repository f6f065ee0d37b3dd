// When a big design's nodes are drawn by the far canvas (far_canvas.jsx) and when by
// React Flow's node components, and the node array React Flow gets for each.
//
// On: the design is big (React Flow draws only the nodes in view: app.jsx
// DRAW_VISIBLE_FROM), every node has been measured once (React Flow drew each at the
// first view, so none is drawn again only to measure it when the canvas hands the nodes
// back), and the view is zoomed out past the compact threshold (nodes.jsx COMPACT_BELOW).
// Switching on is at once, mid-gesture too: it unmounts the few dozen nodes in view,
// after which nothing mounts while the gesture goes on. Switching off (zoomed in past the
// threshold) waits until the view is still (`release`): mounting the nodes in view in full
// detail is the one long frame, and it should not land in the middle of a zoom. Until
// then the canvas goes on drawing the compact blocks, larger: hysteresis in time, so a
// zoom back and forth over the threshold never flickers between the two.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { COMPACT_BELOW } from "./nodes.jsx";

// A node React Flow keeps in its store (positions, selection, sizes) but does not draw;
// one copy per node object, so an unchanged node stays the same object for React Flow.
const HIDDEN = new WeakMap();
function hiddenCopy(node) {
  let copy = HIDDEN.get(node);
  if (!copy) HIDDEN.set(node, (copy = { ...node, hidden: true }));
  return copy;
}

const idle = (fn) => (window.requestIdleCallback
  ? window.requestIdleCallback(fn, { timeout: 600 }) : setTimeout(fn, 200));
const cancelIdle = (handle) => (window.cancelIdleCallback ? window.cancelIdleCallback(handle) : clearTimeout(handle));

export function useFarDrawing({ nodes, big, far, pathKey, flow, isMoving }) {
  // every node measured once, for this design level; the switch itself on the next idle
  // moment, so that the first view's paint is not held back by it
  const [ready, setReady] = useState(false);
  const measuredAll = big && nodes.length > 0 && nodes.every((n) => n.measured?.width || n.hidden);
  const readyFor = useRef(null);
  useEffect(() => {
    if (!big || readyFor.current !== pathKey) setReady(false);
    if (!measuredAll || readyFor.current === pathKey) return undefined;
    const handle = idle(() => { readyFor.current = pathKey; setReady(true); });
    return () => cancelIdle(handle);
  }, [big, measuredAll, pathKey]);
  useEffect(() => { if (!big) readyFor.current = null; }, [big]);

  const [held, setHeld] = useState(false);
  const drawn = ready && big && (far || held);
  useEffect(() => { if (drawn && far) setHeld(true); }, [drawn, far]);
  // the view is still: hand the nodes back to React Flow if zoomed in enough to read them
  const release = useCallback(() => {
    if (!isMoving() && flow.getZoom() >= COMPACT_BELOW) setHeld(false);
  }, [flow, isMoving]);
  // zoomed in by the program (a find, a fit): no gesture's end will come
  useEffect(() => { if (!far && held && !isMoving()) release(); }, [far, held, isMoving, release]);

  const flowNodes = useMemo(() => (drawn ? nodes.map(hiddenCopy) : nodes), [drawn, nodes]);
  return { drawn, flowNodes, release };
}
