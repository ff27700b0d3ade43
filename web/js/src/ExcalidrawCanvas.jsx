import React, { useCallback, useEffect, useRef, useState } from "react";
import { CaptureUpdateAction, Excalidraw, restoreElements } from "@excalidraw/excalidraw";

// Module-level constants: Excalidraw is memoised, so stable props mean Dash's prop updates never
// re-render it (each `elements` change goes through the imperative API instead).
const UI_OPTIONS = {
  canvasActions: {
    changeViewBackgroundColor: false,
    clearCanvas: false,
    export: false,
    loadScene: false,
    saveAsImage: false,
    saveToActiveFile: false,
    toggleTheme: false,
  },
  tools: { image: false },
};
const NONE = []; // one default array, so a missing prop does not re-run the scene effect
const INITIAL_DATA = { elements: [], appState: { viewBackgroundColor: "#ffffff" } };
// refreshDimensions: models guess text widths; measure them (labels wrap inside their containers).
const RESTORE_OPTIONS = { refreshDimensions: true, repairBindings: true };

/** Put `elements` on the canvas, refit the view, and stamp the wrapper's data attributes. */
function apply(api, node, elements, final, capture) {
  const list = Array.isArray(elements) ? elements : [];
  const restored = list.length ? restoreElements(list, null, RESTORE_OPTIONS) : [];
  api.updateScene({
    elements: restored,
    captureUpdate: capture,
  });
  if (restored.length) {
    api.scrollToContent(restored, { fitToContent: true, animate: false });
  } else {
    api.updateScene({
      appState: { scrollX: 0, scrollY: 0, zoom: { value: 1 } },
      captureUpdate: CaptureUpdateAction.NEVER,
    });
  }
  if (!node) return;
  node.dataset.elements = String(restored.length);
  if (final) node.dataset.final = "1";
  else delete node.dataset.final;
  node.dataset.updatedAt = String(performance.timeOrigin + performance.now());
}

/**
 * A view-only Excalidraw scene that follows its `elements` prop without re-mounting.
 * Streaming updates are not recorded in history; `final` commits the last one as one step.
 * The wrapper carries data-ready, data-elements, data-final and data-updated-at (epoch ms,
 * fractional), all set on the DOM node directly so they never cause a React render.
 */
export function ExcalidrawCanvas({ id, elements = NONE, final = false, height = 340, className, style }) {
  const wrapper = useRef(null);
  const [api, setApi] = useState(null);
  const onApi = useCallback((value) => setApi(value), []);

  useEffect(() => {
    if (api && wrapper.current) wrapper.current.dataset.ready = "1";
  }, [api]);

  // A cell that was hidden (zero size) when the scene arrived refits once it gets a size.
  useEffect(() => {
    const node = wrapper.current;
    if (!api || !node || typeof ResizeObserver === "undefined") return undefined;
    let frame = 0;
    let last = "";
    const observer = new ResizeObserver(([entry]) => {
      const { width, height: h } = entry.contentRect;
      const size = `${Math.round(width)}x${Math.round(h)}`;
      if (size === last || !width || !h) return;
      last = size;
      cancelAnimationFrame(frame);
      // Two frames: Excalidraw's own observer updates its viewport size first.
      frame = requestAnimationFrame(() => {
        frame = requestAnimationFrame(() => {
          const current = api.getSceneElements();
          if (current.length) api.scrollToContent(current, { fitToContent: true, animate: false });
        });
      });
    });
    observer.observe(node);
    return () => {
      cancelAnimationFrame(frame);
      observer.disconnect();
    };
  }, [api]);

  // `final` commits the scene as one undoable step; streamed updates leave no history.
  const latest = useRef({ elements, final });
  latest.current = { elements, final };
  useEffect(() => {
    const capture = final ? CaptureUpdateAction.IMMEDIATELY : CaptureUpdateAction.NEVER;
    if (api) apply(api, wrapper.current, elements, final, capture);
  }, [api, elements, final]);

  // Text is measured with whatever font is loaded; once Excalidraw's fonts arrive, measure again.
  useEffect(() => {
    const fonts = document.fonts;
    if (!api || !fonts) return undefined;
    const remeasure = () => {
      const { elements: current, final: done } = latest.current;
      if (current?.length) apply(api, wrapper.current, current, done, CaptureUpdateAction.NEVER);
    };
    fonts.addEventListener("loadingdone", remeasure);
    return () => fonts.removeEventListener("loadingdone", remeasure);
  }, [api]);

  return (
    <div
      id={id}
      ref={wrapper}
      className={className ? `sb-excalidraw ${className}` : "sb-excalidraw"}
      style={{ position: "relative", width: "100%", height: `${height}px`, ...style }}
    >
      <Excalidraw
        excalidrawAPI={onApi}
        initialData={INITIAL_DATA}
        viewModeEnabled
        zenModeEnabled
        theme="light"
        UIOptions={UI_OPTIONS}
        detectScroll={false}
        handleKeyboardGlobally={false}
        autoFocus={false}
      />
    </div>
  );
}
