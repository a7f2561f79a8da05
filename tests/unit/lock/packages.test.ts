/**
 * Pinned packages: which package an `npx`/`bunx`/`bun x`/`uvx` entry runs and whether it names one
 * exact version; the spec rewritten to the locked version at spawn (never an exact version the
 * manifest asks for); and which version ran, read from an installed package's own files (npm and
 * bun `package.json`, a uv environment's `dist-info`) and from npm's `_npx` cache records, over
 * directory trees laid out as the runners lay them out.
 */
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { isPinnable, packageOf, type PackageRef, pinArgs } from "../../../src/lock/packages.ts";
import { versionAtPath, versionFromCache } from "../../../src/lock/resolve.ts";
import { tempDir } from "../../helpers/tmp.ts";

const tmp = tempDir();
after(() => tmp.cleanup());

const ref = (command: string, args: string[]) => packageOf(command, args) as PackageRef;

describe("the package an entry runs", () => {
  it("reads npx specs: scoped, versioned, after options, with --package", () => {
    assert.deepEqual(
      [ref("npx", ["-y", "@scope/srv"])].map((r) => [r.runner, r.name, r.requested, r.exact, r.index]),
      [["npx", "@scope/srv", undefined, false, 1]],
    );
    assert.equal(ref("npx", ["--yes", "--registry", "http://r", "srv@1.2.3", "--flag"]).exact, true);
    assert.equal(ref("npx", ["-y", "srv@^1.2"]).exact, false);
    assert.equal(ref("npx", ["-y", "srv@latest"]).requested, "latest");
    assert.equal(ref("/usr/local/bin/npx.cmd", ["-y", "srv"]).name, "srv");
    const p = ref("npx", ["-y", "--package=@s/pkg@2", "cmd", "arg"]);
    assert.deepEqual([p.name, p.requested, p.index, p.prefix], ["@s/pkg", "2", 1, "--package="]);
    assert.equal(ref("npx", ["-p", "pkg", "-c", "run it"]).name, "pkg");
  });

  it("reads bunx, bun x and uvx specs", () => {
    assert.deepEqual([ref("bunx", ["srv@1.0.0"]).exact, ref("bun", ["x", "srv"]).name], [true, "srv"]);
    assert.equal(packageOf("bun", ["run", "x.ts"]), undefined, "bun run is not a runner");
    const u = ref("uvx", ["mcp-server-fetch"]);
    assert.deepEqual([u.runner, u.name, u.exact], ["uvx", "mcp-server-fetch", false]);
    assert.equal(ref("uvx", ["mcp-server-fetch@2025.4.7"]).exact, true);
    assert.equal(ref("uvx", ["--python", "3.12", "pkg==1.0"]).exact, true);
    const from = ref("uvx", ["--from", "pkg[extra]>=1", "tool"]);
    assert.deepEqual([from.name, from.requested, from.requirement], ["pkg[extra]", ">=1", true]);
  });

  it("says why a spec cannot be pinned, and ignores other commands", () => {
    for (const spec of ["./local", "github:o/r", "https://x/y.tgz", "alias@npm:real@1"]) {
      const p = packageOf("npx", ["-y", spec]);
      assert.ok(p && !isPinnable(p), spec);
    }
    assert.match(
      (packageOf("npx", ["-y", "-p", "a", "-p", "b", "x"]) as { why: string }).why,
      /several packages/,
    );
    assert.equal(packageOf("node", ["server.js"]), undefined);
  });
});

describe("the pin at spawn", () => {
  const locked = { runner: "npx" as const, name: "@scope/srv", version: "1.2.3" };
  it("rewrites an unpinned or ranged spec to the locked version, nothing else", () => {
    assert.deepEqual(pinArgs("npx", ["-y", "@scope/srv", "/data"], locked), [
      "-y",
      "@scope/srv@1.2.3",
      "/data",
    ]);
    assert.deepEqual(pinArgs("npx", ["-y", "@scope/srv@^1"], locked), ["-y", "@scope/srv@1.2.3"]);
    assert.deepEqual(pinArgs("npx", ["-y", "--package=@scope/srv", "cmd"], locked), [
      "-y",
      "--package=@scope/srv@1.2.3",
      "cmd",
    ]);
  });
  it("keeps an exact version the manifest asks for, another package, and entries without a lock", () => {
    assert.deepEqual(pinArgs("npx", ["-y", "@scope/srv@2.0.0"], locked), ["-y", "@scope/srv@2.0.0"]);
    assert.deepEqual(pinArgs("npx", ["-y", "other"], locked), ["-y", "other"]);
    assert.deepEqual(pinArgs("npx", ["-y", "@scope/srv"], undefined), ["-y", "@scope/srv"]);
    assert.deepEqual(pinArgs("uvx", ["srv"], { ...locked, name: "srv" }), ["srv"], "another registry");
  });
  it("pins the package whichever npm runner locked it: the registry and name are what ran", () => {
    assert.deepEqual(pinArgs("bunx", ["@scope/srv"], locked), ["@scope/srv@1.2.3"]);
    assert.deepEqual(pinArgs("deno", ["run", "-A", "npm:@scope/srv"], locked), [
      "run",
      "-A",
      "npm:@scope/srv@1.2.3",
    ]);
  });
  it("pins uvx as uvx spells it: tool@version, or a == requirement after --from", () => {
    const py = { runner: "uvx" as const, name: "mcp-server-fetch", version: "2025.4.7" };
    assert.deepEqual(pinArgs("uvx", ["mcp-server-fetch"], py), ["mcp-server-fetch@2025.4.7"]);
    assert.deepEqual(pinArgs("uvx", ["--from", "MCP_Server.Fetch", "x"], py), [
      "--from",
      "MCP_Server.Fetch==2025.4.7",
      "x",
    ]);
  });
});

describe("the version that ran", () => {
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  };

  it("npm and bun: the package.json of that name above the script a process runs (through .bin links)", () => {
    const nm = path.join(tmp.path, "_npx", "f32bc2962f0d44f9", "node_modules");
    write(
      path.join(nm, "@scope", "srv", "package.json"),
      JSON.stringify({ name: "@scope/srv", version: "1.4.0" }),
    );
    write(path.join(nm, "@scope", "srv", "dist", "index.js"), "");
    write(
      path.join(nm, "@scope", "srv", "node_modules", "dep", "package.json"),
      JSON.stringify({ name: "dep", version: "9.9.9" }),
    );
    mkdirSync(path.join(nm, ".bin"), { recursive: true });
    symlinkSync("../@scope/srv/dist/index.js", path.join(nm, ".bin", "srv"));
    const r = ref("npx", ["-y", "@scope/srv"]);
    assert.equal(versionAtPath(r, path.join(nm, ".bin", "srv")), "1.4.0");
    assert.equal(versionAtPath(r, "/usr/bin/env"), undefined);
    assert.equal(versionAtPath(r, "relative/path"), undefined);
  });

  it("uv: the dist-info of the package in the environment the script belongs to", () => {
    const env = path.join(tmp.path, "uv", "archive-v0", "abc");
    write(path.join(env, "bin", "mcp-server-fetch"), "");
    mkdirSync(path.join(env, "lib", "python3.12", "site-packages", "mcp_server_fetch-2025.4.7.dist-info"), {
      recursive: true,
    });
    mkdirSync(path.join(env, "lib", "python3.12", "site-packages", "httpx-0.28.1.dist-info"), {
      recursive: true,
    });
    assert.equal(
      versionAtPath(ref("uvx", ["mcp-server-fetch"]), path.join(env, "bin", "mcp-server-fetch")),
      "2025.4.7",
    );
  });

  it("npx's cache: the _npx directory made for exactly this spec", () => {
    const cache = path.join(tmp.path, "npm-cache");
    const made = (hash: string, specs: string[], version: string) => {
      write(path.join(cache, "_npx", hash, "package.json"), JSON.stringify({ _npx: { packages: specs } }));
      write(
        path.join(cache, "_npx", hash, "node_modules", "srv", "package.json"),
        JSON.stringify({ name: "srv", version }),
      );
    };
    made("aaaa", ["srv@1.0.0"], "1.0.0");
    made("bbbb", ["srv"], "1.1.0");
    made("cccc", ["srv", "other"], "0.1.0");
    assert.equal(versionFromCache(ref("npx", ["-y", "srv"]), { npm_config_cache: cache }), "1.1.0");
    assert.equal(versionFromCache(ref("npx", ["-y", "srv@1.0.0"]), { npm_config_cache: cache }), "1.0.0");
    assert.equal(versionFromCache(ref("npx", ["-y", "srv@2"]), { npm_config_cache: cache }), undefined);
  });
});
