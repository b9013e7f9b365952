// Render a Graphviz source to PNG with the project's pinned packages only (package.json):
// Graphviz compiled to WebAssembly (@viz-js/viz) lays the graph out and writes SVG, resvg
// compiled to WebAssembly (@resvg/resvg-wasm) rasterizes it with the font files given, so
// the picture does not depend on the machine's Graphviz, Cairo or fonts.
//
//   node scripts/graphviz_png.mjs ENGINE DPI SOURCE.dot OUT.png FONT.ttf [FONT.ttf ...]
//
// ENGINE is a Graphviz layout (dot; nop2 is `neato -n2`: positions as given), DPI the
// picture's resolution (Graphviz's points are 1/72 inch).
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

import { instance } from "@viz-js/viz";
import { initWasm, Resvg } from "@resvg/resvg-wasm";

const [engine, dpi, source, output, ...fonts] = process.argv.slice(2);
if (!output || fonts.length === 0) {
  console.error("usage: graphviz_png.mjs ENGINE DPI SOURCE.dot OUT.png FONT.ttf [...]");
  process.exit(2);
}

const viz = await instance();
if (!viz.engines.includes(engine)) {
  console.error(`${engine}: not a layout of this Graphviz (${viz.engines.join(", ")})`);
  process.exit(2);
}
const result = viz.render(readFileSync(source, "utf8"), { format: "svg", engine });
for (const error of result.errors) {
  console.error(`${source}: ${error.level}: ${error.message}`);
}
if (result.status !== "success") {
  process.exit(1);
}

const require = createRequire(import.meta.url);
await initWasm(readFileSync(require.resolve("@resvg/resvg-wasm/index_bg.wasm")));
const picture = new Resvg(result.output, {
  fitTo: { mode: "zoom", value: Number(dpi) / 72 },
  background: "#ffffff",
  font: {
    fontBuffers: fonts.map((path) => readFileSync(path)),
    defaultFontFamily: "DejaVu Sans",
    sansSerifFamily: "DejaVu Sans",
  },
});
writeFileSync(output, picture.render().asPng());
console.log(`${output}: Graphviz ${viz.graphvizVersion}, ${picture.width}x${picture.height} pt`);
