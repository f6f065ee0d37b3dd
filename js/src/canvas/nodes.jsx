// The node components. Each draws one NodeView of the protocol; React Flow gives it
// `data.view`. They are memoised on the view's `sig` (and selection), so an edit renders
// again only the nodes whose view changed. Handles sit in the port rows (each row is
// position: relative), so a handle lines up with its label whatever the node's height.
//
// Semantic zoom: below COMPACT_BELOW a node draws as a compact block, its layer kind and
// name in type large enough to read at the zoom that fits a 200-layer design (the ports
// and details would be specks there). Each node selects only the boolean "is the view
// zoomed out", so it renders again only when the zoom crosses the threshold. The compact
// block keeps every handle (stacked on its left and right middles): edges stay attached.
import { createContext, memo, useContext, useLayoutEffect, useRef } from "react";
import { Handle, Position, useNodeId, useStore } from "@xyflow/react";
import { acceptClasses } from "./connect.js";
import { useSend } from "./context.js";

const same = (a, b) => a.data === b.data && a.selected === b.selected && a.dragging === b.dragging;

export const COMPACT_BELOW = 0.5;
const zoomedOut = (s) => s.transform[2] < COMPACT_BELOW;
// The canvas selects "zoomed out" once (useZoomedOut) and hands it to every node through
// FarContext: a store subscription per node ran its selector on every frame of a pan
// (1,000 of them at 1,000 layers); a context re-renders the nodes only when it flips.
export const useZoomedOut = () => useStore(zoomedOut);
export const FarContext = createContext(false);
export const useCompact = () => useContext(FarContext);

// Every handle of a node, invisible on the compact block's sides. Plain elements with
// React Flow's handle classes and data attributes, which is all it reads to place an
// edge's ends (getHandleBounds: .source / .target, data-handleid, data-handlepos): a
// <Handle> subscribes to the store twice, and at 1,000 compact blocks those 4,000
// selectors ran on every frame of a pan or zoom. They take no connection (too small to
// aim at); zoomed in, a node draws React Flow's own handles.
function CompactHandle({ nodeId, id, type }) {
  const side = type === "target" ? "left" : "right";
  return <div className={`react-flow__handle react-flow__handle-${side} nodrag nopan fs-handle fs-compact-handle ${type}`}
    data-handleid={id} data-nodeid={nodeId} data-handlepos={side} />;
}

function CompactHandles({ view }) {
  const nodeId = useNodeId();
  const targets = [...(view.inputs ?? []).map((p) => p.handle),
    ...(view.rows ?? []).flatMap((r) => rowSlots(r).map((p) => p.handle))];
  return (
    <>
      {targets.map((h) => <CompactHandle key={h} nodeId={nodeId} id={h} type="target" />)}
      {(view.outputs ?? []).map((p) => <CompactHandle key={p.handle} nodeId={nodeId} id={p.handle} type="source" />)}
    </>
  );
}

// The two lines of a compact block. A line holds about COMPACT_CHARS characters at the
// large type; most names are their kind and a number (batch_norm_3, elementwise_add_0),
// which as "kind / name" both end in an ellipsis ("batc…" / "batc…"). Such a name, too
// long for one line, is split over the two lines at the underscore that balances them
// ("batch_" / "norm_3"): the kind is in the name, and the name reads whole.
const COMPACT_CHARS = 6;
export function compactLines(kind, name) {
  if (name.length <= COMPACT_CHARS || !name.startsWith(kind)) return [kind, name];
  let best = null;
  for (let i = name.indexOf("_"); i > 0; i = name.indexOf("_", i + 1)) {
    const cost = Math.max(i + 1, name.length - i - 1);
    if (best === null || cost < best.cost) best = { cost, at: i + 1 };
  }
  return best === null ? [kind, name] : [name.slice(0, best.at), name.slice(best.at)];
}

// A compact line too long for the block at the large type (canvas.css: 56 px, a block
// 204 px wide inside) is set smaller when that makes it fit whole at FIT_FLOOR px or more
// ("conv2d", "batch_"); a longer one keeps the large type and ends in an ellipsis (class
// fs-cut: only such a line clips its overflow; a clip on every line split each block's
// paint in pieces, which Chromium layerizes again on every frame of a pan in JupyterLab),
// so no label drops below what the fit of a 200-layer design keeps legible. Widths come
// from a canvas's measureText in the page's font (read once): no page layout per block,
// which at 1,000 nodes would cost a reflow each.
const LINE_PX = 56;
const FIT_FLOOR = 46;
const LINE_WIDTH = 202;
const LETTER_SPACING = -0.04; // em, as canvas.css sets it
// One context per weight, its font set once: setting a context's font parses it, and
// alternating the two weights on one context cost more than measuring (2,000 lines).
// measureText was still the largest script cost of a 1,000-layer design's first render
// (2,000 lines, each measured again whenever its block mounts: zooming out, a node
// coming into view). Widths are therefore kept per text (a kind line, "fc", repeats on
// every block), and a line whose characters' widths, each measured once, add up to well
// inside the block fits without measuring it (kerning only narrows such text; the
// margin covers a font that widens a pair).
const SUM_MARGIN = 0.96;
let measure = null;
function measurer(el) {
  if (measure === null) {
    const family = getComputedStyle(el).fontFamily;
    const context = (weight) => {
      const ctx = document.createElement("canvas").getContext("2d");
      ctx.font = `${weight} ${LINE_PX}px ${family}`;
      return { ctx, texts: new Map(), chars: new Map() };
    };
    measure = { bold: context(700), plain: context(400) };
  }
  return el.classList.contains("fs-compact-kind") ? measure.bold : measure.plain;
}

function textWidth(m, text) {
  let width = m.texts.get(text);
  if (width !== undefined) return width;
  let sum = 0;
  for (const c of text) {
    let w = m.chars.get(c);
    if (w === undefined) m.chars.set(c, (w = m.ctx.measureText(c).width));
    sum += w;
  }
  // the sum stands for the width only where it fits: the answer is then the same
  width = sum <= LINE_WIDTH * SUM_MARGIN ? sum : m.ctx.measureText(text).width;
  m.texts.set(text, width);
  return width;
}

function fittedSize(el) {
  const text = el.textContent;
  const width = textWidth(measurer(el), text) + text.length * LETTER_SPACING * LINE_PX;
  if (width <= LINE_WIDTH) return { size: "", cut: false };
  const size = Math.floor((LINE_PX * LINE_WIDTH) / width);
  return size >= FIT_FLOOR ? { size: `${size}px`, cut: false } : { size: "", cut: true };
}

function useFittedLines(texts) {
  const first = useRef(null);
  const second = useRef(null);
  useLayoutEffect(() => {
    for (const el of [first.current, second.current]) {
      if (!el) continue;
      const { size, cut } = fittedSize(el);
      el.style.fontSize = size;
      el.classList.toggle("fs-cut", cut);
    }
  }, texts);
  return [first, second];
}

// The zoomed-out face of a node: kind and name, large; the error as the block's colour.
// An op node's kind is its op type (the layer kind "op" says nothing).
function CompactBlock({ view, selected, kind, extra = "" }) {
  const shownKind = kind ?? (view.layer === "op" && view.detail ? view.detail : view.layer);
  const [first, second] = kind ? [kind, view.title] : compactLines(shownKind, view.title);
  const [firstRef, secondRef] = useFittedLines([first, second]);
  return (
    <div className={`fs-node fs-compact fs-cat-${view.category ?? "other"} ${extra} ${stateClass(view, selected)}`}
      data-layer={view.layer} title={[view.title, view.detail, view.error].filter(Boolean).join("\n")}>
      <CompactHandles view={view} />
      <div className="fs-compact-kind" ref={firstRef}>{first}</div>
      <div className="fs-compact-name" ref={secondRef}>{second}</div>
    </div>
  );
}

function stateClass(view, selected) {
  return [
    view.error ? "fs-has-error" : "",
    view.waiting_on ? "fs-waiting" : "",
    view.is_loss ? "fs-loss" : "",
    selected ? "fs-selected" : "",
  ].join(" ");
}

// The red "!" whose hover (title) shows the error text.
function ErrorBadge({ error }) {
  if (!error) return null;
  return <span className="fs-badge" title={error} aria-label={error}>!</span>;
}

function InputRow({ port }) {
  const missing = !port.optional && !port.connected;
  return (
    <div className={`fs-port fs-port-in${missing ? " fs-missing" : ""}`} data-handle={port.handle}>
      <Handle type="target" position={Position.Left} id={port.handle}
        className={`fs-handle fs-handle-in ${acceptClasses(port.accepts)}`}
        title={`${port.slot}: takes ${(port.accepts ?? []).join(", ") || "any"}${port.many ? " (several)" : ""}`} />
      <span className="fs-port-name">{port.slot}{port.many ? "+" : ""}</span>
    </div>
  );
}

function OutputRow({ port }) {
  return (
    <div className={`fs-port fs-port-out fs-kind-${port.kind ?? "unknown"}`} data-handle={port.handle}>
      <span className="fs-shape" title={[port.kind, port.dtype].filter(Boolean).join(" · ")}>
        {port.shape ?? "?"}
      </span>
      <Handle type="source" position={Position.Right} id={port.handle}
        className={`fs-handle fs-handle-out fs-kind-${port.kind ?? "unknown"}`}
        title={`${port.kind ?? "not built"}${port.shape ? ` ${port.shape}` : ""}`} />
    </div>
  );
}

function Header({ view }) {
  return (
    <div className="fs-node-head" title={view.waiting_on ? `waiting on ${view.waiting_on}` : undefined}>
      <span className="fs-node-layer">{view.layer}</span>
      <span className="fs-node-title">{view.title}</span>
      <ErrorBadge error={view.error} />
    </div>
  );
}

function Ports({ view }) {
  return (
    <div className="fs-ports">
      <div className="fs-ports-in">{(view.inputs ?? []).map((p) => <InputRow key={p.handle} port={p} />)}</div>
      <div className="fs-ports-out">{(view.outputs ?? []).map((p) => <OutputRow key={p.handle} port={p} />)}</div>
    </div>
  );
}

// A layer (or an op node): layer, title, key attributes, typed ports with shapes.
export const LayerNode = memo(function LayerNode({ data, selected }) {
  const { view } = data;
  if (useCompact()) return <CompactBlock view={view} selected={selected} />;
  return (
    <div className={`fs-node fs-layer fs-cat-${view.category ?? "other"} ${stateClass(view, selected)}`}
      data-layer={view.layer}>
      <Header view={view} />
      {view.detail ? <div className="fs-node-detail">{view.detail}</div> : null}
      <Ports view={view} />
    </div>
  );
}, same);

// A row's input slots (an operator row has two); older views give only the row's handle.
const rowSlots = (row) => (row.inputs?.length ? row.inputs : [{ handle: row.handle, slot: "input", accepts: row.accepts }]);

// A mixed_layer: one row per projection, each with its own input handle; "+ projection".
export const MixedNode = memo(function MixedNode({ id, data, selected }) {
  const { view } = data;
  const send = useSend();
  if (useCompact()) return <CompactBlock view={view} selected={selected} />;
  return (
    <div className={`fs-node fs-mixed fs-cat-${view.category ?? "other"} ${stateClass(view, selected)}`}
      data-layer={view.layer}>
      <Header view={view} />
      {view.detail ? <div className="fs-node-detail">{view.detail}</div> : null}
      <div className="fs-rows">
        {(view.rows ?? []).map((row) => (
          <div key={row.handle} className={`fs-row${row.error ? " fs-row-error" : ""}`} title={row.error ?? undefined}>
            {rowSlots(row).map((slot, k) => (
              <div key={slot.handle} className="fs-port fs-port-in" data-handle={slot.handle}>
                <Handle type="target" position={Position.Left} id={slot.handle}
                  className={`fs-handle fs-handle-in ${acceptClasses(slot.accepts)}`}
                  title={`${slot.slot ?? "input"}: takes ${(slot.accepts ?? []).join(", ") || "any"}`} />
                {k === 0 ? <span className="fs-row-kind">{row.kind}</span> : <span className="fs-port-name">{slot.slot}</span>}
                {k === 0 ? <span className="fs-row-detail">{row.detail}</span> : null}
                {k === 0 && row.error ? <span className="fs-badge fs-badge-small" title={row.error}>!</span> : null}
              </div>
            ))}
          </div>
        ))}
      </div>
      <button type="button" className="fs-add-row nodrag" title="add a projection row (full_matrix_projection)"
        onClick={(e) => { e.stopPropagation(); send("add_row", { node: id, kind: "full_matrix_projection" }); }}>
        + projection
      </button>
      <Ports view={view} />
    </div>
  );
}, same);

// A recurrent zone. Expanded: a frame (its size from Python) holding the step's nodes,
// in-links on its left (they are the step_input nodes inside), outputs on its right
// border: each an inner target (what an inner node feeds out) and an outer source (same
// id; React Flow keeps source and target handles apart), plus "+ output" to add one by
// connecting an inner node to it. Collapsed: one box with the zone's ports.
// A double-click on its head toggles it (the canvas's onNodeDoubleClick); "open" enters it.
function ZoneOutputs({ view }) {
  return (
    <div className="fs-zone-outs">
      {(view.outputs ?? []).map((port) => (
        <div key={port.handle} className="fs-port fs-zone-out" data-handle={port.handle}>
          <Handle type="target" position={Position.Left} id={port.handle} className="fs-handle fs-handle-in fs-zone-inner" />
          <span className="fs-shape">{port.shape ?? "?"}</span>
          <Handle type="source" position={Position.Right} id={port.handle}
            className={`fs-handle fs-handle-out fs-kind-${port.kind ?? "unknown"}`} />
        </div>
      ))}
      <div className="fs-port fs-zone-out fs-zone-new-out" data-handle="out:new" title="connect an inner node here to output it every step">
        <Handle type="target" position={Position.Left} id="out:new" className={`fs-handle fs-handle-in fs-zone-inner ${acceptClasses(null)}`} />
        <span className="fs-port-name">+ output</span>
      </div>
    </div>
  );
}

export const ZoneNode = memo(function ZoneNode({ id, data, selected }) {
  const { view } = data;
  const send = useSend();
  const expanded = !view.collapsed && view.size;
  const button = (label, title, action, args) => (
    <button type="button" className="fs-zone-button nodrag" title={title} data-action={action}
      onClick={(e) => { e.stopPropagation(); send(action, args); }}>{label}</button>
  );
  return (
    <div className={`fs-zone ${expanded ? "fs-zone-open" : "fs-zone-closed fs-node"} ${stateClass(view, selected)}`}
      data-layer={view.layer}>
      <div className="fs-zone-head" title="double-click to collapse / expand">
        <span className="fs-node-layer">{view.reverse ? "recurrent ⟲ reverse" : "recurrent ⟳"}</span>
        <span className="fs-node-title">{view.title}</span>
        <ErrorBadge error={view.error} />
        <span className="fs-zone-buttons">
          {expanded ? button("+ memory", "add a memory: connect what it remembers to its link", "add_memory", { group: id }) : null}
          {button("open", "show this step alone", "enter", { group: id })}
        </span>
      </div>
      {expanded ? <ZoneOutputs view={view} /> : null}
      {expanded ? null : view.detail ? <div className="fs-node-detail">{view.detail}</div> : null}
      {expanded ? null : <Ports view={view} />}
    </div>
  );
}, same);

const PORT_MARK = { step_input: "in", memory: "mem", output: "out" };

// A zone's own pieces: an in-link (a StaticInput is marked apart), a memory, an out-link.
export const PortNode = memo(function PortNode({ data, selected }) {
  const { view } = data;
  const mark = view.type === "step_input" && view.static ? "static" : PORT_MARK[view.type];
  if (useCompact()) return <CompactBlock view={view} selected={selected} kind={mark} />;
  return (
    <div className={`fs-node fs-small fs-small-${view.type}${view.static ? " fs-static" : ""} ${stateClass(view, selected)}`}
      data-layer={view.layer}>
      <div className="fs-node-head">
        <span className={`fs-mark fs-mark-${mark}`}>{mark}</span>
        <span className="fs-node-title">{view.title}</span>
        <ErrorBadge error={view.error} />
      </div>
      {view.detail ? <div className="fs-node-detail">{view.detail}</div> : null}
      <Ports view={view} />
    </div>
  );
}, same);

// A run of identical layers ("fc × 120", widgets/canvas/folds.py): the first layer's
// inputs, the last one's outputs; a double-click unfolds it (the canvas's onNodeDoubleClick).
export const FoldNode = memo(function FoldNode({ data, selected }) {
  const { view } = data;
  if (useCompact()) return <CompactBlock view={view} selected={selected} kind={view.title} extra="fs-fold" />;
  return (
    <div className={`fs-node fs-layer fs-fold fs-cat-${view.category ?? "other"} ${stateClass(view, selected)}`}
      data-layer={view.layer} title="double-click to show each layer">
      <div className="fs-node-head">
        <span className="fs-node-layer">{view.title}</span>
        <ErrorBadge error={view.error} />
      </div>
      <div className="fs-node-detail">{view.detail}</div>
      <Ports view={view} />
    </div>
  );
}, same);

// Module-level and stable: React Flow re-mounts every node when this object changes.
export const nodeTypes = { layer: LayerNode, mixed: MixedNode, zone: ZoneNode, port: PortNode, fold: FoldNode };
