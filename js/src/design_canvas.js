// DesignCanvas front end (widgets/canvas/): React Flow drawing the design Python holds.
// The app lives in canvas/; this entry only hands it to anywidget. Its stylesheet is
// design_canvas.css (React Flow's own styles and canvas/canvas.css). `initialize` runs
// once per widget model, before and apart from any view of it: new views arrive there as
// patches (canvas/view_patch.js), whether or not the canvas is on screen.
import { createRender } from "@anywidget/react";
import { App } from "./canvas/app.jsx";
import { followPatches } from "./canvas/view_patch.js";
import { sendAction } from "./shared/protocol.js";

export default {
  initialize({ model }) {
    followPatches(model, (action) => sendAction(model, action));
  },
  render: createRender(App),
};
