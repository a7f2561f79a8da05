/**
 * For the sandbox's socket tests: an adapter whose one tool connects to each Unix socket path it
 * is given and answers `{ path: "connected" | error code }`, and stand-in listeners to dial.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import path from "node:path";
import { runHermit } from "./hermit.ts";

const DIAL = `
const net = require("node:net");
const paths = JSON.parse(require("node:fs").readFileSync(0, "utf8")).paths;
const out = {};
let left = paths.length;
for (const p of paths) {
  const s = net.connect(p);
  const done = (v) => { if (p in out) return; out[p] = v; s.destroy(); if (--left === 0) console.log(JSON.stringify(out)); };
  s.on("connect", () => done("connected"));
  s.on("error", (e) => done(e.code));
  setTimeout(() => done("timeout"), 5000).unref();
}
`;

/** `<root>/<name>/`, an adapter with the tool `dial` (`paths` in) under the given `sandbox:`. */
export function dialAdapter(root: string, name: string, sandbox: string): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "dial.js"), DIAL);
  writeFileSync(
    path.join(dir, "hermit.yaml"),
    [
      `name: ${name}`,
      "exports: { tools: [dial] }",
      "tools:",
      "  dial:",
      "    input: { type: object, properties: { paths: { type: array, items: { type: string } } } }",
      "    run: [node, dial.js]",
      "    read_only: true",
      `    sandbox: ${sandbox}`,
    ].join("\n") + "\n",
  );
  return dir;
}

/** A listener at `at` (its directory made) that closes each connection; kept in `servers`. */
export function listenUnix(at: string, servers: Server[]): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    mkdirSync(path.dirname(at), { recursive: true });
    const s = createServer((c) => c.end()).on("error", reject);
    servers.push(s);
    s.listen(at, () => resolve());
  });
}

/** What `dial` in the adapter at `dir` got for each of `paths`, run by hermit with `env` from `cwd`. */
export async function dialFrom(
  dir: string,
  paths: string[],
  opts: { env: Record<string, string>; cwd: string },
): Promise<Record<string, string>> {
  const r = await runHermit(["call", dir, "dial", "--args", JSON.stringify({ paths })], {
    ...opts,
    timeoutMs: 60_000,
  });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  return JSON.parse(r.stdout) as Record<string, string>;
}
