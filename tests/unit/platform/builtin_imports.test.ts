/**
 * Which `node:` modules the sources import by name. `bun build --compile --bytecode` carries Bun's
 * precompiled code for every built-in module a static `import`, `import()` or `require()` names,
 * with what it needs: `node:http` alone adds ~450 KB to the binary. The start-up paths need the
 * modules below; one that only a rare command needs is loaded with `process.getBuiltinModule`
 * where it is used (as `hermit login`'s callback server loads `node:http`).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "src");

/** The built-in modules the binary carries precompiled code for (what start-up paths use). */
const CARRIED = new Set([
  "buffer",
  "child_process",
  "crypto",
  "events",
  "fs",
  "net",
  "os",
  "path",
  "process",
  "readline",
  "readline/promises",
  "stream",
]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : []
  );
}

/** `node:` modules a file names in a static import, an `import()` or a `require()` (types aside). */
function namedBuiltins(text: string): string[] {
  const found: string[] = [];
  const forms = [
    /^\s*import\s+(?!type\b)[^;]*?\bfrom\s*["']node:([\w/]+)["']/gm,
    /^\s*import\s*["']node:([\w/]+)["']/gm,
    /(?<!typeof\s+)\bimport\(\s*["']node:([\w/]+)["']\s*\)/g,
    /\brequire\(\s*["']node:([\w/]+)["']\s*\)/g,
  ];
  for (const re of forms) for (const m of text.matchAll(re)) found.push(m[1]);
  return found;
}

describe("built-in modules the sources name", () => {
  it("reads the forms the bundler sees, and not type-only imports", () => {
    const text = [
      'import { createServer } from "node:http";',
      'import type { Socket } from "node:net";',
      'import "node:zlib";',
      'const { spawn } = await import("node:child_process");',
      'const tls = require("node:tls");',
      'const os = process.getBuiltinModule("node:os") as typeof import("node:os");',
    ].join("\n");
    assert.deepEqual(namedBuiltins(text).sort(), ["child_process", "http", "tls", "zlib"]);
  });

  it("are only those the start-up paths use (a rare command loads others with getBuiltinModule)", () => {
    const extra = sources(SRC).flatMap((file) =>
      namedBuiltins(readFileSync(file, "utf8"))
        .filter((m) => !CARRIED.has(m))
        .map((m) => `${path.relative(SRC, file)}: node:${m}`)
    );
    assert.deepEqual(extra, []);
  });
});
