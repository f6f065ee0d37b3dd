// GraphView with in-browser Graphviz: the same front end, given viz.js. Python sends this
// bundle as the widget's module only when the graph is laid out in the browser.
import { createGraphView } from "./graph_view.js";
import { loadViz } from "./viz_loader.js";

export default createGraphView({ loadViz });
