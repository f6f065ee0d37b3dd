// What the canvas draws over its graph without touching the node components: the
// debugger link (a stylesheet from `link_state`, debug_link.js), the hover card of an
// output port while a session is linked, the node context menu (right-click) and the
// key help (`?`). Every entry sends one Python action (menu_actions.py, debug_link.py);
// the menu only chooses which. Listeners sit on the widget's root, so they see the
// nodes React Flow draws by their data-id, whatever component drew them.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useModel, useModelState } from "@anywidget/react";
import { useStore } from "@xyflow/react";
import { isTyping } from "../shared/keyboard.js";
import { sendAction } from "../shared/protocol.js";
import { linkStyle, portLines } from "./debug_link.js";
import { farNodeAt, farNodeBox } from "./far_canvas.jsx";

const zoomStep = (s) => Math.round(s.transform[2] * 10) / 10;
const nodeIdOf = (target) => target?.closest?.(".react-flow__node")?.getAttribute("data-id") ?? null;

// The entries of a node's menu: [label, action, args] (null args: a rename field).
export function menuEntries(node, link) {
  if (!node) return [];
  const id = node.id;
  if (node.type === "fold") return [["Unfold", "unfold", { node: id }]]; // a run of layers
  const entries = [["Rename…", "rename", null], ["Duplicate", "duplicate", { ids: [id] }],
    ["Delete", "remove", { ids: [id] }]];
  if (node.type === "group") {
    entries.push([node.collapsed ? "Expand" : "Collapse", "toggle_zone", { group: id }]);
    entries.push(["Enter", "enter", { group: id }]);
  }
  if (node.layer === "memory") entries.push(["Clear memory link", "clear_memory_link", { memory: id }]);
  if (node.layer === "step_input") entries.push(["Clear source", "clear_step_source", { step_input: id }]);
  const live = link?.active && !link.finished;
  entries.push([live ? "Run to here" : "Run to here (debug first)", live ? "run_to_here" : null, { node: id }]);
  return entries;
}

// Up/Down move between the enabled entries (a menu opened from the keyboard starts on
// the first one).
function moveFocus(box, step) {
  const items = [...box.querySelectorAll(".fs-menu-item:not(:disabled)")];
  if (!items.length) return;
  const at = items.indexOf(document.activeElement);
  if (at < 0) items[step < 0 ? items.length - 1 : 0].focus();
  else items[(at + step + items.length) % items.length].focus();
}

function NodeMenu({ menu, node, link, send, onClose }) {
  const [naming, setNaming] = useState(false);
  const [name, setName] = useState(menu.id);
  const box = useRef(null);
  const entries = menuEntries(node, link);
  useEffect(() => { if (menu.keyboard && box.current) moveFocus(box.current, 0); }, [menu]);
  return (
    <div className="fs-menu nokey nodrag nowheel" role="menu" data-node={menu.id} ref={box}
      style={{ left: menu.x, top: menu.y }} onPointerDown={(e) => e.stopPropagation()}
      onKeyDown={(e) => {
        if (e.key === "ArrowDown" || e.key === "ArrowUp") {
          e.preventDefault();
          moveFocus(box.current, e.key === "ArrowDown" ? 1 : -1);
        }
      }}>
      <div className="fs-menu-title">{menu.id}</div>
      {entries.map(([label, action, args]) => (action === "rename" && naming ? (
        <input key="rename" className="fs-field fs-menu-rename nokey" autoFocus value={name}
          aria-label="new name" onChange={(e) => setName(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter") { send("rename", { node: menu.id, name: name.trim() }); onClose(); }
            if (e.key === "Escape") onClose();
            e.stopPropagation();
          }} />
      ) : (
        <button key={label} type="button" role="menuitem" className="fs-menu-item" data-action={action ?? ""}
          disabled={!action}
          onClick={() => {
            if (action === "rename") { setNaming(true); return; }
            send(action, args);
            onClose();
          }}>{label}</button>
      )))}
    </div>
  );
}

function Help({ help, send }) {
  return (
    <div className="fs-help nokey nowheel" role="dialog" aria-label="canvas keys">
      <div className="fs-help-head">
        <b>Canvas keys</b>
        <button type="button" className="fs-help-close" title="close (? or Escape)"
          onClick={() => send("show_help", { visible: false })}>✕</button>
      </div>
      <table><tbody>
        {help.map(([keys, what]) => <tr key={keys}><td><kbd>{keys}</kbd></td><td>{what}</td></tr>)}
      </tbody></table>
    </div>
  );
}

export function Overlays({ rootRef }) {
  const model = useModel();
  const [link] = useModelState("link_state");
  const [help] = useModelState("help");
  const [view] = useModelState("view");
  const [menu, setMenu] = useState(null);   // {id, x, y}: the open context menu
  const [hover, setHover] = useState(null); // {node, index, x, y}: the port under the pointer
  const send = useCallback((action, args) => sendAction(model, action, args), [model]);
  const state = useRef({});
  state.current = { link, help, menu, hover };

  const zoom = useStore(zoomStep); // re-renders only when the zoom moves by a step
  const css = useMemo(() => linkStyle(link, zoom), [link, zoom]);
  useEffect(() => {
    const root = rootRef.current;
    if (!root) return;
    root.dataset.debugNode = link?.active && link.node ? link.node : "";
    root.dataset.debugPhase = link?.active && link.node ? link.phase : "";
  }, [link, rootRef]);

  useEffect(() => {
    const root = rootRef.current;
    if (!root) return undefined;
    const place = (e) => {
      const box = root.getBoundingClientRect();
      return { x: Math.round(e.clientX - box.left), y: Math.round(e.clientY - box.top) };
    };
    const onContextMenu = (e) => {
      // a node React Flow draws, or one the far canvas draws under the pointer
      const id = nodeIdOf(e.target) ?? farNodeAt(root, e.clientX, e.clientY);
      if (!id || e.target.closest(".nokey")) return;
      e.preventDefault();
      e.stopPropagation(); // JupyterLab's own context menu listens on the document
      setMenu({ id, ...place(e) });
    };
    const onPointerDown = (e) => {
      if (state.current.menu && !e.target.closest(".fs-menu")) setMenu(null);
    };
    const onKeyDown = (e) => {
      // the menu of the selected node from the keyboard (the ContextMenu key, Shift+F10)
      if ((e.key === "ContextMenu" || (e.shiftKey && e.key === "F10")) && !isTyping(e)) {
        const chosen = model.get("selected") ?? [];
        const el = chosen.length === 1
          && root.querySelector(`.react-flow__node[data-id="${CSS.escape(chosen[0])}"]`);
        const b = el ? el.getBoundingClientRect() : chosen.length === 1 && farNodeBox(root, chosen[0]);
        if (!b) return;
        e.preventDefault();
        const r = root.getBoundingClientRect();
        setMenu({ id: chosen[0], x: Math.round(b.left - r.left + 8), y: Math.round(b.bottom - r.top + 4), keyboard: true });
        return;
      }
      if (e.key === "Escape") {
        if (state.current.menu) setMenu(null);
        if (state.current.help?.length) send("show_help", { visible: false });
        return;
      }
      if (e.key !== "?" || e.ctrlKey || e.metaKey || e.altKey || isTyping(e) || e.target.closest?.(".nokey")) return;
      e.preventDefault();
      send("show_help", { visible: !(state.current.help?.length) });
    };
    // the port card: a linked session, an output port entered (zoomed out, where a node
    // is a compact block without ports, the block stands for its first output)
    const onOver = (e) => {
      const port = e.target.closest?.(".fs-port-out, .fs-compact");
      const { link: linked, hover: shown } = state.current;
      if (!port || !linked?.active) return;
      const node = nodeIdOf(port);
      const index = Number((port.getAttribute("data-handle") ?? "out:0").split(":")[1]) || 0;
      if (shown && shown.node === node && shown.index === index) return;
      const box = port.getBoundingClientRect();
      const rootBox = root.getBoundingClientRect();
      // right of the port, or under it right-aligned when the root would clip it there
      const under = box.right - rootBox.left > rootBox.width * 0.6;
      setHover(under
        ? { node, index, right: Math.round(rootBox.right - box.right), top: Math.round(box.bottom - rootBox.top + 4) }
        : { node, index, left: Math.round(box.right - rootBox.left + 6), top: Math.round(box.top - rootBox.top) });
      send("inspect_port", { node, index });
    };
    const onOut = (e) => {
      const port = e.target.closest?.(".fs-port-out, .fs-compact");
      if (port && !port.contains(e.relatedTarget)) setHover(null);
    };
    root.addEventListener("contextmenu", onContextMenu);
    root.addEventListener("pointerdown", onPointerDown, true);
    root.addEventListener("keydown", onKeyDown);
    root.addEventListener("mouseover", onOver);
    root.addEventListener("mouseout", onOut);
    return () => {
      root.removeEventListener("contextmenu", onContextMenu);
      root.removeEventListener("pointerdown", onPointerDown, true);
      root.removeEventListener("keydown", onKeyDown);
      root.removeEventListener("mouseover", onOver);
      root.removeEventListener("mouseout", onOut);
    };
  }, [rootRef, send, model]);

  const menuNode = menu ? (view?.nodes ?? []).find((n) => n.id === menu.id) : null;
  const port = link?.port;
  const card = hover && link?.active && port && port.node === hover.node && port.index === hover.index;
  return (
    <>
      {css ? <style data-fs-debug-link="">{css}</style> : null}
      {menu && menuNode ? <NodeMenu key={menu.id} menu={menu} node={menuNode} link={link} send={send} onClose={() => setMenu(null)} /> : null}
      {help?.length ? <Help help={help} send={send} /> : null}
      {card ? (
        <div className="fs-port-card" role="status" style={{ left: hover.left, right: hover.right, top: hover.top }}>
          {portLines(port).map((line) => <div key={line}>{line}</div>)}
        </div>) : null}
    </>
  );
}
