/**
 * hermit.lock pins a name and a version, not the bytes: the same `hermit-rug-fixture@1.0.0` from
 * another registry is other code. From the compiled binary, with two real local registries: a
 * registry setting in hermit's own environment never reaches the server (gate 2: the other
 * registry sees no request); one added to the entry's `env:` after the lock did redirect npx
 * (before, the other registry was asked for the package and the call ran), and now the server is
 * not started and `call` and `check` say which setting in one line; `hermit lock` records it and
 * the start is allowed again. An `.npmrc` naming a registry in the adapter directory, which npx
 * reads as the project's config (it did redirect it before), is refused the same way.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import process from "node:process";
import path from "node:path";
import { fixtures, runHermit } from "../helpers/hermit.ts";
import { npmHome, packVersion, type Registry, startRegistry } from "../helpers/npm_registry.ts";
import { tempDir } from "../helpers/tmp.ts";

const rugpull = path.join(fixtures, "servers", "rugpull.mjs");
const NAME = "hermit-rug-fixture";

function manifest(dir: string, env = ""): void {
  writeFileSync(
    path.join(dir, "hermit.yaml"),
    `name: registry
exports: { tools: [fetch_page, ping_server] }
mcp_servers:
  web:
    command: npx
    args: [-y, ${NAME}@1.0.0]
${env}`,
  );
}

describe("a locked package fetched from another registry", () => {
  const tmp = tempDir();
  let home = "";
  let dir = "";
  let mirror: Registry | undefined;
  let usual: Registry | undefined;
  after(async () => {
    await usual?.close();
    await mirror?.close();
    tmp.cleanup();
  });
  const run = (args: string[], extra: Record<string, string> = {}) =>
    runHermit(args, { env: { ...process.env, HOME: home, ...extra }, timeoutMs: 120_000 });
  const asked = (r: Registry) => r.requests.filter((q) => q.includes(NAME));

  it("is locked from the usual registry", async () => {
    dir = path.join(tmp.path, "adapter");
    home = path.join(tmp.path, "home");
    mkdirSync(dir);
    const tgz = packVersion(path.join(fixtures, "packages", "rug-server"), "1.0.0", tmp.path, [rugpull]);
    usual = await startRegistry(NAME);
    mirror = await startRegistry(NAME);
    usual.publish("1.0.0", tgz);
    mirror.publish("1.0.0", tgz);
    npmHome(home, usual.url);
    manifest(dir);
    const lock = await run(["lock", dir]);
    assert.equal(lock.code, 0, lock.stdout + lock.stderr);
    assert.doesNotMatch(readFileSync(path.join(dir, "hermit.lock"), "utf8"), /registry/);
  });

  it("hermit's own npm_config_registry does not reach the server", async () => {
    const call = await run(["call", dir, "ping_server"], {
      npm_config_registry: mirror!.url,
      NPM_CONFIG_REGISTRY: mirror!.url,
    });
    assert.equal(call.code, 0, call.stdout + call.stderr);
    assert.deepEqual(asked(mirror!), []);
  });

  it("npm_config_registry added to the entry's env: not started, one line naming it", async () => {
    manifest(dir, `    env: { npm_config_registry: "${mirror!.url}/" }\n`);
    const call = await run(["call", dir, "ping_server"]);
    assert.notEqual(call.code, 0, call.stdout);
    assert.match(
      call.stdout + call.stderr,
      new RegExp(
        `mcp_servers\\.web not started: it fetches ${NAME} from npm_config_registry=http://127\\.0\\.0\\.1:\\d+/, not from the default registry as hermit\\.lock holds \\(.*take the setting out\\); review it and accept it with 'hermit lock .+'`,
      ),
    );
    assert.deepEqual(asked(mirror!), [], "npx never asked the other registry");
    const check = await run(["check", dir, "--static"]);
    assert.equal(check.code, 3, check.stdout);
    assert.match(
      check.stdout,
      /problem {2}mcp_servers\.web is not started: it fetches .* from npm_config_registry=/,
    );
  });

  it("accepted with hermit lock: recorded, and it starts from there", async () => {
    const lock = await run(["lock", dir]);
    assert.equal(lock.code, 0, lock.stdout + lock.stderr);
    assert.match(lock.stdout, /from npm_config_registry=http:\/\/127\.0\.0\.1:\d+\//);
    assert.match(
      readFileSync(path.join(dir, "hermit.lock"), "utf8"),
      /version: 1\.0\.0\n\s+registry:\n\s+- npm_config_registry=http:\/\/127\.0\.0\.1:\d+\/\n/,
    );
    const call = await run(["call", dir, "ping_server"]);
    assert.equal(call.code, 0, call.stdout + call.stderr);
    assert.notDeepEqual(asked(mirror!), [], "the setting did redirect npx");
    // and taking it out again is another registry too: the default one
    manifest(dir);
    const back = await run(["call", dir, "ping_server"]);
    assert.match(
      back.stdout + back.stderr,
      /it fetches .* from the default registry, not from npm_config_registry=/,
    );
  });

  it("an .npmrc naming a registry in the adapter directory (npx's project config): the same", async () => {
    await run(["lock", dir]); // back to the default registry
    writeFileSync(path.join(dir, ".npmrc"), `registry=${mirror!.url}/\n`);
    const seen = asked(mirror!).length;
    const call = await run(["call", dir, "ping_server"]);
    assert.notEqual(call.code, 0, call.stdout);
    assert.match(
      call.stdout + call.stderr,
      /it fetches hermit-rug-fixture from \.npmrc:registry=http:\/\/127\.0\.0\.1:\d+\/, not from the default registry/,
    );
    assert.equal(asked(mirror!).length, seen, "npx never asked the other registry");
    const check = await run(["check", dir, "--static"]);
    assert.equal(check.code, 3, check.stdout);
    assert.match(
      check.stdout,
      /problem {2}mcp_servers\.web is not started: it fetches .* from \.npmrc:registry=/,
    );
    rmSync(path.join(dir, ".npmrc"));
    assert.equal((await run(["call", dir, "ping_server"])).code, 0);
  });
});
