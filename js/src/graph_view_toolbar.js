// GraphView's toolbar pieces and node keys: the mode switch, the "layers as boxes" and
// "internal outputs" toggles (each a request to Python), and how an SVG node's selection
// key is read.

import { make } from "./shared/dom.js";
import { sendAction } from "./shared/protocol.js";

const KEY_PATTERN = /^(op|var|group):/;

// Selection key of an SVG node or cluster: its `id` ("op:0:3", "var:0:fc_0.w_0",
// "group:0:fc_0"), or, for an SVG made without ids, its title ("op_0_3",
// "var_0_x-40-GRAD") decoded the same way.
export function keyOf(g) {
  if (KEY_PATTERN.test(g.id)) return g.id;
  const title = g.querySelector(":scope > title")?.textContent ?? "";
  const m = /^(op|var|group)_(\d+)_(.*)$/.exec(title);
  if (!m) return null;
  const rest = m[3].replace(/-([0-9a-f]+)-/g, (_, hex) => String.fromCodePoint(parseInt(hex, 16)));
  return `${m[1]}:${m[2]}:${rest}`;
}

// The innermost node or cluster under `target` that has a selection key (a click inside
// an expanded namescope cluster, but not on one of its nodes, selects the group).
export function keyAt(target) {
  for (let g = target?.closest?.("g.node, g.cluster"); g; g = g.parentElement?.closest("g.node, g.cluster")) {
    const key = keyOf(g);
    if (key) return key;
  }
  return null;
}

export function button(text, title, onClick) {
  const b = make("button", "fs-graph-button", text);
  b.title = title;
  b.addEventListener("click", onClick);
  return b;
}

// The mode switch: a <select> of Python's `mode_labels` (mode -> words), bound to `mode`.
export function modeSwitch(model, onPick) {
  const select = make("select", "fs-graph-mode");
  select.title = "which ops the graph draws";
  const fill = () => {
    const options = Object.entries(model.get("mode_labels") ?? {}).map(([mode, label]) => {
      const option = make("option", "", label);
      option.value = mode;
      return option;
    });
    select.replaceChildren(...options);
    select.value = model.get("mode");
  };
  select.addEventListener("change", () => {
    onPick();
    model.set("mode", select.value);
    model.save_changes();
  });
  fill();
  return { select, fill, show: () => { select.value = model.get("mode"); } };
}

// The "layers as boxes" toggle: checked when every layer is a box, mixed when some are.
export function layersToggle(model, onPick) {
  const box = make("input", "fs-graph-layers-box");
  box.type = "checkbox";
  const label = make("label", "fs-graph-layers");
  label.title = "draw each layer (fc, mixed_layer, ...) as one box; double-click a box to " +
    "open it, an op of an open layer to close it again";
  label.append(box, "layers as boxes");
  box.addEventListener("change", () => {
    onPick();
    sendAction(model, box.checked ? "collapse" : "expand");
  });
  const show = () => {
    const all = model.get("collapse_all");
    box.checked = all;
    box.indeterminate = !all && model.get("collapsed").length > 0;
  };
  show();
  return { label, show };
}

// "internal outputs": draw the outputs ops keep only for their backward (XShape, ...).
export function internalToggle(model) {
  const box = make("input", "fs-graph-internal-box");
  box.type = "checkbox";
  const label = make("label", "fs-graph-layers fs-graph-internal");
  label.title = "draw the outputs an op keeps only for its backward (XShape, SavedMean, ...)";
  label.append(box, "internal outputs");
  box.addEventListener("change", () => sendAction(model, "show_internal_outputs", { show: box.checked }));
  const show = () => { box.checked = Boolean(model.get("internal_shown")); };
  show();
  return { label, show };
}
