// Stand-in for Excalidraw's font-subsetting chunk (HarfBuzz + woff2 as wasm, ~1.7 MB).
// Subsetting only matters when exporting SVG with embedded fonts, which the canvas never does;
// fonts are embedded whole instead.
export const Commands = { Subset: "SUBSET" };

export const toBase64 = async (arrayBuffer) => {
  const bytes = new Uint8Array(arrayBuffer);
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return `data:font/woff2;base64,${btoa(text)}`;
};

export const subsetToBinary = async (arrayBuffer) => arrayBuffer;

export const subsetToBase64 = async (arrayBuffer) => toBase64(arrayBuffer);
