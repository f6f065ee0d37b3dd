// The toolbar: history, layout and view, the design's next steps (graph, train, debug),
// export to a folder, the code pane; then the breadcrumb of the zone being shown.
import { memo, useState } from "react";
import { useSend } from "./context.js";

function Button({ action, label, title, disabled, onClick }) {
  return (
    <button type="button" className="fs-tool" data-action={action} title={title} disabled={disabled}
      onClick={onClick}>{label}</button>
  );
}

// Find a node by name or layer kind: Enter asks Python (`find`), again for the next match;
// Escape clears the highlight. Ctrl+F inside the canvas comes here.
function FindBox({ found }) {
  const send = useSend();
  const [query, setQuery] = useState("");
  const [index, setIndex] = useState(0);
  const count = found?.query && found.query === query ? found.ids?.length ?? 0 : null;
  return (
    <span className="fs-find-box">
      <input className="fs-field fs-find nokey nodrag" type="search" placeholder="find layer (Ctrl+F)" value={query}
        title="a node's name or layer kind; Enter: next match"
        onChange={(e) => { setQuery(e.target.value); setIndex(0); }}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            const next = found?.query === query ? index + 1 : 0;
            setIndex(next);
            send("find", { query, index: next });
          } else if (e.key === "Escape") {
            setQuery("");
            send("find", { query: "" });
            e.currentTarget.blur();
          }
        }} />
      {count === null ? null : <span className={`fs-find-count${count ? "" : " fs-none"}`}>{count ? `${(index % count) + 1}/${count}` : "none"}</span>}
    </span>
  );
}

export const Toolbar = memo(function Toolbar({ canUndo, canRedo, codeVisible, canGroup, onFit, onToggleCode, onGroup, found }) {
  const send = useSend();
  const [folder, setFolder] = useState("export");
  return (
    <div className="fs-toolbar">
      <Button action="undo" label="↶ undo" title="undo (Ctrl+Z)" disabled={!canUndo} onClick={() => send("undo")} />
      <Button action="redo" label="↷ redo" title="redo (Ctrl+Shift+Z, Ctrl+Y)" disabled={!canRedo} onClick={() => send("redo")} />
      <span className="fs-sep" />
      <Button action="auto_layout" label="auto-layout" title="lay the design out again" onClick={() => send("auto_layout")} />
      <Button action="fit" label="fit" title="show the whole design" onClick={onFit} />
      <Button action="group" label="group" title="make the selected nodes a recurrent group (Ctrl+G)" disabled={!canGroup}
        onClick={onGroup} />
      <span className="fs-sep" />
      <Button action="show_graph" label="build graph" title="show the built program below" onClick={() => send("show_graph")} />
      <Button action="train" label="train" title="open a training monitor below" onClick={() => send("train")} />
      <Button action="debug" label="debug" title="open the debugger below" onClick={() => send("debug")} />
      <span className="fs-sep" />
      <input className="fs-field fs-export-folder nokey nodrag" value={folder} title="folder to export into"
        onChange={(e) => setFolder(e.target.value)}
        onKeyDown={(e) => { if (e.key === "Enter") send("export", { folder }); }} />
      <Button action="export" label="export" title="write the model's files into the folder" disabled={!folder.trim()}
        onClick={() => send("export", { folder })} />
      <span className="fs-sep" />
      <Button action="show_code" label={codeVisible ? "hide code" : "code"} title="the generated Python, kept current"
        onClick={onToggleCode} />
      <span className="fs-sep" />
      <FindBox found={found} />
    </div>
  );
});

export const Breadcrumb = memo(function Breadcrumb({ path, summary, status }) {
  const send = useSend();
  return (
    <div className="fs-breadcrumb">
      <button type="button" className="fs-crumb" data-depth="0" disabled={!path?.length}
        onClick={() => send("leave", { depth: 0 })}>design</button>
      {(path ?? []).map((p, i) => (
        <span key={p.id}>
          <span className="fs-crumb-sep">›</span>
          <button type="button" className="fs-crumb" data-depth={i + 1} disabled={i === path.length - 1}
            onClick={() => send("leave", { depth: i + 1 })}>{p.title}</button>
        </span>
      ))}
      <span className="fs-summary">{summary}</span>
      {status ? <span className="fs-status">{status}</span> : null}
    </div>
  );
});

// The generated code, beside the graph on a wide canvas and below it on a narrow one, so
// the graph keeps at least 60% of the canvas's height; the bar on its edge resizes it.
export const CodePane = memo(function CodePane({ code, beside }) {
  const [share, setShare] = useState(beside ? 0.36 : 0.25);
  const drag = (e) => {
    e.preventDefault();
    const pane = e.currentTarget.parentElement;
    const outer = pane.parentElement.getBoundingClientRect();
    const move = (ev) => {
      const part = beside ? (outer.right - ev.clientX) / outer.width : (outer.bottom - ev.clientY) / outer.height;
      setShare(Math.min(beside ? 0.6 : 0.27, Math.max(0.12, part)));
    };
    const up = () => { window.removeEventListener("pointermove", move); window.removeEventListener("pointerup", up); };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
  };
  const size = `${Math.round(share * 100)}%`;
  return (
    <div className={`fs-code-pane ${beside ? "fs-code-beside" : "fs-code-below"}`}
      style={beside ? { width: size } : { height: size }}>
      <div className="fs-code-resize nodrag" title="drag to resize the code pane" onPointerDown={drag} />
      <pre className="fs-code nowheel" data-lines={(code ?? "").split("\n").length}>{code}</pre>
    </div>
  );
});
