import React, { useEffect, useRef } from "react";

/**
 * <model-viewer> showing one .glb (a URL or a data: URL). The element itself is defined by
 * model-viewer.min.js, which Dash loads alongside this bundle. The wrapper gets data-loaded="1"
 * after the load event, data-error (the message) after an error.
 */
export function SculptureViewer({ id, src, height = 300, alt = "", className, style }) {
  const wrapper = useRef(null);
  const viewer = useRef(null);

  useEffect(() => {
    const node = viewer.current;
    const box = wrapper.current;
    if (!node || !box) return undefined;
    delete box.dataset.loaded;
    delete box.dataset.error;
    const onLoad = () => {
      box.dataset.loaded = "1";
      delete box.dataset.error;
    };
    const onError = (event) => {
      const detail = event.detail || {};
      box.dataset.error = String(detail.sourceError?.message || detail.type || "error");
    };
    node.addEventListener("load", onLoad);
    node.addEventListener("error", onError);
    return () => {
      node.removeEventListener("load", onLoad);
      node.removeEventListener("error", onError);
    };
  }, [src]);

  return (
    <div
      id={id}
      ref={wrapper}
      className={className ? `sb-sculpture ${className}` : "sb-sculpture"}
      style={{ position: "relative", width: "100%", height: `${height}px`, ...style }}
    >
      <model-viewer
        ref={viewer}
        src={src || undefined}
        alt={alt}
        camera-controls=""
        environment-image="neutral"
        exposure="1.1"
        shadow-intensity="1"
        shadow-softness="0.7"
        style={{ width: "100%", height: "100%", display: "block" }}
      />
    </div>
  );
}
