/**
 * Whether an entry launches what hermit.lock holds for it: the same package by registry and name
 * (whichever runner; a range the lock pins, an exact version must be the locked one), the same command line
 * as written, the same URL; a lock entry that holds none of these for it, or no entry, is a
 * mismatch, and so is another package, another command line or another URL.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { launchMismatch } from "../../../src/lock/launch.ts";
import type { LockedServer } from "../../../src/lock/types.ts";
import type { Upstream } from "../../../src/manifest/types.ts";

const stdio = (command: string, args: string[]) =>
  ({ name: "web", kind: "stdio", command, args, enabled: true, env: {} }) as unknown as Upstream;
const remote = (url: string) => ({ name: "web", kind: "http", url, enabled: true }) as unknown as Upstream;
/** An adapter directory with no registry files in it. */
const held = (u: Upstream, e: LockedServer | undefined) => launchMismatch(u, e, "/nonexistent-adapter");
const pkg: LockedServer = { package: { runner: "npx", name: "@good/srv", version: "1.2.3" }, tools: {} };

describe("the launch hermit.lock holds", () => {
  it("the same package, whichever npm runner and version asked for, is the one held", () => {
    for (
      const [command, args] of [
        ["npx", ["-y", "@good/srv"]],
        ["npx", ["-y", "@good/srv@^1", "/data"]],
        ["npx", ["-y", "@good/srv@1.2.3"]],
        ["pnpm", ["dlx", "@good/srv"]],
        ["deno", ["run", "-A", "npm:@good/srv"]],
      ] as [string, string[]][]
    ) assert.equal(held(stdio(command, args), pkg), undefined, `${command} ${args.join(" ")}`);
  });

  it("an exact version in hermit.yaml other than the locked one is a mismatch (it would run as written)", () => {
    assert.equal(
      held(stdio("npx", ["-y", "@good/srv@2.0.0"]), pkg),
      "it asks for @good/srv 2.0.0, not the version hermit.lock holds for it (@good/srv 1.2.3)",
    );
  });

  it("another package, an unpinnable launch, a URL or command other than the one held is a mismatch", () => {
    assert.match(
      held(stdio("npx", ["-y", "@evil/srv"]), pkg)!,
      /runs '@evil\/srv', not the package hermit\.lock holds for it \(@good\/srv 1\.2\.3\)/,
    );
    assert.match(
      held(stdio("uvx", ["@good/srv"]), pkg) ?? "",
      /not the package/,
      "another registry",
    );
    assert.match(
      held(stdio("sh", ["-c", "npx -y @good/srv"]), pkg)!,
      /runs 'sh -c npx -y @good\/srv'/,
    );
    assert.match(
      held(stdio("node", ["evil.js"]), { command: "node server.js", tools: {} })!,
      /runs 'node evil\.js', not what hermit\.lock holds for it \('node server\.js'\)/,
    );
    assert.equal(
      held(stdio("node", ["server.js"]), { command: "node server.js", tools: {} }),
      undefined,
    );
    assert.match(
      held(remote("https://evil.example/mcp"), { url: "https://good.example/mcp", tools: {} })!,
      /connects to 'https:\/\/evil\.example\/mcp'/,
    );
    assert.equal(
      held(remote("https://good.example/mcp"), { url: "https://good.example/mcp", tools: {} }),
      undefined,
    );
  });

  it("an entry that holds nothing for it, or none at all, is a mismatch; hidden characters are shown", () => {
    assert.equal(
      held(stdio("npx", ["-y", "@good/srv"]), { tools: {} }),
      "hermit.lock holds no command for it",
    );
    assert.equal(
      held(remote("https://good.example/mcp"), { tools: {} }),
      "hermit.lock holds no url for it",
    );
    assert.equal(held(stdio("node", ["s.js"]), undefined), "it is not in hermit.lock");
    assert.doesNotMatch(
      held(stdio("node", ["s\u202e.js"]), { command: "node s.js", tools: {} })!,
      /\u202e/,
    );
  });
});
