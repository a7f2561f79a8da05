/**
 * The macOS profile, against golden files (no macOS machine runs `sandbox-exec` here): the
 * policies of an untrusted server, a destination list and a command tool on a Mac's paths. Set
 * HERMIT_UPDATE_GOLDEN=1 to rewrite them after a deliberate change, then read the diff.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { describe, it } from "node:test";
import { NO_SANDBOX_SETTINGS } from "../../../src/manifest/sandbox.ts";
import { type Entry, type PolicyContext, resolvePolicy } from "../../../src/sandbox/policy.ts";
import { seatbeltProfile } from "../../../src/sandbox/seatbelt.ts";
import { fixtures } from "../../helpers/hermit.ts";

const golden = path.join(fixtures, "sandbox", "seatbelt");
const ctx: PolicyContext = {
  platform: "darwin",
  home: "/Users/ada",
  env: { HOME: "/Users/ada" },
  interpolation: { env: {}, workspaceFolder: "/Users/ada/code/app", userHome: "/Users/ada" },
  adapterDir: "/Users/ada/adapters/notes",
  stateDir: "/Users/ada/Library/Application Support/hermit",
  tmpDir: "/Users/ada/Library/Application Support/hermit/tmp/42-mcp_servers_fs-abc123",
  servedAdapters: ["/Users/ada/adapters/notes"],
  requireAll: false,
};

const cases: [string, Entry, number | undefined][] = [
  ["untrusted-none", {
    label: "mcp_servers.fs",
    kind: "server",
    trust: "untrusted",
    settings: { ...NO_SANDBOX_SETTINGS, write: ["${workspaceFolder}/notes"], read: ["~/.ssh/known_hosts"] },
  }, undefined],
  ["allowlist", {
    label: "mcp_servers.gh",
    kind: "server",
    trust: "untrusted",
    settings: {
      ...NO_SANDBOX_SETTINGS,
      network: [{ host: "api.github.com", port: 443 }],
      denyRead: ["/tmp/shared"],
    },
  }, 50123],
  [
    "tool-full",
    { label: "tools.add_note", kind: "tool", trust: "full", settings: NO_SANDBOX_SETTINGS },
    undefined,
  ],
];

describe("seatbelt profiles (golden)", () => {
  for (const [name, entry, proxyPort] of cases) {
    it(name, () => {
      const p = resolvePolicy(entry, ctx);
      const profile = seatbeltProfile({ fs: p.fs, network: p.network, proxyPort });
      const file = path.join(golden, `${name}.sb`);
      if (process.env.HERMIT_UPDATE_GOLDEN) writeFileSync(file, profile);
      assert.equal(profile, readFileSync(file, "utf8"));
    });
  }

  it("the deepest path comes last, so it wins", () => {
    const p = resolvePolicy(cases[0][1], ctx);
    const profile = seatbeltProfile({ fs: p.fs, network: p.network });
    const deny = profile.indexOf('(deny file-read* file-write* (subpath "/Users/ada/.ssh"))');
    const reopen = profile.indexOf('(allow file-read* (subpath "/Users/ada/.ssh/known_hosts"))');
    assert.ok(deny > 0 && reopen > deny);
  });
});
