/**
 * The packages `uvx --with` (and `uv tool run --with`, `-w`) adds beside the tool: read one by one
 * (a comma joins requirements, and a specifier's clauses), recorded in hermit.lock with the version
 * of each that ran (read from a real process's environment), pinned at spawn to those versions
 * (an exact version in hermit.yaml wins; a URL or a marker is left as written and warned about),
 * warned about by check until they are pinned, and a changed one is a changed server.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { after, describe, it } from "node:test";
import { compareLocks, type LiveServer, lockEntry } from "../../../src/lock/build.ts";
import { parseLock, renderLock } from "../../../src/lock/file.ts";
import { lockStaticFindings } from "../../../src/lock/findings.ts";
import { packageOf, type PackageRef, pinArgs } from "../../../src/lock/packages.ts";
import { extraVersionsThatRan } from "../../../src/lock/resolve.ts";
import type { Lock, LockedPackage } from "../../../src/lock/types.ts";
import { splitWith } from "../../../src/lock/with_packages.ts";
import type { Manifest, Upstream } from "../../../src/manifest/types.ts";
import { tempDir } from "../../helpers/tmp.ts";

const tmp = tempDir();
after(() => tmp.cleanup());

const FETCH = "mcp-server-fetch";
const locked: LockedPackage = {
  runner: "uvx",
  name: FETCH,
  version: "2025.4.7",
  with: { httpx: "0.28.1", "Rich-Click": "1.8.3" },
};
const upstream = (command: string, args: string[]) =>
  ({ name: "web", kind: "stdio", command, args, enabled: true, env: {} }) as unknown as Upstream;

describe("uvx --with", () => {
  it("splits a --with into requirements, a specifier's clauses kept together", () => {
    assert.deepEqual(splitWith("httpx,rich-click>=1,<2, anyio[trio]"), [
      "httpx",
      "rich-click>=1,<2",
      "anyio[trio]",
    ]);
    assert.deepEqual(splitWith("pkg[a,b]==1.0"), ["pkg[a,b]==1.0"]);
  });

  it("each requirement that names no exact version is pinned to the lock's, and only those", () => {
    assert.deepEqual(pinArgs("uvx", ["--with", "httpx", FETCH], locked), [
      "--with",
      "httpx==0.28.1",
      `${FETCH}@2025.4.7`,
    ]);
    assert.deepEqual(
      pinArgs(
        "uvx",
        ["--with=HTTPX>=0.27,rich_click[x]", "-w", "other", `${FETCH}==2025.4.7`, "--with", "y"],
        locked,
      ),
      ["--with=HTTPX==0.28.1,rich_click[x]==1.8.3", "-w", "other", `${FETCH}==2025.4.7`, "--with", "y"],
      "the tool's own arguments after it are not uv's",
    );
    assert.deepEqual(pinArgs("uv", ["tool", "run", "--with", "httpx==0.27.0", FETCH], locked), [
      "tool",
      "run",
      "--with",
      "httpx==0.27.0",
      `${FETCH}@2025.4.7`,
    ]);
    assert.deepEqual(
      pinArgs("uvx", ["--with", "httpx @ https://x/h.whl", FETCH], locked)[1],
      "httpx @ https://x/h.whl",
    );
  });

  it("hermit lock records the version of each that ran, read in the environment of the running tool", async () => {
    const env = path.join(tmp.path, "uv-env");
    const site = path.join(env, "lib", "python3.12", "site-packages");
    for (
      const d of [
        "mcp_server_fetch-2025.4.7.dist-info",
        "httpx-0.28.1.dist-info",
        "rich_click-1.8.3.dist-info",
      ]
    ) {
      mkdirSync(path.join(site, d), { recursive: true });
    }
    mkdirSync(path.join(env, "bin"));
    const tool = path.join(env, "bin", FETCH);
    writeFileSync(tool, "setTimeout(() => {}, 30000);\n");
    const child = spawn(process.execPath, [tool], { detached: true, stdio: "ignore" });
    try {
      const ref = packageOf("uvx", ["--with", "httpx,rich-click>=1", FETCH]) as PackageRef;
      let ran: Record<string, string> = {};
      for (let i = 0; i < 100 && !ran.httpx; i++) {
        ran = extraVersionsThatRan(ref, ["httpx", "rich-click"], child.pid);
        if (!ran.httpx) await new Promise((r) => setTimeout(r, 50));
      }
      if (process.platform === "linux") assert.deepEqual(ran, { httpx: "0.28.1", "rich-click": "1.8.3" });
      else assert.deepEqual(ran, {});
    } finally {
      process.kill(-child.pid!, "SIGKILL");
    }
    const entry = lockEntry({
      upstream: upstream("uvx", ["--with", "httpx", FETCH]),
      tools: [],
      version: "2025.4.7",
      extras: { httpx: "0.28.1" },
    } as LiveServer);
    assert.deepEqual(entry.package, {
      runner: "uvx",
      name: FETCH,
      version: "2025.4.7",
      with: { httpx: "0.28.1" },
    });
  });

  it("the lock holds them (written, read back); a range, a URL, or a with beside npx is an invalid lock", () => {
    const lock: Lock = { format: 1, servers: { web: { package: locked, tools: {} } } };
    const text = renderLock(lock);
    const back = parseLock(text);
    assert.ok("lock" in back, JSON.stringify(back));
    assert.deepEqual(back.lock.servers.web.package, locked);
    const bad = (p: LockedPackage) => {
      const r = parseLock(renderLock({ format: 1, servers: { web: { package: p, tools: {} } } }));
      return "why" in r ? r.why : "";
    };
    assert.match(
      bad({ ...locked, with: { httpx: ">=0.28" } }),
      /^servers\.web\.package\.with\.version ">=0\.28" is not one exact/,
    );
    assert.match(
      bad({ ...locked, with: { "git+https://x/y": "1.0" } }),
      /with\.name .* is not a PyPI package name/,
    );
    assert.match(
      bad({ runner: "npx", name: "srv", version: "1.0.0", with: { a: "1.0" } }),
      /with must be .* for uvx only/,
    );
  });

  it("check warns about each one not pinned, and about what it cannot pin", () => {
    const dir = path.join(tmp.path, "adapter");
    mkdirSync(dir);
    const warnings = (args: string[]) =>
      lockStaticFindings({ dir, upstreams: { web: upstream("uvx", args) } } as unknown as Manifest)
        .filter((f) => f.level === "warning" && f.message.startsWith("mcp_servers.web"))
        .map((f) => f.message);
    const w = warnings([
      "--with",
      "httpx,anyio==4.0",
      "--with-requirements",
      "r.txt",
      "--with",
      "x @ https://x/x.whl",
      `${FETCH}==2025.4.7`,
    ]);
    assert.ok(
      w.some((l) =>
        l.includes("'uvx --with httpx' runs whatever version is newest") && l.includes("httpx==X.Y.Z")
      ),
      w.join("\n"),
    );
    assert.ok(!w.some((l) => l.includes("anyio")), "an exact one is pinned");
    assert.ok(
      w.some((l) => l.includes("'uvx --with-requirements' adds packages hermit cannot read")),
      w.join("\n"),
    );
    assert.ok(w.some((l) => l.includes("'uvx --with x @ https://x/x.whl' cannot be pinned")), w.join("\n"));
  });

  it("a --with package that resolves differently is a changed server", () => {
    const a: Lock = { format: 1, servers: { web: { package: locked, tools: {} } } };
    const b: Lock = {
      format: 1,
      servers: { web: { package: { ...locked, with: { httpx: "0.29.0" } }, tools: {} } },
    };
    const [change] = compareLocks(a, b).servers;
    assert.equal(change.kind, "changed");
    assert.match(change.details[0], /with Rich-Click 1\.8\.3, httpx 0\.28\.1\) → .*\(with httpx 0\.29\.0\)/);
  });
});
