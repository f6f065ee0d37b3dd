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

export const Toolbar = memo(function Toolbar({ canUndo, canRedo, codeVisible, canGroup, onFit, onToggleCode, onGroup }) {
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

export const CodePane = memo(function CodePane({ code }) {
  return <pre className="fs-code nowheel" data-lines={(code ?? "").split("\n").length}>{code}</pre>;
});
