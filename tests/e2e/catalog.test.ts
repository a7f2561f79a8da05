/**
 * The vetted catalog against the real servers: every entry whose package is installed here at its
 * pinned version (the devDependencies hold them all) is spliced into an adapter by `planAdd`, as
 * `hermit add` would, started by hermit's own client with its capabilities (the tool list of some
 * servers depends on them), and must list exactly the tools the entry records, its read-only and
 * include lists being among them. The package is run from node_modules with `node` instead of
 * `npx -y`, so nothing is downloaded; everything else is the entry as written. An entry that cannot
 * run here must say why in OFFLINE_EXCEPTIONS, and none does today: listing tools needs no
 * network and no credentials for any of them (Notion's token and Context7's key are only sent
 * with calls, Playwright starts its browser on the first browser tool).
 * And `hermit add` from the binary: an entry spliced, started through npx and locked; a start
 * that fails leaves hermit.yaml as it was.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import path from "node:path";
import { parse } from "yaml";
import { planAdd } from "../../src/catalog/add.ts";
import { CATALOG, type CatalogEntry } from "../../src/catalog/entries.ts";
import { parseManifest } from "../../src/manifest/load.ts";
import { withGateway } from "../../src/mcp/diagnostics.ts";
import { root, runHermit } from "../helpers/hermit.ts";
import { tempDir } from "../helpers/tmp.ts";

/** Entries that cannot run offline here, and why (none today). */
const OFFLINE_EXCEPTIONS: Record<string, string> = {};

function installed(e: CatalogEntry): { bin: string; version: string } | undefined {
  try {
    const dir = path.join(root, "node_modules", e.package);
    const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
    const bin = typeof pkg.bin === "string" ? pkg.bin : Object.values(pkg.bin as Record<string, string>)[0];
    return { bin: path.join(dir, bin), version: pkg.version };
  } catch {
    return undefined;
  }
}

describe("the vetted catalog lists what its pinned versions really offer", () => {
  it("every entry can run here, or says why not", () => {
    for (const e of CATALOG) {
      const found = installed(e);
      if (OFFLINE_EXCEPTIONS[e.name]) continue;
      assert.ok(found, `${e.name}: ${e.package} is not installed: add it to devDependencies at ${e.version}`);
      assert.equal(
        found.version,
        e.version,
        `${e.name}: node_modules has ${found.version}, the catalog pins ${e.version}`,
      );
    }
  });

  for (const e of CATALOG.filter((e) => !OFFLINE_EXCEPTIONS[e.name])) {
    it(`${e.name} ${e.version}: its tools, read-only and include lists match the real server`, async () => {
      assert.ok(e.readOnly.every((t) => e.tools.includes(t)), "read-only tools are among its tools");
      assert.ok(e.include.every((t) => e.tools.includes(t)), "included tools are among its tools");
      const found = installed(e);
      assert.ok(found);
      const tmp = tempDir();
      try {
        const file = path.join(tmp.path, "hermit.yaml");
        const text = `name: probe\nexports:\n  tools: []\n`;
        writeFileSync(file, text);
        // what hermit add writes, with the sandbox block as it will be once the manifest knows it
        const withPolicy = planAdd(text, file, tmp.path, e, { tools: e.tools }, true);
        const entry = parse(withPolicy.text).mcp_servers[e.name];
        assert.deepEqual(entry.args.slice(0, 2), ["-y", `${e.package}@${e.version}`]);
        assert.ok(entry.sandbox, "the policy is spliced");
        // run it: the same entry without the sandbox key (until the sandbox is merged), node for npx
        const plan = planAdd(text, file, tmp.path, e, { tools: e.tools }, false);
        const spliced = parse(plan.text);
        const u = spliced.mcp_servers[e.name];
        u.command = "node";
        u.args = [found.bin, ...u.args.slice(2)];
        u.env = Object.fromEntries(Object.keys(u.env ?? {}).map((k) => [k, `test-value-for-${k}`]));
        u.cwd = tmp.path;
        delete u.tools.include;
        const m = parseManifest(JSON.stringify(spliced), file, tmp.path).manifest;
        const offered = await withGateway(m, false, async (g) => {
          const conn = (await g.liveUpstreams()).find((u) => u.name === e.name)!;
          assert.ok(conn.connected, `${e.name} started: ${conn.lastError}`);
          return conn.tools.map((t) => ({ name: t.raw, ro: t.tool.annotations?.readOnlyHint }));
        }, { schemaCache: null, lock: "off" });
        assert.deepEqual(
          offered.map((t) => t.name).sort(),
          [...e.tools].sort(),
          `${e.name}: the tools it offers`,
        );
      } finally {
        tmp.cleanup();
      }
    });
  }
});

describe("hermit add", () => {
  const MANIFEST = `# my adapter
name: mine
exports:
  tools: [hello]   # the contract
tools:
  hello:
    description: Says hello
    run: [echo, hi]
`;

  it("splices the entry with comments kept, exports its tools, starts it and locks it; the adapter checks healthy", async () => {
    const tmp = tempDir();
    try {
      writeFileSync(path.join(tmp.path, "hermit.yaml"), MANIFEST);
      const r = await runHermit(["add", tmp.path, "memory", "--tools", "read_graph,search_nodes"], {
        timeoutMs: 120_000,
      });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(
        r.stdout,
        /^added mcp_servers\.memory \(@modelcontextprotocol\/server-memory@2026\.8\.31, trust full\)/,
      );
      assert.match(r.stdout, /wrote hermit\.lock \(1 server, 2 tools\)/);
      const text = readFileSync(path.join(tmp.path, "hermit.yaml"), "utf8");
      assert.ok(
        text.startsWith(
          "# my adapter\nname: mine\nexports:\n  tools: [hello, read_graph, search_nodes]   # the contract\n",
        ),
      );
      assert.match(readFileSync(path.join(tmp.path, "hermit.lock"), "utf8"), /read_graph:\n\s+sha256: /);
      const check = await runHermit(["check", tmp.path], { timeoutMs: 120_000 });
      assert.equal(check.code, 0, check.stdout);
      assert.match(check.stdout, /hermit\.lock pins 1 server and 2 tool definitions/);
      const again = await runHermit(["add", tmp.path, "memory"]);
      assert.equal(again.code, 2);
      assert.match(again.stderr, /already has mcp_servers\.memory; give the new one another name with --as/);
    } finally {
      tmp.cleanup();
    }
  });

  it("on a machine whose npm cache is cold, the package is fetched first (none of its code runs) and it starts", async () => {
    const tmp = tempDir();
    try {
      const home = path.join(tmp.path, "home"); // a fresh HOME: an empty ~/.npm
      const dir = path.join(tmp.path, "adapter");
      mkdirSync(home);
      mkdirSync(dir);
      writeFileSync(path.join(dir, "hermit.yaml"), MANIFEST);
      // someone else's .npmrc in the shared temporary directory must not configure the fetch
      const shared = path.join(tmp.path, "shared-tmp");
      const planted = path.join(tmp.path, "planted-ran");
      mkdirSync(shared);
      writeFileSync(path.join(tmp.path, "evil.sh"), `#!/bin/sh\necho ran > ${planted}\nexec /bin/sh "$@"\n`, {
        mode: 0o755,
      });
      writeFileSync(path.join(shared, ".npmrc"), `script-shell=${path.join(tmp.path, "evil.sh")}\n`);
      const env = { ...process.env, HOME: home, TMPDIR: shared, npm_config_cache: undefined };
      const r = await runHermit(["add", dir, "memory", "--tools", "read_graph"], { env, timeoutMs: 180_000 });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /wrote hermit\.lock \(1 server, 1 tool\)/);
      assert.ok(existsSync(path.join(home, ".npm", "_npx")), "npx's own cache was filled");
      assert.equal(existsSync(planted), false, "a planted .npmrc's script-shell never ran");
    } finally {
      tmp.cleanup();
    }
  });

  it("leaves hermit.yaml as it was, byte for byte, when the server does not start", async () => {
    const tmp = tempDir();
    try {
      writeFileSync(path.join(tmp.path, "hermit.yaml"), MANIFEST);
      const r = await runHermit(["add", tmp.path, "filesystem", "--root", path.join(tmp.path, "missing")], {
        timeoutMs: 120_000,
      });
      assert.equal(r.code, 3, r.stdout + r.stderr);
      assert.match(
        r.stdout,
        /mcp_servers\.filesystem did not start: .*\nnothing changed: hermit\.yaml is as it was\n$/,
      );
      assert.equal(readFileSync(path.join(tmp.path, "hermit.yaml"), "utf8"), MANIFEST);
      assert.equal(existsSync(path.join(tmp.path, "hermit.lock")), false);
    } finally {
      tmp.cleanup();
    }
  });

  it("two adds at once into one adapter: both entries end up in hermit.yaml and hermit.lock", async () => {
    // each reads hermit.yaml, then starts its entry for a second or more, then writes: the one
    // that wrote last used to write what it had read, and the other entry was gone
    const tmp = tempDir();
    try {
      writeFileSync(path.join(tmp.path, "hermit.yaml"), MANIFEST);
      const [a, b] = await Promise.all([
        runHermit(["add", tmp.path, "memory", "--tools", "read_graph"], { timeoutMs: 120_000 }),
        runHermit(["add", tmp.path, "sequential-thinking"], { timeoutMs: 120_000 }),
      ]);
      assert.equal(a.code, 0, a.stdout + a.stderr);
      assert.equal(b.code, 0, b.stdout + b.stderr);
      const m = parse(readFileSync(path.join(tmp.path, "hermit.yaml"), "utf8"));
      assert.deepEqual(Object.keys(m.mcp_servers).sort(), ["memory", "sequential-thinking"]);
      assert.deepEqual([...m.exports.tools].sort(), ["hello", "read_graph", "sequentialthinking"]);
      const lock = parse(readFileSync(path.join(tmp.path, "hermit.lock"), "utf8"));
      assert.deepEqual(Object.keys(lock.servers).sort(), ["memory", "sequential-thinking"]);
      const check = await runHermit(["check", tmp.path], { timeoutMs: 120_000 });
      assert.equal(check.code, 0, check.stdout);
    } finally {
      tmp.cleanup();
    }
  });

  it("the same entry added twice at once: one adds it, the other says the name is taken", async () => {
    const tmp = tempDir();
    try {
      writeFileSync(path.join(tmp.path, "hermit.yaml"), MANIFEST);
      const runs = await Promise.all(
        [0, 1].map(() =>
          runHermit(["add", tmp.path, "memory", "--tools", "read_graph"], { timeoutMs: 120_000 })
        ),
      );
      assert.deepEqual(
        runs.map((r) => r.code).sort(),
        [0, 2],
        runs.map((r) => r.stdout + r.stderr).join("\n"),
      );
      const refused = runs.find((r) => r.code === 2)!;
      assert.match(
        refused.stderr,
        /already has mcp_servers\.memory; give the new one another name with --as/,
      );
      const m = parse(readFileSync(path.join(tmp.path, "hermit.yaml"), "utf8"));
      assert.deepEqual(m.exports.tools, ["hello", "read_graph"]);
    } finally {
      tmp.cleanup();
    }
  });
});
