// The automatic layout's engine as its own module (widgets/static/design_canvas_layout.js):
// Python sends it when the canvas first lays a design out (canvas/layout.js), so the
// canvas's bundle and first paint do not carry elkjs's 1.4 MB.
import ELK from "elkjs/lib/elk.bundled.js";

export default ELK;
