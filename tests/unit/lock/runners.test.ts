/**
 * Which package a runner runs, for every way of writing one: an option the runner takes with a
 * value never makes its value the package, and one hermit does not know before a bare word makes
 * the package unclear (not pinned, and check says so, never a decoy recorded as locked); `npm
 * exec`/`npm x`, `pnpm dlx`/`pnpx`, `yarn dlx`, `bun x` and `uv tool run` are read and pinned as
 * npx, bunx and uvx are; a runner started through another command (`env npx`, `sh -c "npx …"`) is
 * not read, and check says the package it runs is not pinned.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { type LiveServer, lockEntry } from "../../../src/lock/build.ts";
import { lockStaticFindings } from "../../../src/lock/findings.ts";
import {
  isPinnable,
  packageOf,
  type PackageRef,
  pinArgs,
  type Unpinnable,
} from "../../../src/lock/packages.ts";
import { versionFromCache } from "../../../src/lock/resolve.ts";
import type { Manifest, Upstream } from "../../../src/manifest/types.ts";
import { tempDir } from "../../helpers/tmp.ts";

const tmp = tempDir();
after(() => tmp.cleanup());

const EVERYTHING = "@modelcontextprotocol/server-everything";
const ref = (command: string, args: string[]) => packageOf(command, args) as PackageRef;
const upstream = (command: string, args: string[]) =>
  ({ name: "web", kind: "stdio", command, args, enabled: true, env: {} }) as unknown as Upstream;
/** `check`'s lock warnings about one entry, in an adapter without hermit.lock. */
function lockWarnings(command: string, args: string[]): string[] {
  const dir = path.join(tmp.path, `adapter-${Math.random().toString(36).slice(2)}`);
  mkdirSync(dir);
  const m = { dir, file: path.join(dir, "hermit.yaml"), upstreams: { web: upstream(command, args) } };
  return lockStaticFindings(m as unknown as Manifest)
    .filter((f) => f.level === "warning" && f.message.startsWith("mcp_servers.web"))
    .map((f) => f.message);
}
const recorded = (command: string, args: string[], version?: string) =>
  lockEntry({ upstream: upstream(command, args), tools: [], version } as LiveServer);

describe("an option that takes a value, and one hermit does not know", () => {
  const decoy = ["-y", "--otp", "left-pad@1.3.0", `${EVERYTHING}@^2026.1.0`, "stdio"];

  it("npm's options that take a value never make their value the package", () => {
    const r = ref("npx", decoy);
    assert.deepEqual([r.name, r.requested, r.exact, r.index], [EVERYTHING, "^2026.1.0", false, 3]);
    for (const opt of ["--tag", "--before", "--scope", "--registry", "--cache", "-w", "-C", "--userconfig"]) {
      assert.equal(ref("npx", ["-y", opt, "decoy@1.0.0", "real@^1"]).name, "real", opt);
    }
    assert.equal(ref("npx", ["--prefer-offline", "-y", "--no-install", "real"]).name, "real", "flags");
  });

  it("the lock records no decoy, the warning names the real package, and the pin reaches it", () => {
    assert.equal(recorded("npx", decoy).package, undefined);
    assert.match(recorded("npx", decoy).command ?? "", /--otp left-pad@1\.3\.0/);
    assert.ok(
      lockWarnings("npx", decoy).some((w) =>
        w.includes(`'npx ${EVERYTHING}@^2026.1.0' runs whatever version is newest at each start`)
      ),
    );
    const locked = { runner: "npx" as const, name: EVERYTHING, version: "2026.1.14" };
    assert.deepEqual(pinArgs("npx", decoy, locked), [
      "-y",
      "--otp",
      "left-pad@1.3.0",
      `${EVERYTHING}@2026.1.14`,
      "stdio",
    ]);
  });

  it("an option hermit does not know, before a bare word, leaves the package unclear: nothing pinned", () => {
    const args = ["-y", "--frobnicate", "left-pad@1.3.0", `${EVERYTHING}@^2026.1.0`, "stdio"];
    const p = packageOf("npx", args);
    assert.ok(p && !isPinnable(p));
    assert.equal(recorded("npx", args, "1.3.0").package, undefined, "not even with a version read");
    assert.deepEqual(pinArgs("npx", args, { runner: "npx", name: "left-pad", version: "1.3.0" }), args);
    assert.ok(
      lockWarnings("npx", args).includes(
        "mcp_servers.web: npx --frobnicate is not an option hermit knows, so which package runs is unclear: it is not pinned",
      ),
      lockWarnings("npx", args).join("\n"),
    );
    // before '--', or before another option, it cannot have taken the package as its value
    assert.equal(ref("npx", ["--frobnicate", "--", "real@^1"]).name, "real");
    assert.equal(ref("npx", ["--frobnicate", "-y", "real@^1"]).name, "real");
    assert.ok(!isPinnable(packageOf("uvx", ["--frobnicate", "decoy==1.0", "real"])));
    // npx itself takes the word after --no-yes as its value, npm does not: unclear either way
    assert.equal((packageOf("npx", ["--no-yes", "decoy@1.0.0", "real"]) as Unpinnable).unclear, "--no-yes");
    assert.ok(
      lockWarnings("npm", ["--frobnicate", "decoy", "exec", "real"]).includes(
        "mcp_servers.web: npm --frobnicate is not an option hermit knows, so which package runs is unclear: it is not pinned",
      ),
    );
    // npm exec reads --package after the package too (before '--'), which changes what runs
    assert.ok(!isPinnable(packageOf("npm", ["exec", "real@^1", "--package=decoy@1.0.0"])));
    assert.equal(ref("npm", ["exec", "--", "real@^1", "--package=x", "-c", "y"]).name, "real");
  });
});

describe("the other ways of running a package", () => {
  const spec = `${EVERYTHING}@^2026.1.0`;
  const locked = { runner: "npx" as const, name: EVERYTHING, version: "2026.1.14" };

  it("npm exec and npm x are npx: read, recorded, warned about and pinned", () => {
    const args = ["exec", "-y", "--", spec, "stdio"];
    const r = ref("npm", args);
    assert.deepEqual([r.runner, r.name, r.requested, r.index], ["npx", EVERYTHING, "^2026.1.0", 3]);
    assert.deepEqual(recorded("npm", args, "2026.1.14").package, locked);
    assert.ok(lockWarnings("npm", args).some((w) => w.includes(`'npm exec ${spec}' runs whatever version`)));
    assert.deepEqual(pinArgs("npm", args, locked), ["exec", "-y", "--", `${EVERYTHING}@2026.1.14`, "stdio"]);
    assert.deepEqual(pinArgs("/usr/bin/npm", ["x", "--yes", spec], locked), [
      "x",
      "--yes",
      `${EVERYTHING}@2026.1.14`,
    ]);
    assert.equal(ref("npm", ["--yes", "exec", "--package=srv@^1", "--", "srv-cli"]).name, "srv");
    assert.equal(ref("npm", ["exec", "--otp", "decoy@1.0.0", "real@^1"]).name, "real");
  });

  it("pnpm dlx, pnpx and yarn dlx are read and pinned by their package argument", () => {
    assert.deepEqual(pinArgs("pnpm", ["dlx", spec, "stdio"], locked), [
      "dlx",
      `${EVERYTHING}@2026.1.14`,
      "stdio",
    ]);
    assert.deepEqual(pinArgs("pnpx", [spec], locked), [`${EVERYTHING}@2026.1.14`]);
    assert.deepEqual(pinArgs("pnpm", ["dlx", `--package=${EVERYTHING}`, "mcp-server-everything"], locked), [
      "dlx",
      `--package=${EVERYTHING}@2026.1.14`,
      "mcp-server-everything",
    ]);
    assert.deepEqual(pinArgs("yarn", ["dlx", "-p", spec, "mcp-server-everything"], locked), [
      "dlx",
      "-p",
      `${EVERYTHING}@2026.1.14`,
      "mcp-server-everything",
    ]);
    assert.ok(
      lockWarnings("yarn", ["dlx", spec]).some((w) => w.includes(`'yarn dlx ${spec}' runs whatever version`)),
    );
    assert.equal(recorded("pnpm", ["dlx", spec], "2026.1.14").package?.version, "2026.1.14");
  });

  it("uv tool run is uvx, bun x is bunx", () => {
    const py = { runner: "uvx" as const, name: "mcp-server-fetch", version: "2025.4.7" };
    assert.deepEqual(pinArgs("uv", ["tool", "run", "mcp-server-fetch"], py), [
      "tool",
      "run",
      "mcp-server-fetch@2025.4.7",
    ]);
    assert.deepEqual(pinArgs("uv", ["--offline", "tool", "run", "--from", "mcp-server-fetch", "x"], py), [
      "--offline",
      "tool",
      "run",
      "--from",
      "mcp-server-fetch==2025.4.7",
      "x",
    ]);
    assert.ok(
      lockWarnings("uv", ["tool", "run", "mcp-server-fetch"]).some((w) =>
        w.includes("'uv tool run mcp-server-fetch' runs whatever version") &&
        w.includes("mcp-server-fetch==X.Y.Z")
      ),
    );
    assert.equal(ref("bun", ["x", "--bun", "srv@^1"]).runner, "bunx");
  });

  it("npm's cache tells nothing about what pnpm or yarn ran", () => {
    const cache = path.join(tmp.path, "npm-cache");
    mkdirSync(path.join(cache, "_npx", "aaaa", "node_modules", "srv"), { recursive: true });
    writeFileSync(
      path.join(cache, "_npx", "aaaa", "package.json"),
      JSON.stringify({ _npx: { packages: ["srv"] } }),
    );
    writeFileSync(
      path.join(cache, "_npx", "aaaa", "node_modules", "srv", "package.json"),
      JSON.stringify({ name: "srv", version: "1.1.0" }),
    );
    assert.equal(versionFromCache(ref("npm", ["exec", "srv"]), { npm_config_cache: cache }), "1.1.0");
    assert.equal(versionFromCache(ref("pnpm", ["dlx", "srv"]), { npm_config_cache: cache }), undefined);
  });

  it("a runner started through another command is not read, and check says its package is not pinned", () => {
    const cases: [string, string[]][] = [
      ["env", ["FOO=1", "npx", "-y", spec]],
      ["sh", ["-c", `exec npx -y ${spec} stdio`]],
      ["/bin/bash", ["-lc", `cd /srv && pnpm dlx ${spec}`]],
      ["cmd", ["/c", "uvx", "mcp-server-fetch"]],
      ["sh", ["-c", `npm --prefix /srv exec -y ${spec}`]],
    ];
    for (const [command, args] of cases) {
      const p = packageOf(command, args);
      assert.ok(p && !isPinnable(p), command);
      assert.deepEqual(pinArgs(command, args, locked), args, command);
      assert.ok(
        lockWarnings(command, args).some((w) => w.startsWith("mcp_servers.web: ") && /not pinned/.test(w)),
        `${command}: ${lockWarnings(command, args).join("\n")}`,
      );
    }
  });

  it("commands that run no package from a registry stay out of it", () => {
    for (
      const [command, args] of [
        ["npm", ["run", "start"]],
        ["npm", ["start"]],
        ["pnpm", ["exec", "srv"]],
        ["uv", ["run", "server.py"]],
        ["node", ["server.js", "--mode", "x"]],
        ["bun", ["run", "x.ts"]],
      ] as [string, string[]][]
    ) {
      assert.equal(packageOf(command, args), undefined, `${command} ${args.join(" ")}`);
      assert.deepEqual(lockWarnings(command, args), [], `${command} ${args.join(" ")}`);
    }
  });
});
