// Zoomed out on a big design, the top-level data wires as one SVG path per kind of wire
// instead of React Flow's edge components.
//
// React Flow gives each edge a component that subscribes to its store and recomputes the
// edge's ends on every store update, a pan or zoom frame included, and an element group
// of its own (a wire, a wider invisible one for the pointer, a wrapper): at 1,000 layers
// 999 selectors per frame and 3,000 elements to hit-test and paint. Zoomed out (the
// compact blocks, nodes.jsx COMPACT_BELOW) a wire is a line to follow, not a target:
// this layer draws them all, with the same routes as DataEdge, from one subscription
// that recomputes only when a node or its handles change, never for a move of the view.
// The wires React Flow keeps: a selected one, one into a zone (raised above its frame),
// a memory back-edge; zoomed in, all of them (there, only those in view are drawn).
import { memo, useEffect, useMemo, useState } from "react";
import { ViewportPortal, useStoreApi } from "@xyflow/react";
import { getEdgePosition } from "@xyflow/system";
import { dataPath } from "./edges.jsx";

// The wires this layer draws, given React Flow's edge objects (flow_state.js mergeEdges).
export const drawnFar = (edge) => edge.type === "data" && !edge.zIndex && !edge.selected;

const ARROW = 12; // flow px: the closed arrow's length at a wire's end (half as wide each side)

// An update of the store that may have moved a node or a handle: the nodes or edges
// changed, or React Flow measured nodes again (it then sets an empty update, `set({})`,
// which changes no field). A move of the view changes `transform` and nothing else.
function mayMoveEnds(state, before) {
  if (state.nodes !== before.nodes || state.edges !== before.edges) return true;
  for (const key in state) if (state[key] !== before[key]) return false;
  return true;
}

// {className: {d, arrows, count}} for `edges` at the nodes' positions and handles now.
export function farPaths(edges, nodeLookup, connectionMode) {
  const groups = new Map();
  for (const e of edges) {
    const sourceNode = nodeLookup.get(e.source), targetNode = nodeLookup.get(e.target);
    if (!sourceNode || !targetNode) continue;
    const ends = getEdgePosition({ id: e.id, sourceNode, targetNode, sourceHandle: e.sourceHandle || null,
      targetHandle: e.targetHandle || null, connectionMode });
    if (!ends) continue; // a handle not measured yet: drawn once it is
    let group = groups.get(e.className);
    if (!group) groups.set(e.className, (group = { d: [], arrows: [], count: 0 }));
    group.d.push(dataPath(ends)[0]);
    const { targetX: x, targetY: y } = ends;
    group.arrows.push(`M ${x},${y} L ${x - ARROW},${y - ARROW / 2} L ${x - ARROW},${y + ARROW / 2} Z`);
    group.count += 1;
  }
  return groups;
}

export const FarEdges = memo(function FarEdges({ edges }) {
  const store = useStoreApi();
  const [version, setVersion] = useState(0);
  useEffect(() => store.subscribe((state, before) => {
    if (mayMoveEnds(state, before)) setVersion((v) => v + 1);
  }), [store]);
  const groups = useMemo(() => {
    const { nodeLookup, connectionMode } = store.getState();
    return farPaths(edges, nodeLookup, connectionMode);
  }, [edges, store, version]); // eslint-disable-line react-hooks/exhaustive-deps
  return (
    <ViewportPortal>
      <svg className="fs-far-edges">
        {[...groups].map(([className, group]) => (
          <g key={className} className={`${className} fs-far-wires`} data-edges={group.count}>
            <path className="react-flow__edge-path" d={group.d.join(" ")} />
            <path className="fs-far-arrows" d={group.arrows.join(" ")} />
          </g>
        ))}
      </svg>
    </ViewportPortal>
  );
});
