// Edge components. A data edge is a bezier with the tensor's shape as its label; a memory
// edge goes from the inner node a memory remembers back to the memory node, usually
// leftwards, so it is drawn dashed as a loop under both nodes (a back-edge), never
// through them. A data edge that runs back and down (from the end of one band of a
// wrapped layout to the start of the next) is routed at right angles through the gap
// below its source, not diagonally across the band; one that skips along a row (a source
// feeding a layer several columns on, a residual) dips under the row instead of running
// beneath the nodes between its ends.
import { memo } from "react";
import { BaseEdge, EdgeLabelRenderer, getBezierPath, getSmoothStepPath } from "@xyflow/react";

function Label({ x, y, text }) {
  if (!text) return null;
  return (
    <EdgeLabelRenderer>
      <div className="fs-edge-label nodrag nopan"
        style={{ transform: `translate(-50%, -50%) translate(${x}px, ${y}px)` }}>{text}</div>
    </EdgeLabelRenderer>
  );
}

const BAND_STEP = 100; // px: less than a band's height (layout.py), more than a port row

// Back and down by at least a band: the turn runs half way between the two handles,
// which is the gap between two bands when their nodes are alike (a wrapped chain). Read
// from the handles alone: no store subscription per edge (1,000 of them at 1,000 layers).
function wrapPath(p) {
  if (!(p.targetX < p.sourceX - 20) || !(p.targetY > p.sourceY + BAND_STEP)) return null;
  return getSmoothStepPath({ ...p, borderRadius: 10, offset: 16, centerY: (p.sourceY + p.targetY) / 2 });
}

const SKIP = 400; // px: an edge longer than about one column gap and a half skips nodes
const DIP = 70;   // px below the handles: under a node's ports, above the next row's top
const R = 8;      // px: the corners' radius

// Along a row past at least one column: right, down under the row, along, up, in.
function skipPath(p) {
  if (!(p.targetX - p.sourceX > SKIP) || Math.abs(p.targetY - p.sourceY) > 30) return null;
  const y = Math.max(p.sourceY, p.targetY) + DIP;
  const x0 = p.sourceX + 14, x1 = p.targetX - 14;
  const path = `M ${p.sourceX},${p.sourceY} L ${x0 - R},${p.sourceY} Q ${x0},${p.sourceY} ${x0},${p.sourceY + R}`
    + ` L ${x0},${y - R} Q ${x0},${y} ${x0 + R},${y} L ${x1 - R},${y} Q ${x1},${y} ${x1},${y - R}`
    + ` L ${x1},${p.targetY + R} Q ${x1},${p.targetY} ${x1 + R},${p.targetY} L ${p.targetX},${p.targetY}`;
  return [path, (x0 + x1) / 2, y];
}

// A data edge's [path, labelX, labelY] between its two ends (also far_edges.jsx's).
export const dataPath = (ends) => wrapPath(ends) ?? skipPath(ends) ?? getBezierPath(ends);

export const DataEdge = memo(function DataEdge(props) {
  const { sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, markerEnd, data, style } = props;
  const ends = { sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition };
  const [path, labelX, labelY] = dataPath(ends);
  return (
    <>
      <BaseEdge path={path} markerEnd={markerEnd} style={style} interactionWidth={12} />
      {/* the shape is on the output port already; the label shows on a selected edge */}
      <Label x={labelX} y={labelY} text={props.selected ? data?.label : null} />
    </>
  );
});

const LOOP_DROP = 70; // px below the lower end the back-edge passes

// A memory edge's loop under both ends (also far_scene.js's); null when it runs forwards.
export function memoryPath({ sourceX, sourceY, targetX, targetY }) {
  if (targetX > sourceX + 40) return null;
  const bottom = Math.max(sourceY, targetY) + LOOP_DROP;
  return `M ${sourceX},${sourceY} C ${sourceX + 60},${sourceY} ${sourceX + 60},${bottom} ${sourceX},${bottom}`
    + ` L ${targetX},${bottom} C ${targetX - 60},${bottom} ${targetX - 60},${targetY} ${targetX},${targetY}`;
}

export const MemoryEdge = memo(function MemoryEdge(props) {
  const { sourceX, sourceY, targetX, targetY, markerEnd, style } = props;
  const path = memoryPath(props);
  if (!path) { // drawn forwards after all: a plain dashed curve
    const [forward] = getBezierPath(props);
    return <BaseEdge path={forward} markerEnd={markerEnd} style={style} interactionWidth={12} />;
  }
  const bottom = Math.max(sourceY, targetY) + LOOP_DROP;
  return (
    <>
      <BaseEdge path={path} markerEnd={markerEnd} style={style} interactionWidth={12} />
      <Label x={(sourceX + targetX) / 2} y={bottom} text="memory" />
    </>
  );
});

export const edgeTypes = { data: DataEdge, memory: MemoryEdge };
