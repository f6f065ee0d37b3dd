// The debugger link drawn as a stylesheet (the `link_state` trait, widgets/canvas/debug_link.py):
// the node that owns the op just run is outlined (amber forward, violet backward), a
// recurrent zone being stepped shows its frame "t 3 of 7", the loss node its live loss.
// Rules keyed by React Flow's data-id leave the node components alone: a stop re-renders
// no node, and a node that appears later (expanding a zone) is lit as it mounts.

const PHASE_COLOR = { forward: "#f59e0b", backward: "#8b5cf6" };

const cssString = (text) => `"${String(text).replace(/[\\"]/g, "\\$&").replace(/[\n\r]/g, " ")}"`;
const escapeId = (id) => (globalThis.CSS?.escape ? CSS.escape(id) : String(id).replace(/["\\\]]/g, "\\$&"));
const nodeRule = (id) => `.fs-canvas .react-flow__node[data-id="${escapeId(id)}"]`;

// link_state -> CSS text ("" when nothing is linked). The labels live inside the zoomed
// viewport: `zoom` (React Flow's, in steps of 0.1) scales them back up to a readable size
// when the whole design is in view.
export function linkStyle(state, zoom = 1) {
  if (!state) return "";
  const rules = [];
  const k = Math.min(4, Math.max(1, 1 / (zoom || 1)));
  const px = (n) => `${Math.round(n * k)}px`;
  if (state.active && state.node) {
    const color = PHASE_COLOR[state.phase] ?? "#6b7280";
    const label = `${state.phase === "backward" ? "◀ grad " : "▶ "}${state.op ?? ""}`;
    rules.push(`${nodeRule(state.node)} > .fs-node, ${nodeRule(state.node)} > .fs-zone {
      outline: 4px solid ${color}; outline-offset: 2px; box-shadow: 0 0 0 9px ${color}40; }`);
    rules.push(`${nodeRule(state.node)}::before { content: ${cssString(label)}; position: absolute;
      left: 0; bottom: 100%; margin-bottom: 5px; padding: 0 5px; border-radius: 3px; white-space: nowrap;
      font: 600 ${px(11)}/${px(16)} var(--jp-code-font-family, monospace); color: #fff; background: ${color}; z-index: 5; }`);
  }
  if (state.active && state.zone && state.zone !== state.node) {
    // the zone being stepped: dashed, so a collapsed zone (its step's nodes not drawn)
    // still shows where the session is
    const color = PHASE_COLOR[state.phase] ?? "#6b7280";
    rules.push(`${nodeRule(state.zone)} > .fs-zone, ${nodeRule(state.zone)} > .fs-node {
      outline: 3px dashed ${color}; outline-offset: 3px; }`);
  }
  if (state.active && state.zone && state.frame !== null && state.frame !== undefined) {
    const frame = `t ${state.frame} of ${state.frames ?? "?"}`;
    rules.push(`${nodeRule(state.zone)}::after { content: ${cssString(frame)}; position: absolute;
      right: 0; bottom: 100%; margin-bottom: 5px; padding: 0 6px; border-radius: 3px;
      font: 600 ${px(12)}/${px(18)} var(--jp-code-font-family, monospace); color: #fff; background: #8e7cc3; }`);
  }
  if (state.loss?.node && state.loss.text) {
    rules.push(`${nodeRule(state.loss.node)}::after { content: ${cssString(`loss ${state.loss.text}`)}; position: absolute;
      left: 0; top: 100%; margin-top: 4px; padding: 0 6px; border-radius: 3px; white-space: nowrap;
      font: 600 ${px(12)}/${px(18)} var(--jp-code-font-family, monospace); color: #1a7f4b; background: #e7f6ee;
      border: 1px solid #9fd8b9; }`);
  }
  return rules.join("\n");
}

// The hover card of an output port: ["logits.tmp_1  [6, 2]", "min -1.2  mean 0.03  max 2.1"].
export function portLines(port) {
  if (!port) return [];
  if (port.error) return [port.var ?? "", port.error];
  const f = (v) => (Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(2) : v.toFixed(4));
  const head = `${port.var}  [${(port.shape ?? []).join(", ")}]`;
  return port.min === undefined ? [head] : [head, `min ${f(port.min)}  mean ${f(port.mean)}  max ${f(port.max)}`];
}
