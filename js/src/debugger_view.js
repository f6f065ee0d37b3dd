// DebuggerView control bar: buttons, breadcrumb, frame slider, breakpoints, shortcuts.
// Thin: every gesture sends {action, ...} to Python (DebuggerView's method of that
// name); the display is redrawn from the synced traits Python sets afterwards.
//
// Hooks for browser tests: .fs-dbg root (data-version, data-op-index, data-op-type,
// data-frame, data-frames, data-phase, data-finished, data-busy); buttons .fs-dbg-step
// .fs-dbg-into .fs-dbg-out .fs-dbg-continue .fs-dbg-back .fs-dbg-restart; .fs-dbg-breadcrumb,
// .fs-dbg-phase, .fs-dbg-reason, .fs-dbg-next, .fs-dbg-message; .fs-dbg-frames (hidden
// without frames) holding input.fs-dbg-frame-slider[data-frame] and .fs-dbg-frame-label;
// breakpoint form .fs-dbg-bp-op-type/-op-index/-block/-var/-frame/-nan, .fs-dbg-bp-add,
// .fs-dbg-bp-clear; list li.fs-dbg-bp[data-bp-id][data-enabled] with .fs-dbg-bp-enabled,
// .fs-dbg-bp-text, .fs-dbg-bp-hits, .fs-dbg-bp-remove.

import { input, make } from "./shared/dom.js";
import { isTyping, keepKeysInside } from "./shared/keyboard.js";
import { onChanges, sendAction, showMessage } from "./shared/protocol.js";

const BUTTONS = [
  ["step", "fs-dbg-step", "Step", "Run the next op (F10 or s)"],
  ["step_into", "fs-dbg-into", "Into", "Step into a recurrent op's frames (F11 or i)"],
  ["step_out", "fs-dbg-out", "Out", "Run the rest of this recurrent op (Shift+F11 or o)"],
  ["continue_", "fs-dbg-continue", "Continue", "Run to the next breakpoint or the end (F5 or c)"],
  ["back", "fs-dbg-back", "Back", "Undo the last op (b)"],
  ["restart", "fs-dbg-restart", "Restart", "Back to the start of the run (r)"],
];

// key (with "Shift+" when shifted) -> action; plain letters only outside form fields
const FUNCTION_KEYS = {
  F10: "step", F11: "step_into", "Shift+F11": "step_out", F5: "continue_",
  F9: "toggle_breakpoint_here",
};
const LETTER_KEYS = { s: "step", i: "step_into", o: "step_out", c: "continue_", b: "back", r: "restart" };

function datalist(id, values) {
  const list = make("datalist");
  list.id = id;
  list.replaceChildren(...values.map((v) => {
    const o = make("option");
    o.value = v;
    return o;
  }));
  return list;
}

let counter = 0;

function render({ model, el }) {
  const uid = `fs-dbg-${++counter}`;
  el.classList.add("fs-dbg");
  el.tabIndex = 0;
  const releaseKeys = keepKeysInside(el);

  const buttons = {};
  // Clicks made while Python works queue up in order (three clicks: three steps), so
  // nothing is disabled meanwhile; data-busy only marks the wait.
  function send(action, args = {}) {
    el.dataset.busy = "true";
    sendAction(model, action, args);
  }

  // toolbar
  const bar = make("div", "fs-dbg-bar");
  for (const [action, cls, label, title] of BUTTONS) {
    const b = make("button", `fs-dbg-button ${cls}`, label);
    b.dataset.action = action;
    b.title = title;
    b.addEventListener("click", () => {
      send(action);
      el.focus({ preventScroll: true });  // keep the shortcuts working: a button may get disabled
    });
    buttons[action] = b;
    bar.append(b);
  }

  // where the session stands
  const status = make("div", "fs-dbg-status");
  const breadcrumb = make("span", "fs-dbg-breadcrumb");
  const phase = make("span", "fs-dbg-phase");
  const reason = make("span", "fs-dbg-reason");
  const next = make("div", "fs-dbg-next");
  status.append(phase, breadcrumb, reason);
  const message = make("div", "fs-dbg-message");
  const releaseMessage = showMessage(model, message);

  // frame slider (only while a recurrent op's frames are in view)
  const framesBox = make("div", "fs-dbg-frames");
  const slider = input("fs-dbg-frame-slider", "range", "", "Frame (time step) to read");
  slider.min = "0";
  slider.step = "1";
  const frameLabel = make("span", "fs-dbg-frame-label");
  framesBox.append(make("span", "fs-dbg-label", "frame"), slider, frameLabel);
  // Position i is the i-th frame run; just after the op, position -1 is "no frame": its
  // out-links read as whole sequences.
  const frameAt = (i) => (Number(i) < 0 ? null : model.get("frame_numbers")[Number(i)]);
  const frameText = (t, i) => (t === null ? "all frames (whole sequences)"
    : `t = ${t} (${i + 1}/${model.get("frame_numbers").length})`);
  slider.addEventListener("input", () => {
    frameLabel.textContent = frameText(frameAt(slider.value), Number(slider.value));
  });
  slider.addEventListener("change", () => send("select_frame", { t: frameAt(slider.value) }));

  // breakpoints
  const bps = make("details", "fs-dbg-bps");
  bps.open = true;
  const summary = make("summary", "fs-dbg-bps-summary");
  const form = make("div", "fs-dbg-bp-form");
  const opType = input("fs-dbg-bp-op-type", "text", "op type", "Stop after ops of this type");
  opType.setAttribute("list", `${uid}-ops`);
  const opIndex = input("fs-dbg-bp-op-index", "number", "op #", "Stop after op number … of the block");
  const block = input("fs-dbg-bp-block", "number", "block", "Block of the op number (0 if empty)");
  const varName = input("fs-dbg-bp-var", "text", "writes var", "Stop after an op that writes this variable");
  varName.setAttribute("list", `${uid}-vars`);
  const frame = input("fs-dbg-bp-frame", "number", "frame", "Only in this frame of a recurrent op");
  for (const n of [opIndex, block, frame]) n.min = "0";
  const nanBox = make("label", "fs-dbg-bp-nan-label");
  const nan = input("fs-dbg-bp-nan", "checkbox", "", "Stop at the first op writing a NaN or an Inf");
  nanBox.append(nan, document.createTextNode(" NaN/Inf"));
  const add = make("button", "fs-dbg-button fs-dbg-bp-add", "Add");
  add.addEventListener("click", () => {
    send("add_breakpoint", {
      op_type: opType.value, op_index: opIndex.value, block: block.value,
      var: varName.value, frame: frame.value, nan_inf: nan.checked,
    });
    for (const n of [opType, opIndex, block, varName, frame]) n.value = "";
    nan.checked = false;
  });
  const clear = make("button", "fs-dbg-button fs-dbg-bp-clear", "Clear all");
  clear.addEventListener("click", () => send("clear_breakpoints"));
  const opsList = datalist(`${uid}-ops`, model.get("op_types"));
  const varsList = datalist(`${uid}-vars`, model.get("var_names"));
  form.append(opType, opIndex, block, varName, frame, nanBox, add, clear, opsList, varsList);
  const list = make("ul", "fs-dbg-bp-list");
  bps.append(summary, form, list);

  el.append(bar, status, next, message, framesBox, bps);

  function drawBreakpoints() {
    const items = model.get("breakpoints");
    summary.textContent = `Breakpoints (${items.length})`;
    list.replaceChildren(...items.map((bp) => {
      const li = make("li", "fs-dbg-bp");
      li.dataset.bpId = String(bp.id);
      li.dataset.enabled = String(bp.enabled);
      const on = input("fs-dbg-bp-enabled", "checkbox", "", "Enabled");
      on.checked = bp.enabled;
      on.addEventListener("change", () => send("toggle_breakpoint", { id: bp.id }));
      const remove = make("button", "fs-dbg-button fs-dbg-bp-remove", "×");
      remove.title = "Remove";
      remove.addEventListener("click", () => send("remove_breakpoint", { id: bp.id }));
      li.append(on, make("span", "fs-dbg-bp-text", bp.description),
        make("span", "fs-dbg-bp-hits", `hits ${bp.hits}`), remove);
      return li;
    }));
  }

  function draw() {
    const finished = model.get("finished");
    const depth = model.get("history_depth");
    breadcrumb.textContent = model.get("position_text");
    phase.textContent = model.get("phase");
    phase.dataset.phase = model.get("phase");
    const why = model.get("stop_reason");
    reason.textContent = why ? `stopped: ${why}` : "";
    reason.classList.toggle("fs-dbg-hit", why.startsWith("breakpoint"));
    const upcoming = model.get("upcoming_text");
    next.textContent = finished ? "finished" : upcoming ? `next: ${upcoming}` : "";

    const numbers = model.get("frame_numbers");
    const t = model.get("frame");
    framesBox.hidden = numbers.length === 0;
    slider.min = model.get("inside") ? "0" : "-1";
    slider.max = String(Math.max(0, numbers.length - 1));
    const at = t === null ? -1 : numbers.indexOf(t);
    slider.value = String(at);
    slider.dataset.frame = t === null ? "" : String(t);
    frameLabel.textContent = frameText(t, at);

    drawBreakpoints();
    el.dataset.busy = "false";
    buttons.step.disabled = finished;
    buttons.step_into.disabled = finished;
    buttons.continue_.disabled = finished;
    buttons.step_out.disabled = !model.get("inside");
    buttons.back.disabled = depth === 0;
    buttons.restart.disabled = false;
    const opIndexNow = model.get("op_index");
    el.dataset.opIndex = opIndexNow === null ? "" : String(opIndexNow);
    el.dataset.opType = model.get("op_type");
    el.dataset.frame = t === null ? "" : String(t);
    el.dataset.frames = String(model.get("frames"));
    el.dataset.phase = model.get("phase");
    el.dataset.finished = String(finished);
    el.dataset.version = String(model.get("version"));
  }

  function onKey(e) {
    const typing = isTyping(e);
    const name = e.shiftKey && e.key.startsWith("F") && e.key.length > 1 ? `Shift+${e.key}` : e.key;
    const action = FUNCTION_KEYS[name] ?? (!typing && !e.ctrlKey && !e.metaKey && !e.altKey
      ? LETTER_KEYS[e.key] : undefined);
    if (!action) return;
    e.preventDefault();  // F5 would reload the page, F11 go full screen
    const button = buttons[action];
    if (button && button.disabled) return;
    send(action);
  }
  el.addEventListener("keydown", onKey);

  const releaseDraw = onChanges(model, ["position_text", "phase", "op_index", "op_type", "frame",
    "frames", "frame_numbers", "inside", "upcoming_text", "stop_reason", "finished",
    "history_depth", "breakpoints", "message", "version"], draw);
  draw();
  return () => {
    releaseDraw();
    releaseMessage();
    releaseKeys();
    el.removeEventListener("keydown", onKey);
  };
}

export default { render };
