/**
 * The sockets of agents that act with the user's keys are out of a confined entry's reach: an
 * ssh-agent (by `$SSH_AUTH_SOCK`, and at its default `/tmp/ssh-*`) and a gpg-agent in `~/.gnupg`.
 * Landlock does not govern connecting to a socket, so before, any entry (an untrusted server
 * with `network: none` too) connected and could have had the agent sign as the user; now each is
 * hidden by a mount in the entry's mount namespace. Stand-in listeners, so no ssh-agent is
 * needed; a control with `sandbox: off` connects to all three. The compiled launcher (which
 * makes the namespace) only.
 */
import assert from "node:assert/strict";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import path from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { runHermit } from "../helpers/hermit.ts";
import { sandboxRequirements } from "../helpers/sandbox.ts";
import { tempDir } from "../helpers/tmp.ts";

const kernel = sandboxRequirements();

/** The tool: connects to each path it is given, says "connected" or the error's code. */
const DIAL = `
const net = require("node:net");
const paths = JSON.parse(require("node:fs").readFileSync(0, "utf8")).paths;
const out = {};
let left = paths.length;
for (const p of paths) {
  const s = net.connect(p);
  const done = (v) => { if (p in out) return; out[p] = v; s.destroy(); if (--left === 0) console.log(JSON.stringify(out)); };
  s.on("connect", () => done("connected"));
  s.on("error", (e) => done(e.code));
  setTimeout(() => done("timeout"), 5000).unref();
}
`;

describe("agents' sockets, from confined entries", { skip: kernel.skip }, () => {
  const tmp = tempDir("hermit-agents-");
  const servers: Server[] = [];
  const sshTmp = `/tmp/ssh-hermittest${process.pid}${Math.floor(Math.random() * 1e6)}`;
  const home = path.join(tmp.path, "home");
  const authSock = path.join(tmp.path, "agent.sock");
  const defaultSock = path.join(sshTmp, `agent.${process.pid}`);
  const gpgSock = path.join(home, ".gnupg", "S.gpg-agent");
  let env: Record<string, string>;

  function adapter(name: string, sandbox: string): string {
    const dir = path.join(tmp.path, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, "dial.js"), DIAL);
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      [
        `name: ${name}`,
        "exports: { tools: [dial] }",
        "tools:",
        "  dial:",
        "    input: { type: object, properties: { paths: { type: array, items: { type: string } } } }",
        "    run: [node, dial.js]",
        "    read_only: true",
        `    sandbox: ${sandbox}`,
      ].join("\n") + "\n",
    );
    return dir;
  }

  const listen = (at: string) =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((c) => c.end()).on("error", reject);
      servers.push(s);
      s.listen(at, () => resolve());
    });

  before(async () => {
    kernel.assertReady();
    mkdirSync(path.join(home, ".gnupg"), { recursive: true, mode: 0o700 });
    mkdirSync(sshTmp, { mode: 0o700 });
    for (const at of [authSock, defaultSock, gpgSock]) await listen(at);
    env = {
      ...process.env as Record<string, string>,
      HOME: home,
      HERMIT_HOME: path.join(tmp.path, "state"),
      SSH_AUTH_SOCK: authSock,
    };
  });
  after(() => {
    for (const s of servers) s.close();
    rmSync(sshTmp, { recursive: true, force: true });
    tmp.cleanup();
  });

  const dial = async (dir: string) => {
    const paths = [authSock, defaultSock, gpgSock];
    const r = await runHermit(["call", dir, "dial", "--args", JSON.stringify({ paths })], {
      env,
      cwd: tmp.path,
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    return JSON.parse(r.stdout) as Record<string, string>;
  };

  for (
    const [what, sandbox] of [["a tool with network", "{}"], [
      "a tool with network: none",
      "{ network: none }",
    ]]
  ) {
    it(`${what}: none of the three answers`, async () => {
      const got = await dial(adapter(what.replace(/\W+/g, "-"), sandbox));
      for (const [at, v] of Object.entries(got)) {
        assert.notEqual(v, "connected", `${at}: ${JSON.stringify(got)}`);
      }
    });
  }

  it("control: with sandbox: off all three answer", async () => {
    const got = await dial(adapter("control", "off"));
    assert.deepEqual(Object.values(got), ["connected", "connected", "connected"], JSON.stringify(got));
  });
});
