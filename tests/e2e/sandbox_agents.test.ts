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
import { mkdirSync, rmSync } from "node:fs";
import type { Server } from "node:net";
import path from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { dialAdapter, dialFrom, listenUnix } from "../helpers/dial.ts";
import { sandboxRequirements } from "../helpers/sandbox.ts";
import { tempDir } from "../helpers/tmp.ts";

const kernel = sandboxRequirements();

describe("agents' sockets, from confined entries", { skip: kernel.skip }, () => {
  const tmp = tempDir("hermit-agents-");
  const servers: Server[] = [];
  const sshTmp = `/tmp/ssh-hermittest${process.pid}${Math.floor(Math.random() * 1e6)}`;
  const home = path.join(tmp.path, "home");
  const authSock = path.join(tmp.path, "agent.sock");
  const defaultSock = path.join(sshTmp, `agent.${process.pid}`);
  const gpgSock = path.join(home, ".gnupg", "S.gpg-agent");
  let env: Record<string, string>;

  const adapter = (name: string, sandbox: string) => dialAdapter(tmp.path, name, sandbox);

  const listen = (at: string) => listenUnix(at, servers);

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

  const dial = (dir: string) => dialFrom(dir, [authSock, defaultSock, gpgSock], { env, cwd: tmp.path });

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
