// Edge components. A data edge is a bezier with the tensor's shape as its label; a memory
// edge goes from the inner node a memory remembers back to the memory node, usually
// leftwards, so it is drawn dashed as a loop under both nodes (a back-edge), never
// through them.
import { memo } from "react";
import { BaseEdge, EdgeLabelRenderer, getBezierPath } from "@xyflow/react";

function Label({ x, y, text }) {
  if (!text) return null;
  return (
    <EdgeLabelRenderer>
      <div className="fs-edge-label nodrag nopan"
        style={{ transform: `translate(-50%, -50%) translate(${x}px, ${y}px)` }}>{text}</div>
    </EdgeLabelRenderer>
  );
}

export const DataEdge = memo(function DataEdge(props) {
  const { sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, markerEnd, data, style } = props;
  const [path, labelX, labelY] = getBezierPath({ sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition });
  return (
    <>
      <BaseEdge path={path} markerEnd={markerEnd} style={style} interactionWidth={12} />
      {/* the shape is on the output port already; the label shows on a selected edge */}
      <Label x={labelX} y={labelY} text={props.selected ? data?.label : null} />
    </>
  );
});

const LOOP_DROP = 70; // px below the lower end the back-edge passes

export const MemoryEdge = memo(function MemoryEdge(props) {
  const { sourceX, sourceY, targetX, targetY, markerEnd, style } = props;
  if (targetX > sourceX + 40) { // drawn forwards after all: a plain dashed curve
    const [path] = getBezierPath(props);
    return <BaseEdge path={path} markerEnd={markerEnd} style={style} interactionWidth={12} />;
  }
  const bottom = Math.max(sourceY, targetY) + LOOP_DROP;
  const path = `M ${sourceX},${sourceY} C ${sourceX + 60},${sourceY} ${sourceX + 60},${bottom} ${sourceX},${bottom}`
    + ` L ${targetX},${bottom} C ${targetX - 60},${bottom} ${targetX - 60},${targetY} ${targetX},${targetY}`;
  return (
    <>
      <BaseEdge path={path} markerEnd={markerEnd} style={style} interactionWidth={12} />
      <Label x={(sourceX + targetX) / 2} y={bottom} text="memory" />
    </>
  );
});

export const edgeTypes = { data: DataEdge, memory: MemoryEdge };
