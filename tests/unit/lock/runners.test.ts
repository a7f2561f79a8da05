/**
 * Which package a runner runs, for every way of writing one: an option the runner takes with a
 * value never makes its value the package, and one hermit does not know before a bare word makes
 * the package unclear (not pinned, and check says so, never a decoy recorded as locked); `npm
 * exec`/`npm x`, `pnpm dlx`/`pnpx`, `yarn dlx`, `bun x` and `uv tool run` are read and pinned as
 * npx, bunx and uvx are, and the lock records the runner that runs (a lock from before, which
 * recorded them as npx, still pins them); `pipx run` and `deno run npm:…`/`jsr:…`/`deno x` are
 * read and pinned too; a runner started through another command (`env npx`, `sh -c "npx …"`) is
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

  it("npm exec and npm x are read, recorded as npm exec, warned about and pinned (by an npx lock too)", () => {
    const args = ["exec", "-y", "--", spec, "stdio"];
    const r = ref("npm", args);
    assert.deepEqual([r.runner, r.name, r.requested, r.index], ["npm exec", EVERYTHING, "^2026.1.0", 3]);
    assert.deepEqual(recorded("npm", args, "2026.1.14").package, { ...locked, runner: "npm exec" });
    assert.equal(recorded("/usr/bin/npm", ["x", spec], "2026.1.14").package?.runner, "npm exec");
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
    assert.deepEqual(recorded("pnpm", ["dlx", spec], "2026.1.14").package, { ...locked, runner: "pnpm dlx" });
    assert.equal(recorded("pnpx", [spec], "2026.1.14").package?.runner, "pnpm dlx");
    assert.equal(recorded("yarn", ["dlx", spec], "2026.1.14").package?.runner, "yarn dlx");
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
    assert.equal(recorded("uv", ["tool", "run", "mcp-server-fetch"], "2025.4.7").package?.runner, "uvx");
  });

  it("pipx run is read and pinned: the app as a requirement, or what --spec names", () => {
    const py = { runner: "pipx run" as const, name: "mcp-server-fetch", version: "2025.4.7" };
    const r = ref("pipx", ["run", "mcp-server-fetch"]);
    assert.deepEqual([r.runner, r.via, r.name, r.exact], ["pipx run", "pipx run", "mcp-server-fetch", false]);
    assert.deepEqual(pinArgs("pipx", ["run", "mcp-server-fetch", "--x"], py), [
      "run",
      "mcp-server-fetch==2025.4.7",
      "--x",
    ]);
    assert.deepEqual(
      pinArgs("pipx", ["--quiet", "run", "--python", "3.12", "--spec", "mcp_server_fetch>=2", "fetch"], py),
      [
        "--quiet",
        "run",
        "--python",
        "3.12",
        "--spec",
        "mcp_server_fetch==2025.4.7",
        "fetch",
      ],
    );
    assert.equal(ref("pipx", ["run", "mcp-server-fetch==2025.4.7"]).exact, true);
    assert.deepEqual(recorded("pipx", ["run", "mcp-server-fetch"], "2025.4.7").package, py);
    assert.ok(
      lockWarnings("pipx", ["run", "mcp-server-fetch"]).some((w) =>
        w.includes("'pipx run mcp-server-fetch' runs whatever version") &&
        w.includes("mcp-server-fetch==X.Y.Z")
      ),
    );
    // a uvx lock of the same PyPI package pins it, an npm one never does
    assert.deepEqual(pinArgs("pipx", ["run", "mcp-server-fetch"], { ...py, runner: "uvx" }), [
      "run",
      "mcp-server-fetch==2025.4.7",
    ]);
    assert.deepEqual(pinArgs("pipx", ["run", "mcp-server-fetch"], { ...py, runner: "npx" }), [
      "run",
      "mcp-server-fetch",
    ]);
    assert.ok(!isPinnable(packageOf("pipx", ["run", "--spec", "git+https://x/y.git", "y"])));
  });

  it("deno run npm:/jsr:, deno npm:, deno x and dx are read and pinned; a local script is none, a URL is warned about", () => {
    const npm = { runner: "deno" as const, name: `npm:${EVERYTHING}`, version: "2026.1.14" };
    assert.deepEqual(pinArgs("deno", ["run", "-A", `npm:${EVERYTHING}`, "stdio"], npm), [
      "run",
      "-A",
      `npm:${EVERYTHING}@2026.1.14`,
      "stdio",
    ]);
    assert.deepEqual(
      pinArgs("deno", ["run", "--allow-read", "--config", "c.json", `npm:${spec}/dist/cli.js`], npm),
      [
        "run",
        "--allow-read",
        "--config",
        "c.json",
        `npm:${EVERYTHING}@2026.1.14/dist/cli.js`,
      ],
    );
    assert.deepEqual(pinArgs("deno", ["-A", `npm:${EVERYTHING}`], npm), [
      "-A",
      `npm:${EVERYTHING}@2026.1.14`,
    ]);
    assert.deepEqual(pinArgs("deno", ["x", "-y", EVERYTHING], locked), [
      "x",
      "-y",
      `${EVERYTHING}@2026.1.14`,
    ]);
    assert.deepEqual(pinArgs("dx", [`npm:${EVERYTHING}`], locked), [`npm:${EVERYTHING}@2026.1.14`]);
    assert.deepEqual(recorded("deno", ["run", "-A", `npm:${EVERYTHING}`], "2026.1.14").package, npm);
    const jsr = { runner: "deno" as const, name: "jsr:@std/http", version: "1.0.9" };
    assert.deepEqual(pinArgs("deno", ["run", "-N", "jsr:@std/http/file-server"], jsr), [
      "run",
      "-N",
      "jsr:@std/http@1.0.9/file-server",
    ]);
    assert.deepEqual(
      pinArgs("deno", ["run", "npm:@std/http"], jsr),
      ["run", "npm:@std/http"],
      "another registry",
    );
    assert.equal(ref("deno", ["run", "jsr:@std/http@1.0.9/file-server"]).exact, true);
    assert.ok(
      lockWarnings("deno", ["run", "-A", `npm:${EVERYTHING}`]).some((w) =>
        w.includes(`'deno run npm:${EVERYTHING}' runs whatever version`) &&
        w.includes(`npm:${EVERYTHING}@X.Y.Z`)
      ),
    );
    assert.equal(packageOf("deno", ["run", "-A", "server.ts"]), undefined);
    assert.equal(packageOf("deno", ["task", "start"]), undefined);
    const url = packageOf("deno", ["run", "-A", "https://example.com/mcp.ts"]);
    assert.ok(url && !isPinnable(url));
    assert.ok(
      lockWarnings("deno", ["run", "-A", "https://example.com/mcp.ts"]).some((w) =>
        /cannot be pinned/.test(w)
      ),
    );
    assert.ok(
      lockWarnings("deno", ["run", "--unknown-flag", "x", "npm:srv"]).some((w) => /not pinned/.test(w)),
    );
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
