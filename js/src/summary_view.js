// SummaryView front end. Python makes the summary and every cell; this file draws the
// table (header, rows, totals under it), the "layers / ops" switch and the batch-size
// box, and sends their changes as the group_by and set_batch_size actions.

import { make as element } from "./shared/dom.js";
import { keepKeysInside } from "./shared/keyboard.js";
import { onChanges, sendAction, showMessage } from "./shared/protocol.js";

function render({ model, el }) {
  el.classList.add("fs-summary");
  const releaseKeys = keepKeysInside(el);

  const head = element("div", "fs-summary-head");
  const byLabel = element("label", "fs-summary-by", "rows ");
  const bySelect = element("select");
  for (const [value, text] of [["layer", "layers"], ["op", "ops"]]) {
    const option = element("option", null, text);
    option.value = value;
    bySelect.append(option);
  }
  byLabel.append(bySelect);
  const batchLabel = element("label", "fs-summary-batch", "batch size ");
  const batchBox = element("input");
  batchBox.type = "number";
  batchBox.min = "1";
  batchBox.title = "What an unknown (-1) dim counts as in the MACs";
  batchLabel.append(batchBox);
  head.append(byLabel, batchLabel);

  const table = element("table", "fs-summary-table");
  const thead = element("thead");
  const tbody = element("tbody");
  const tfoot = element("tfoot");
  table.append(thead, tbody, tfoot);
  const note = element("div", "fs-summary-note");
  const message = element("div", "fs-summary-message");
  el.append(head, table, note, message);

  function draw() {
    const columns = model.get("columns");
    const headRow = element("tr");
    columns.forEach((text, i) => headRow.append(element("th", i ? "fs-num" : null, text)));
    thead.replaceChildren(headRow);
    tbody.replaceChildren(...model.get("rows").map((cells) => {
      const row = element("tr");
      cells.forEach((text, i) => row.append(element("td", i ? "fs-num" : null, text)));
      return row;
    }));
    tfoot.replaceChildren(...Object.entries(model.get("totals")).map(([label, text]) => {
      const row = element("tr");
      const cell = element("td", null, `${label}: ${text}`);
      cell.colSpan = columns.length;
      row.append(cell);
      return row;
    }));
    const uncounted = model.get("uncounted");
    note.textContent = uncounted.length
      ? `0 MACs by rule (no multiply-accumulate): ${uncounted.join(", ")}` : "";
    bySelect.value = model.get("by");
    batchBox.value = String(model.get("batch_size"));
  }

  bySelect.addEventListener("change", () => sendAction(model, "group_by", { by: bySelect.value }));
  batchBox.addEventListener("change", () => {
    const value = Number(batchBox.value);
    if (Number.isInteger(value) && value >= 1) {
      sendAction(model, "set_batch_size", { batch_size: value });
    } else {
      batchBox.value = String(model.get("batch_size"));
    }
  });

  draw();
  const stopDrawing = onChanges(model, ["columns", "rows", "totals", "uncounted", "by",
    "batch_size"], draw);
  const stopMessage = showMessage(model, message);
  return () => {
    stopDrawing();
    stopMessage();
    releaseKeys();
  };
}

export default { render };
