// DesignCanvas front end (widgets/canvas/): React Flow drawing the design Python holds.
// The app lives in canvas/; this entry only hands it to anywidget. Its stylesheet is
// design_canvas.css (React Flow's own styles and canvas/canvas.css).
import { createRender } from "@anywidget/react";
import { App } from "./canvas/app.jsx";

export default { render: createRender(App) };
