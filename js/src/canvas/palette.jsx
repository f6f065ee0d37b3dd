// The layer palette: the catalog by category with a search box. A layer is added by
// dragging it onto the canvas (HTML5 drag and drop; the canvas converts the drop point)
// or by double-clicking it (it lands in the middle of what is shown).
import { memo, useMemo, useState } from "react";

export const DRAG_TYPE = "application/x-fluidscope-layer";

// Entries whose name, category or doc contains every word of `query`.
export function search(entries, query) {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return entries;
  return entries.filter((e) => {
    const text = `${e.name} ${e.category} ${e.doc ?? ""}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
}

// [[category, entries], ...] in the palette's order.
function byCategory(entries) {
  const groups = new Map();
  for (const e of entries) {
    if (!groups.has(e.category)) groups.set(e.category, []);
    groups.get(e.category).push(e);
  }
  return [...groups];
}

function firstLine(doc) {
  return (doc ?? "").split("\n").find((l) => l.trim())?.trim() ?? "";
}

function Item({ entry, onAdd }) {
  return (
    <div className="fs-palette-item" draggable data-layer={entry.name} title={firstLine(entry.doc)}
      onDragStart={(e) => {
        e.dataTransfer.setData(DRAG_TYPE, entry.name);
        e.dataTransfer.setData("text/plain", entry.name);
        e.dataTransfer.effectAllowed = "copy";
      }}
      onDoubleClick={() => onAdd(entry.name)}>
      {entry.name}
    </div>
  );
}

export const Palette = memo(function Palette({ entries, onAdd }) {
  const [query, setQuery] = useState("");
  const [closed, setClosed] = useState(() => new Set());
  const found = useMemo(() => search(entries ?? [], query), [entries, query]);
  const groups = useMemo(() => byCategory(found), [found]);
  const toggle = (category) => setClosed((c) => {
    const next = new Set(c);
    if (next.has(category)) next.delete(category); else next.add(category);
    return next;
  });
  return (
    <div className="fs-palette">
      <input className="fs-palette-search nokey nodrag nowheel" type="search" placeholder="search layers"
        value={query} onChange={(e) => setQuery(e.target.value)} />
      <div className="fs-palette-list nowheel">
        {groups.map(([category, items]) => (
          <div key={category} className="fs-palette-group" data-category={category}>
            <div className="fs-palette-category" onClick={() => toggle(category)}>
              {closed.has(category) && !query ? "▸" : "▾"} {category} <span className="fs-count">{items.length}</span>
            </div>
            {closed.has(category) && !query ? null : items.map((e) => <Item key={e.name} entry={e} onAdd={onAdd} />)}
          </div>
        ))}
        {groups.length ? null : <div className="fs-empty">no layer matches</div>}
      </div>
    </div>
  );
});

// The search that opens where a link was dropped on empty canvas: only the layers with a
// slot that takes the dragged output. Enter picks the first; Escape or a click away closes.
export function DropSearch({ at, entries, onPick, onClose }) {
  const [query, setQuery] = useState("");
  const found = useMemo(() => search(entries, query).slice(0, 40), [entries, query]);
  return (
    <div className="fs-drop-search nodrag nowheel" style={{ left: at.left, top: at.top }}
      onMouseDown={(e) => e.stopPropagation()}>
      <input className="fs-drop-search-input nokey nodrag" autoFocus placeholder={`add a layer taking ${at.kind ?? "it"}`}
        value={query} onChange={(e) => setQuery(e.target.value)}
        onBlur={(e) => { if (!e.currentTarget.parentElement.contains(e.relatedTarget)) onClose(); }}
        onKeyDown={(e) => {
          if (e.key === "Escape") onClose();
          if (e.key === "Enter" && found[0]) onPick(found[0].name);
        }} />
      <div className="fs-drop-search-list">
        {found.map((e) => (
          <button type="button" key={e.name} className="fs-drop-search-item" data-layer={e.name}
            title={firstLine(e.doc)} onMouseDown={(ev) => ev.preventDefault()} onClick={() => onPick(e.name)}>
            {e.name} <span className="fs-count">{e.category}</span>
          </button>
        ))}
        {found.length ? null : <div className="fs-empty">no layer takes {at.kind}</div>}
      </div>
    </div>
  );
}
