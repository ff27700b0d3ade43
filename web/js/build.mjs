// Builds the sweepbench Dash components into src/sweepbench/web/components/.
//
//   cd web/js && npm ci && node build.mjs
//
// Outputs (all minified IIFE, nothing loaded from a CDN at run time):
//   sweepbench_components.min.js  React components (window.sweepbench_components), Excalidraw 0.18
//                                 with its lazy chunks inlined; React comes from Dash (window.React).
//   excalidraw.min.css            Excalidraw's stylesheet, font urls pointing at ASSET_PATH.
//   model-viewer.min.js           <model-viewer> custom element (three.js inside), standalone.
//   excalidraw/fonts/**           the woff2 files Excalidraw fetches from ASSET_PATH (no Xiaolai).
import * as esbuild from "esbuild";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(here, "../../src/sweepbench/web/components");
const excalidrawDist = path.join(here, "node_modules/@excalidraw/excalidraw/dist/prod");

// Same-origin path the Flask route in components/__init__.py serves (keep the two in step).
const ASSET_PATH = "/_sweepbench/excalidraw/";
// Font families shipped; Xiaolai (CJK, ~13 MB in 209 subsets) is left out on purpose.
const FONT_DIRS = ["Assistant", "Cascadia", "ComicShanns", "Excalifont", "Liberation", "Lilita", "Nunito", "Virgil"];
// Locales kept (the component always runs in English).
const KEEP_LOCALES = /^\.\/locales\/(en|percentages)-[A-Z0-9]+\.js$/;

const stub = (name) => path.join(here, "src/stubs", name);

/** Resolve React to the copies Dash already serves, and stub what we never use. */
const sweepbenchPlugin = {
  name: "sweepbench",
  setup(build) {
    build.onResolve({ filter: /^react$/ }, () => ({ path: stub("react.js") }));
    build.onResolve({ filter: /^react-dom(\/client)?$/ }, () => ({ path: stub("react-dom.js") }));
    // Mermaid (~3 MB with its own chunks) only powers the "Mermaid to Excalidraw" dialog.
    build.onResolve({ filter: /^@excalidraw\/mermaid-to-excalidraw$/ }, () => ({ path: stub("mermaid.js") }));
    // Font subsetting (HarfBuzz + woff2 wasm, ~1.7 MB) only serves SVG export with embedded fonts.
    build.onResolve({ filter: /^\.\/subset-shared\.chunk\.js$/ }, () => ({ path: stub("subset-shared.js") }));
    build.onResolve({ filter: /^\.\/subset-worker\.chunk\.js$/ }, () => ({ path: stub("subset-worker.js") }));
    build.onResolve({ filter: /^\.\/locales\// }, (args) =>
      KEEP_LOCALES.test(args.path) ? undefined : { path: stub("locale.js") },
    );
    // Excalidraw appends https://esm.sh/... as the last source of every font; drop that fallback
    // so a font we do not ship fails locally instead of reaching a CDN.
    build.onLoad({ filter: /@excalidraw[\\/]excalidraw[\\/]dist[\\/]prod[\\/]chunk-[A-Z0-9]+\.js$/ }, async (args) => {
      let text = await fs.promises.readFile(args.path, "utf8");
      const fallback = /(\w+)\.push\(new URL\((\w+),(\w+)\.ASSETS_FALLBACK_URL\)\),/g;
      const hits = text.match(fallback)?.length ?? 0;
      if (hits) {
        text = text.replace(fallback, "");
        patched.fontFallback += hits;
      }
      // Do not register the Xiaolai faces we do not ship: CJK text then falls straight back to
      // the system's fonts instead of requesting files that would 404.
      const cjk = text.match(/\b([\w$]+)="Xiaolai"/);
      if (cjk) {
        const init = new RegExp(`\\b[\\w$]+\\(${cjk[1].replace("$", "\\$")},\\.\\.\\.[\\w$]+\\),`, "g");
        patched.xiaolai += text.match(init)?.length ?? 0;
        text = text.replace(init, "");
      }
      return { contents: text, loader: "js" };
    });
  },
};
const patched = { fontFallback: 0, xiaolai: 0 };

const common = {
  bundle: true,
  minify: true,
  format: "iife",
  target: ["chrome100", "firefox100", "safari15"],
  legalComments: "none",
  logLevel: "warning",
  define: { "process.env.NODE_ENV": '"production"', "process.env.IS_PREACT": '"false"' },
};

fs.mkdirSync(out, { recursive: true });

const components = await esbuild.build({
  ...common,
  metafile: Boolean(process.env.ANALYZE),
  entryPoints: [path.join(here, "src/index.jsx")],
  outfile: path.join(out, "sweepbench_components.min.js"),
  jsx: "automatic",
  plugins: [sweepbenchPlugin],
  define: { ...common.define, __SWEEPBENCH_ASSET_PATH__: JSON.stringify(ASSET_PATH) },
});
if (process.env.ANALYZE) console.log(await esbuild.analyzeMetafile(components.metafile));
if (patched.fontFallback !== 1 || patched.xiaolai !== 1) {
  throw new Error(`expected one esm.sh fallback and one Xiaolai registration: ${JSON.stringify(patched)}`);
}

const css =
  fs
    .readFileSync(path.join(excalidrawDist, "index.css"), "utf8")
    .replaceAll('url("./fonts/', `url("${ASSET_PATH}fonts/`) +
  fs.readFileSync(path.join(here, "src/ExcalidrawCanvas.css"), "utf8");
const cssOut = await esbuild.transform(css, { loader: "css", minify: true, legalComments: "none" });
fs.writeFileSync(path.join(out, "excalidraw.min.css"), cssOut.code);

await esbuild.build({
  ...common,
  entryPoints: [path.join(here, "src/model-viewer.js")],
  outfile: path.join(out, "model-viewer.min.js"),
});

const fontsOut = path.join(out, "excalidraw/fonts");
fs.rmSync(fontsOut, { recursive: true, force: true });
for (const dir of FONT_DIRS) {
  fs.cpSync(path.join(excalidrawDist, "fonts", dir), path.join(fontsOut, dir), { recursive: true });
}

for (const name of ["sweepbench_components.min.js", "excalidraw.min.css", "model-viewer.min.js"]) {
  const size = fs.statSync(path.join(out, name)).size;
  console.log(`${name.padEnd(32)} ${(size / 1024).toFixed(0).padStart(6)} KiB`);
}
