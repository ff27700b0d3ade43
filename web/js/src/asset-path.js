// Must run before Excalidraw's modules: fonts and lazy assets come from our own origin.
// A page may set window.EXCALIDRAW_ASSET_PATH itself first (e.g. an app under a URL prefix).
if (typeof window.EXCALIDRAW_ASSET_PATH === "undefined") {
  window.EXCALIDRAW_ASSET_PATH = __SWEEPBENCH_ASSET_PATH__;
}
