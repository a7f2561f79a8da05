/**
 * Policy resolution, purely: the defaults per kind and trust (reads but secrets, writes to TMPDIR,
 * caches and, for trust full and command tools, the workspace; network by trust), the manifest's
 * lines on top (interpolated, `~` and relative paths resolved), and which line wins on one path.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NO_SANDBOX_SETTINGS } from "../../../src/manifest/sandbox.ts";
import type { SandboxSettings } from "../../../src/manifest/types.ts";
import type { Level } from "../../../src/sandbox/landlock.ts";
import { managerOf, packageCaches, type PolicyContext, resolvePolicy } from "../../../src/sandbox/policy.ts";

const ctx: PolicyContext = {
  platform: "linux",
  home: "/home/u",
  env: { HOME: "/home/u" },
  interpolation: { env: { PROJ: "/work/p" }, workspaceFolder: "/work/p", userHome: "/home/u" },
  adapterDir: "/work/adapters/notes",
  stateDir: "/home/u/.local/state/hermit",
  tmpDir: "/home/u/.local/state/hermit/tmp/1-x",
  servedAdapters: ["/work/adapters/notes", "/srv/other"],
  requireAll: false,
};

const settings = (over: Partial<SandboxSettings> = {}): SandboxSettings => ({
  ...NO_SANDBOX_SETTINGS,
  ...over,
});
const levelAt = (fs: { path: string; level: Level }[], p: string) => fs.find((r) => r.path === p)?.level;

describe("resolvePolicy: defaults", () => {
  const untrusted = resolvePolicy({
    label: "mcp_servers.x",
    kind: "server",
    trust: "untrusted",
    settings: settings(),
  }, ctx);
  const full = resolvePolicy(
    { label: "mcp_servers.y", kind: "server", trust: "full", settings: settings() },
    ctx,
  );
  const tool = resolvePolicy({ label: "tools.t", kind: "tool", trust: "full", settings: settings() }, ctx);

  it("reads everything but the secrets, hermit's state and every known adapter's .serve/", () => {
    for (const p of [untrusted, full, tool]) {
      assert.equal(levelAt(p.fs, "/"), "read");
      for (
        const secret of [
          "/home/u/.ssh",
          "/home/u/.aws",
          "/home/u/.config/gh/hosts.yml",
          "/home/u/.bash_history",
        ]
      ) {
        assert.equal(levelAt(p.fs, secret), "deny", secret);
      }
      assert.equal(levelAt(p.fs, ctx.stateDir), "deny");
      assert.equal(levelAt(p.fs, "/work/adapters/notes/.serve"), "deny");
      assert.equal(levelAt(p.fs, "/srv/other/.serve"), "deny");
    }
  });

  it("never writes the adapter's own hermit.yaml and hermit.lock (protected where a mount can), unless write: names them", () => {
    for (const p of [untrusted, full, tool]) {
      for (const f of ["hermit.yaml", "hermit.lock"]) {
        const rule = p.fs.find((r) => r.path === `/work/adapters/notes/${f}`);
        assert.deepEqual(rule, { path: `/work/adapters/notes/${f}`, level: "read", soft: true });
      }
    }
    const given = resolvePolicy(
      { label: "tools.t", kind: "tool", trust: "full", settings: settings() },
      { ...ctx, manifestFile: "/work/adapters/notes/custom.yaml" },
    );
    assert.equal(given.fs.find((r) => r.path === "/work/adapters/notes/custom.yaml")?.level, "read");
    const opened = resolvePolicy(
      { label: "tools.t", kind: "tool", trust: "full", settings: settings({ write: ["hermit.yaml"] }) },
      ctx,
    );
    assert.deepEqual(opened.fs.find((r) => r.path === "/work/adapters/notes/hermit.yaml"), {
      path: "/work/adapters/notes/hermit.yaml",
      level: "write",
    });
  });

  it("writes its private TMPDIR, the package caches and the devices; the workspace only for full trust and tools", () => {
    for (const p of [untrusted, full, tool]) {
      assert.equal(levelAt(p.fs, ctx.tmpDir), "write");
      assert.equal(levelAt(p.fs, "/home/u/.npm"), "write");
      assert.equal(levelAt(p.fs, "/home/u/.cache/uv"), "write");
      assert.equal(levelAt(p.fs, "/dev/null"), "write");
    }
    assert.equal(levelAt(untrusted.fs, "/work/p"), undefined);
    assert.equal(levelAt(full.fs, "/work/p"), "write");
    assert.equal(levelAt(tool.fs, "/work/p"), "write");
  });

  it("network: none for untrusted servers, all for full trust and command tools", () => {
    assert.deepEqual(untrusted.network, { mode: "none" });
    assert.deepEqual(full.network, { mode: "all" });
    assert.deepEqual(tool.network, { mode: "all" });
    assert.equal(untrusted.networkDeclared, false);
  });

  it("a workspace of / or the home directory is no project: not made writable", () => {
    for (const workspaceFolder of ["/", "/home/u", "/home"]) {
      const p = resolvePolicy(
        { label: "tools.t", kind: "tool", trust: "full", settings: settings() },
        { ...ctx, interpolation: { ...ctx.interpolation, workspaceFolder } },
      );
      assert.equal(p.workspaceSkipped, true, workspaceFolder);
      assert.notEqual(levelAt(p.fs, workspaceFolder), "write", workspaceFolder);
    }
    assert.equal(untrusted.workspaceSkipped, false);
    assert.equal(tool.workspaceSkipped, false);
  });

  it("require comes from the policy or HERMIT_SANDBOX=require", () => {
    assert.equal(untrusted.require, false);
    const r = resolvePolicy(
      { label: "tools.t", kind: "tool", trust: "full", settings: settings() },
      { ...ctx, requireAll: true },
    );
    assert.equal(r.require, true);
  });
});

describe("resolvePolicy: the manifest's lines", () => {
  const p = resolvePolicy({
    label: "mcp_servers.x",
    kind: "server",
    trust: "untrusted",
    settings: settings({
      read: ["~/.ssh/known_hosts", "${userHome}/.aws", "${workspaceFolder}"],
      write: ["data/", "${PROJ}/out", "/home/u/.ssh/known_hosts"],
      denyRead: ["${userHome}/.npmrc", "${userHome}/.aws", "${NOPE}/x"],
      network: [{ host: "api.example.com", port: 443 }],
    }),
  }, ctx);

  it("interpolates, expands ~ and resolves relative paths against the adapter", () => {
    assert.equal(levelAt(p.fs, "/work/adapters/notes/data"), "write");
    assert.equal(levelAt(p.fs, "/work/p/out"), "write");
    assert.equal(levelAt(p.fs, "/work/p"), "read");
    assert.equal(levelAt(p.fs, "/home/u/.npmrc"), "deny");
  });

  it("a declared line replaces a default one; write beats read; deny_read is final", () => {
    assert.equal(levelAt(p.fs, "/home/u/.ssh/known_hosts"), "write");
    assert.equal(levelAt(p.fs, "/home/u/.aws"), "deny");
    const reopened = resolvePolicy({
      label: "tools.t",
      kind: "tool",
      trust: "full",
      settings: settings({ read: ["${userHome}/.aws", "${workspaceFolder}"] }),
    }, ctx);
    assert.equal(levelAt(reopened.fs, "/home/u/.aws"), "read");
    // read: never narrows what is writable
    assert.equal(levelAt(reopened.fs, "/work/p"), "write");
  });

  it("leaves out paths whose variables are not set, and says which", () => {
    assert.deepEqual(p.unresolved, ["NOPE"]);
    assert.ok(!p.fs.some((r) => r.path.includes("${")));
  });

  it("a destination list is the network rule, and it counts as declared", () => {
    assert.deepEqual(p.network, { mode: "allow", allow: [{ host: "api.example.com", port: 443 }] });
    assert.equal(p.networkDeclared, true);
  });

  it("off is carried through", () => {
    const off = resolvePolicy({
      label: "tools.t",
      kind: "tool",
      trust: "full",
      settings: settings({ off: true }),
    }, ctx);
    assert.equal(off.off, true);
  });
});

describe("package caches", () => {
  it("honour each manager's variables", () => {
    const c = packageCaches("linux", "/h", {
      npm_config_cache: "/c/npm",
      XDG_CACHE_HOME: "/xc",
      UV_TOOL_DIR: "/uvt",
      BUN_INSTALL: "/b",
    });
    assert.deepEqual(c.map((x) => `${x.manager} ${x.path}`), [
      "npm /c/npm",
      "uv /xc/uv",
      "uv /h/.local/share/uv/python",
      "bun /b/install/cache",
      "pnpm /xc/pnpm",
      "pnpm /h/.local/share/pnpm/store",
    ]);
    const moved = packageCaches("linux", "/h", {
      UV_PYTHON_INSTALL_DIR: "/py",
      PNPM_HOME: "/ph",
      UV_TOOL_DIR: "/uvt",
    });
    assert.deepEqual(moved.filter((x) => x.manager !== "npm" && x.manager !== "bun").map((x) => x.path), [
      "/h/.cache/uv",
      "/py",
      "/h/.cache/pnpm",
      "/ph/store",
    ]);
  });

  it("npm's cache moved by the user's .npmrc (cache=, ~ and $HOME expanded, the last line wins) is the one written", () => {
    const npm = (npmrc: string | undefined, env: Record<string, string> = {}) =>
      packageCaches("linux", "/h", env, npmrc).find((x) => x.manager === "npm")!.path;
    assert.equal(npm(undefined), "/h/.npm");
    assert.equal(npm("registry=https://r.example/\ncache=/data/npm-cache\n"), "/data/npm-cache");
    assert.equal(npm("cache = ~/caches/npm"), "/h/caches/npm");
    assert.equal(npm("cache=${HOME}/n\ncache=/last"), "/last");
    assert.equal(
      npm("cache=relative/dir"),
      "/h/.npm",
      "a relative cache is npm's business, not a path to open",
    );
    assert.equal(
      npm("cache=/from-npmrc", { npm_config_cache: "/from-env" }),
      "/from-env",
      "the variable wins, as in npm",
    );
  });

  it("a cache variable moves the writable cache only when the child has it (hermit's own is not passed on)", () => {
    const entry = {
      label: "mcp_servers.x",
      kind: "server" as const,
      trust: "untrusted" as const,
      settings: settings(),
    };
    const moved = { ...ctx, env: { ...ctx.env, npm_config_cache: "/root/.npm" } };
    // what `npx deno task test` or a shell exports reaches hermit, but gate 2 keeps it from the child
    assert.equal(levelAt(resolvePolicy(entry, moved).fs, "/home/u/.npm"), "write");
    assert.equal(levelAt(resolvePolicy(entry, moved).fs, "/root/.npm"), undefined);
    // declared for the entry (so in the child's environment): that is the cache npm writes
    const declared = { ...moved, childEnv: { HOME: "/home/u", npm_config_cache: "/data/npm" } };
    assert.equal(levelAt(resolvePolicy(entry, declared).fs, "/data/npm"), "write");
  });

  it("name the manager behind a runner", () => {
    assert.deepEqual(["/usr/bin/npx", "uvx", "bunx", "C:/x/npx.cmd", "node", "pnpx"].map(managerOf), [
      "npm",
      "uv",
      "bun",
      "npm",
      undefined,
      "pnpm",
    ]);
  });
});
