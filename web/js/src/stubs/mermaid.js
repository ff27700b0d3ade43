// Stand-in for @excalidraw/mermaid-to-excalidraw: the Mermaid dialog is never shown here.
export const parseMermaidToExcalidraw = async () => {
  throw new Error("Mermaid is not bundled in sweepbench");
};
