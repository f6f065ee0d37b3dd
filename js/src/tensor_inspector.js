// TensorInspector front end: draws the summaries Python computed; it never computes
// statistics. Arrays arrive as binary buffers (DataView) inside the value/gradient dicts.
// Every control sends an action that is a Python method (select, set_sample,
// set_show_difference, set_show_optimizer_state, save_npy, check_gradient).
//
// Hooks for browser tests: .fs-insp root (data-selected, data-frame, data-version);
// select.fs-insp-select (optgroup[data-group]); input.fs-insp-opt-state; input.fs-insp-diff;
// button.fs-insp-save, button.fs-insp-check; .fs-insp-where; .fs-insp-message;
// .fs-insp-saved; .fs-insp-pane[data-role="value"|"gradient"|"difference"][data-state];
// [data-field="shape"|"dtype"|"place"|"lod"] .fs-insp-text; [data-stat=...] .fs-insp-number;
// .fs-insp-check-result[data-ok][data-max-error]; plots: see tensor_inspector_plots.js.

import { typedArray } from "./shared/buffers.js";
import { make as el } from "./shared/dom.js";
import { keepKeysInside } from "./shared/keyboard.js";
import { onChanges, sendAction, showMessage } from "./shared/protocol.js";
import { featureGrid, fmt, heatmapBlock, histogramBlock } from "./tensor_inspector_plots.js";

const STATS = ["min", "max", "mean", "std", "nan", "inf"];
const FOLDED = "optimizer state";

function field(list, key, label, text) {
  const row = el("div", "fs-insp-field");
  row.dataset.field = key;
  row.append(el("span", "fs-insp-label", label), el("span", "fs-insp-text", text));
  list.append(row);
}

function lodText(lod) {
  if (!lod || !lod.length) return "none";
  return lod.map((level) => (level.length > 12
    ? `[${level.slice(0, 12).join(", ")}, … ${level[level.length - 1]}]`
    : `[${level.join(", ")}]`)).join(" ");
}

function statsBlock(stats) {
  const box = el("div", "fs-insp-stats");
  for (const key of STATS) {
    const cell = el("div", "fs-insp-stat");
    cell.dataset.stat = key;
    if ((key === "nan" || key === "inf") && stats[key] > 0) cell.classList.add("fs-insp-bad");
    cell.append(el("span", "fs-insp-label", key), el("span", "fs-insp-number", fmt(stats[key])));
    box.append(cell);
  }
  return box;
}

function sequencesBlock(seqs) {
  const table = el("table", "fs-insp-seqs");
  const head = el("tr");
  for (const h of ["#", "rows", "len", "min", "max", "mean", "std", "nan", "inf"]) {
    head.append(el("th", "", h));
  }
  table.append(head);
  for (const r of seqs.rows) {
    const tr = el("tr");
    tr.dataset.sequence = String(r.index);
    if (r.nan > 0 || r.inf > 0) tr.classList.add("fs-insp-bad");
    for (const v of [r.index, `${r.start}–${r.end}`, r.length, r.min, r.max, r.mean, r.std,
      r.nan, r.inf]) tr.append(el("td", "", fmt(v)));
    table.append(tr);
  }
  const box = el("details", "fs-insp-seqs-box");
  const more = seqs.total > seqs.rows.length ? ` (first ${seqs.rows.length})` : "";
  box.append(el("summary", "fs-insp-caption", `${seqs.total} sequences${more}`), table);
  box.open = seqs.rows.length <= 8;
  return box;
}

function previewBlock(p) {
  const values = Array.from(typedArray(p.data, "f8"), fmt);
  const more = p.total > p.count ? ` … (${p.total} values)` : "";
  return el("div", "fs-insp-preview", `[${values.join(", ")}${more}]`);
}

const STATE_TEXT = {
  none: "Pick a variable.",
  unset: "not computed yet at this position",
  missing: "no such variable in the program",
};
const TITLES = { value: "value", gradient: "gradient", difference: "change since the previous stop" };

function pane(role, info, onSample) {
  const box = el("div", "fs-insp-pane");
  box.dataset.role = role;
  box.dataset.state = info.state ?? "none";
  box.append(el("div", "fs-insp-title", `${TITLES[role]}: ${info.name || "—"}`));
  if (info.state !== "value") {
    const text = info.state === "holder" ? `${info.type} (not a tensor)`
      : info.state === "error" ? `could not be read: ${info.error}`
        : info.reason ?? STATE_TEXT[info.state] ?? "";
    box.append(el("div", "fs-insp-empty", text));
    return box;
  }
  const fields = el("div", "fs-insp-fields");
  field(fields, "shape", "shape", `[${info.shape.join(", ")}]`);
  field(fields, "dtype", "dtype", info.dtype);
  if (info.place) field(fields, "place", "place", info.place);
  if (role === "difference") {
    field(fields, "changed", "changed", `${info.changed} of ${info.size}`);
    field(fields, "since", "since", info.since);
  } else {
    field(fields, "lod", "LoD", lodText(info.lod));
  }
  if (info.note) field(fields, "note", "note", info.note);
  box.append(fields);
  if (info.stats) box.append(statsBlock(info.stats));
  if (info.histogram && info.stats && info.stats.finite > 0) box.append(histogramBlock(info.histogram));
  if (info.feature_maps) box.append(featureGrid(info.feature_maps, onSample));
  else if (info.heatmap) box.append(heatmapBlock(info.heatmap, info.sequences));
  if (info.sequences) box.append(sequencesBlock(info.sequences));
  if (info.preview) box.append(previewBlock(info.preview));
  return box;
}

function checkBlock(check) {
  const box = el("div", "fs-insp-check-result");
  box.dataset.ok = String(check.ok);
  box.dataset.maxError = String(check.max_error);
  box.classList.toggle("fs-insp-bad", !check.ok);
  const verdict = check.ok ? "agrees" : "DISAGREES";
  box.append(el("div", "fs-insp-title",
    `gradient check of ${check.parameter}: ${verdict} — max relative error ${fmt(check.max_error)}`
    + ` (tolerance ${fmt(check.tolerance)})`));
  box.append(el("div", "fs-insp-caption",
    `float64 central differences of ${check.loss} against the generated backward, `
    + `${check.checked} of ${check.size} elements, at ${check.where}`));
  const run = check.run ?? { available: false, reason: "" };
  const runLine = el("div", "fs-insp-check-run", run.available
    ? `this run's own ${run.dtype} gradient: max relative error ${fmt(run.max_error)} `
      + `(${run.ok ? "agrees" : "DISAGREES"}, tolerance ${fmt(run.tolerance)})`
    : `this run's own gradient: ${run.reason}`);
  runLine.dataset.available = String(run.available);
  if (run.available && !run.ok) runLine.classList.add("fs-insp-bad");
  box.append(runLine);
  const table = el("table", "fs-insp-seqs");
  const head = el("tr");
  const columns = ["element", "float64 backward", "numeric", "rel. error"];
  if (run.available) columns.push("run's gradient", "rel. error");
  for (const h of columns) head.append(el("th", "", h));
  table.append(head);
  for (const r of check.rows) {
    const tr = el("tr");
    if (r.error === null || r.error > check.tolerance) tr.classList.add("fs-insp-bad");
    const cells = [`[${r.index.join(", ")}]`, r.analytic, r.numeric, r.error];
    if (run.available) cells.push(r.run, r.run_error);
    for (const v of cells) tr.append(el("td", "", fmt(v)));
    table.append(tr);
  }
  box.append(table);
  return box;
}

function render({ model, el: root }) {
  root.classList.add("fs-insp");
  const releaseKeys = keepKeysInside(root);

  const bar = el("div", "fs-insp-bar");
  const picker = el("select", "fs-insp-select");
  picker.title = "variable to inspect";
  picker.addEventListener("change", () => sendAction(model, "select", { name: picker.value }));
  const optLabel = el("label", "fs-insp-toggle");
  const optBox = el("input", "fs-insp-opt-state");
  optBox.type = "checkbox";
  optBox.addEventListener("change", () => sendAction(model, "set_show_optimizer_state",
    { on: optBox.checked }));
  const optText = el("span", "", "optimizer state");
  optLabel.append(optBox, optText);
  const diffLabel = el("label", "fs-insp-toggle");
  const diffBox = el("input", "fs-insp-diff");
  diffBox.type = "checkbox";
  diffBox.addEventListener("change", () => sendAction(model, "set_show_difference",
    { on: diffBox.checked }));
  diffLabel.append(diffBox, el("span", "", "diff vs previous stop"));
  diffLabel.title = "show how the value changed since the previous stop";
  const save = el("button", "fs-insp-save", "save .npy");
  save.title = "write the value with numpy.save into the kernel's working directory";
  save.addEventListener("click", () => sendAction(model, "save_npy"));
  const check = el("button", "fs-insp-check", "check gradient");
  check.title = "float64 central differences against the generated backward, at this stop";
  check.addEventListener("click", () => {
    check.disabled = true;
    check.textContent = "checking…";
    sendAction(model, "check_gradient");
  });
  const where = el("span", "fs-insp-where");
  bar.append(el("span", "fs-insp-label", "variable"), picker, optLabel, diffLabel, save, check,
    where);
  const message = el("div", "fs-insp-message");
  const saved = el("div", "fs-insp-saved");
  const checkArea = el("div", "fs-insp-check-area");
  const panes = el("div", "fs-insp-panes");
  root.append(bar, message, saved, checkArea, panes);
  const releaseMessage = showMessage(model, message);
  const onSample = (sample) => sendAction(model, "set_sample", { sample });

  function fillPicker(selected) {
    const groups = model.get("groups") ?? {};
    const showFolded = model.get("show_optimizer_state");
    const none = el("option", "", "(none)");
    none.value = "";
    const children = [none];
    let listed = false;
    for (const [group, names] of Object.entries(groups)) {
      if (!names.length || (group === FOLDED && !showFolded && !names.includes(selected))) continue;
      const og = el("optgroup");
      og.label = `${group} (${names.length})`;
      og.dataset.group = group;
      for (const n of names) {
        const o = el("option", "", n);
        o.value = n;
        og.append(o);
        listed = listed || n === selected;
      }
      children.push(og);
    }
    if (selected && !listed) {
      const o = el("option", "", selected);
      o.value = selected;
      children.push(o);
    }
    picker.replaceChildren(...children);
    picker.value = selected;
    optBox.checked = showFolded;
    optText.textContent = `optimizer state (${(groups[FOLDED] ?? []).length})`;
  }

  function draw() {
    const selected = model.get("selected");
    fillPicker(selected);
    const frame = model.get("frame");
    where.textContent = `at ${model.get("where")}${frame === null ? "" : ` · reading frame ${frame}`}`;
    const isParameter = ((model.get("groups") ?? {}).parameters ?? []).includes(selected);
    check.disabled = !isParameter;
    check.textContent = "check gradient";
    check.title = isParameter
      ? "float64 central differences against the generated backward, at this stop"
      : "select a parameter to check its gradient";
    save.disabled = model.get("value").state !== "value";
    diffBox.checked = model.get("show_difference");
    const path = model.get("saved");
    saved.textContent = path ? `saved to ${path}` : "";
    saved.hidden = !path;
    const result = model.get("gradient_check");
    checkArea.replaceChildren(...(result && result.parameter === selected ? [checkBlock(result)] : []));
    const shown = [pane("value", model.get("value"), onSample),
      pane("gradient", model.get("gradient"), onSample)];
    if (model.get("show_difference")) shown.push(pane("difference", model.get("difference"), onSample));
    panes.replaceChildren(...shown);
    root.dataset.selected = selected;
    root.dataset.frame = frame === null ? "" : String(frame);
    root.dataset.version = String(model.get("version"));
  }

  const releaseDraw = onChanges(model, ["variables", "groups", "selected", "value", "gradient",
    "difference", "show_difference", "show_optimizer_state", "gradient_check", "saved", "where",
    "frame", "version", "message"], draw);
  draw();
  return () => {
    releaseDraw();
    releaseMessage();
    releaseKeys();
  };
}

export default { render };
