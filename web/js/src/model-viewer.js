// Standalone <model-viewer> (three.js bundled in). Defines the custom element, nothing else.
import "./model-viewer-config.js";
import "@google/model-viewer";
