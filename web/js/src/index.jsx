import "./asset-path.js";
import { ExcalidrawCanvas } from "./ExcalidrawCanvas.jsx";
import { SculptureViewer } from "./SculptureViewer.jsx";

// Dash resolves a component as window[namespace][type].
window.sweepbench_components = { ExcalidrawCanvas, SculptureViewer };
