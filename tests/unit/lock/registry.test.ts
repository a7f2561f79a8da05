/**
 * Where a locked package is fetched from: the registry settings of an entry (its env, in any case
 * npm reads; its runner's `--registry`-style options; the registry lines of the project files in
 * the directory it starts in), recorded by the lock without userinfo, a start whose settings differ
 * refused; a lock without `registry` (every lock written before) holds the default registry.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import { launchMismatch } from "../../../src/lock/launch.ts";
import { lockText, parseLock } from "../../../src/lock/file.ts";
import { entryRegistry } from "../../../src/lock/registry.ts";
import type { LockedServer } from "../../../src/lock/types.ts";
import type { Upstream } from "../../../src/manifest/types.ts";
import { tempDir } from "../../helpers/tmp.ts";

const entry = (args: string[], env: Record<string, string> = {}, cwd?: string) =>
  ({ name: "web", kind: "stdio", command: "npx", args, env, cwd, enabled: true }) as unknown as Upstream;
const locked = (registry?: string[]): LockedServer => ({
  package: { runner: "npx", name: "srv", version: "1.0.0", ...(registry ? { registry } : {}) },
  tools: {},
});

describe("the registry a locked package comes from", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("is read from env (any case, scoped, userconfig), options and uv/bun settings; tokens left out", () => {
    assert.deepEqual(
      entryRegistry(
        entry(["--registry=https://u:tok@evil.example/", "--userconfig", "x.npmrc", "-y", "srv"], {
          NPM_CONFIG_REGISTRY: "https://a.example/",
          "npm_config_@acme:registry": "https://b.example/",
          npm_config_userconfig: "./other.npmrc",
          UV_INDEX_URL: "https://c.example/simple",
          BUN_CONFIG_REGISTRY: "${env:REG}",
          MEMORY_FILE_PATH: "/x",
        }),
        tmp.path,
      ),
      [
        "--registry=https://evil.example/",
        "--userconfig=x.npmrc",
        "BUN_CONFIG_REGISTRY=${env:REG}",
        "NPM_CONFIG_REGISTRY=https://a.example/",
        "UV_INDEX_URL=https://c.example/simple",
        "npm_config_@acme:registry=https://b.example/",
        "npm_config_userconfig=./other.npmrc",
      ],
    );
  });

  it("is read from the project .npmrc where the runner starts; auth lines are not", () => {
    writeFileSync(
      path.join(tmp.path, ".npmrc"),
      "//evil.example/:_authToken=secret\nregistry = https://evil.example/\nfund=false\n",
    );
    assert.deepEqual(entryRegistry(entry(["-y", "srv"]), tmp.path), [
      ".npmrc:registry = https://evil.example/",
    ]);
    assert.deepEqual(entryRegistry(entry(["-y", "srv"], {}, "sub"), tmp.path), [], "another cwd");
  });

  it("a start from other settings than the lock holds is refused, naming them", () => {
    const dir = path.join(tmp.path, "none");
    assert.equal(launchMismatch(entry(["-y", "srv"]), locked(), dir), undefined);
    assert.match(
      launchMismatch(entry(["-y", "srv"], { npm_config_registry: "https://evil.example/" }), locked(), dir)!,
      /^it fetches srv from npm_config_registry=https:\/\/evil\.example\/, not from the default registry as hermit\.lock holds/,
    );
    const held = ["npm_config_registry=https://mirror.example/"];
    const mirrored = entry(["-y", "srv"], { npm_config_registry: "https://mirror.example/" });
    assert.equal(launchMismatch(mirrored, locked(held), dir), undefined);
    assert.match(
      launchMismatch(entry(["-y", "srv"]), locked(held), dir)!,
      /from the default registry, not from npm_config_registry=https:\/\/mirror\.example\//,
    );
    assert.match(
      launchMismatch(entry(["-y", "srv"]), locked(), tmp.path)!,
      /from \.npmrc:registry = https:\/\/evil\.example\//,
    );
  });

  it("is written to and read from hermit.lock; old locks without it still read; a bad one is refused", () => {
    const lock = { format: 1 as const, servers: { web: locked(["npm_config_registry=https://m.example/"]) } };
    const text = lockText(lock);
    assert.match(text, /registry:\n\s+- npm_config_registry=https:\/\/m\.example\/\n/);
    assert.deepEqual(parseLock(text), { lock });
    const old = text.replace(/\s+registry:\n\s+- .*\n/, "\n");
    assert.deepEqual(parseLock(old), { lock: { format: 1, servers: { web: locked() } } });
    assert.deepEqual(parseLock(text.replace(/registry:\n.*\n/, "registry: 3\n")), {
      why: "servers.web.package.registry must be a list of SETTING=url",
    });
  });
});
