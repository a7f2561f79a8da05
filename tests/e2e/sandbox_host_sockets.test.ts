/**
 * The host's sockets that give power over the user or the machine are out of a confined entry's
 * reach: container engines' (Docker at `/run/docker.sock`, by its `/var/run` name, rootless, in
 * Docker Desktop's place and at `$DOCKER_HOST`; rootless Podman; containerd), the D-Bus session
 * bus (in the runtime directory and at `$DBUS_SESSION_BUS_ADDRESS`), systemd's and systemd --user's
 * sockets, for root the system bus, the accessibility bus, X servers' (`/tmp/.X11-unix`), Wayland, PulseAudio and PipeWire. Before, any
 * entry (an untrusted `network: none` server too) connected to each. A socket the list does not
 * name stays reachable, and a declared `read:` re-opens one. Stand-in listeners: in a runtime
 * directory and home of the test's own, and at the fixed places only where nothing is (removed
 * after; one a parallel run made is checked as hidden but not dialled by the control). The
 * compiled launcher (which makes the mount namespace) only.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, rmdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import type { Server } from "node:net";
import path from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { dialAdapter, dialFrom, listenUnix } from "../helpers/dial.ts";
import { sandboxRequirements } from "../helpers/sandbox.ts";
import { tempDir } from "../helpers/tmp.ts";

const kernel = sandboxRequirements();

describe("the host's sockets, from confined entries", { skip: kernel.skip }, () => {
  const tmp = tempDir("hermit-hostsock-");
  const run = path.join(tmp.path, "run");
  const home = path.join(tmp.path, "home");
  const servers: Server[] = [];
  /** Stand-ins this run made at fixed places: path → inode (removed after, if still ours). */
  const made = new Map<string, number>();
  /** A directory a stand-in needed is marked as a test's (any run removes it once empty). */
  const marker = (dir: string) => path.join(os.tmpdir(), `hermit-test-made${dir.replaceAll("/", "_")}`);
  const x11 = `/tmp/.X11-unix/X${40000 + (process.pid % 20000) * 10 + Math.floor(Math.random() * 10)}`;
  const ours = {
    rootlessDocker: path.join(run, "docker.sock"),
    podman: path.join(run, "podman", "podman.sock"),
    bus: path.join(run, "bus"),
    systemd: path.join(run, "systemd", "private"),
    atSpi: path.join(run, "at-spi", "bus_0"),
    wayland: path.join(run, "wayland-1"),
    pulse: path.join(run, "pulse", "native"),
    pipewire: path.join(run, "pipewire-0"),
    dockerDesktop: path.join(home, ".docker", "run", "docker.sock"),
    dockerHost: path.join(tmp.path, "dh.sock"),
    dbusAddress: path.join(tmp.path, "dbus-session"),
  };
  const other = path.join(run, "other.sock");
  const fixed = [
    "/run/docker.sock",
    "/run/containerd/containerd.sock",
    "/run/systemd/private",
    ...(process.getuid?.() === 0 ? ["/run/dbus/system_bus_socket"] : []),
    x11,
  ];
  let env: Record<string, string>;

  const listen = (at: string) => listenUnix(at, servers);

  /**
   * A stand-in at a fixed place, only where nothing is and where the test may make one (root;
   * parents made are marked, and removed by the last run to use them). Where it may not, the path
   * is only checked as hidden.
   */
  async function standIn(at: string, dirMode = 0o755) {
    if (existsSync(at)) return;
    try {
      const missing: string[] = [];
      for (let d = path.dirname(at); !existsSync(d); d = path.dirname(d)) missing.unshift(d);
      for (const d of missing) {
        mkdirSync(d, { mode: dirMode });
        writeFileSync(marker(d), "");
      }
      await listen(at);
      made.set(at, statSync(at).ino);
    } catch {
      // not ours to make (not root): dialled, not made
    }
  }

  const adapter = (name: string, sandbox: string) => dialAdapter(tmp.path, name, sandbox);

  before(async () => {
    kernel.assertReady();
    for (const at of [...Object.values(ours), other]) await listen(at);
    for (const at of fixed) await standIn(at, at === x11 ? 0o1777 : 0o755);
    env = {
      ...process.env as Record<string, string>,
      HOME: home,
      HERMIT_HOME: path.join(tmp.path, "state"),
      XDG_RUNTIME_DIR: run,
      DOCKER_HOST: `unix://${ours.dockerHost}`,
      DBUS_SESSION_BUS_ADDRESS: `unix:path=${ours.dbusAddress},guid=0123456789abcdef`,
    };
    delete env.SSH_AUTH_SOCK;
  });
  after(async () => {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    for (const [at, ino] of made) {
      try {
        if (statSync(at).ino === ino) rmSync(at);
      } catch { /* gone already */ }
    }
    const parents = fixed.flatMap((at) => {
      const up: string[] = [];
      for (let d = path.dirname(at); d !== "/"; d = path.dirname(d)) up.push(d);
      return up;
    });
    for (const d of parents.filter((d) => existsSync(marker(d)))) {
      try {
        rmdirSync(d);
        rmSync(marker(d), { force: true });
      } catch { /* another run's stand-in is still in it: that run removes it */ }
    }
    tmp.cleanup();
  });

  const dial = (dir: string, paths: string[]) => dialFrom(dir, paths, { env, cwd: tmp.path });
  const hidden = () => [...Object.values(ours), ...fixed, "/var/run/docker.sock"];

  for (
    const [what, sandbox] of [["a tool with the network open", "{}"], [
      "a tool with network: none",
      "{ network: none }",
    ]]
  ) {
    it(`${what}: none of them answers, a socket not named still does`, async () => {
      const got = await dial(adapter(what.replace(/\W+/g, "-"), sandbox), [...hidden(), other]);
      for (const at of hidden()) assert.notEqual(got[at], "connected", `${at}: ${JSON.stringify(got)}`);
      assert.equal(got[other], "connected", JSON.stringify(got));
    });
  }

  it("a declared read: re-opens one (by a linked name too), the rest stay hidden", async () => {
    const sandbox = `{ read: ["${ours.bus}", "/var/run/docker.sock"] }`;
    const got = await dial(adapter("reopened", sandbox), hidden());
    assert.equal(got[ours.bus], "connected", JSON.stringify(got));
    if (made.has("/run/docker.sock")) assert.equal(got["/run/docker.sock"], "connected", JSON.stringify(got));
    const reopened = [ours.bus, "/run/docker.sock", "/var/run/docker.sock"];
    for (const at of hidden().filter((p) => !reopened.includes(p))) {
      assert.notEqual(got[at], "connected", `${at}: ${JSON.stringify(got)}`);
    }
  });

  it("a declared deny_read: hides a socket the list does not name, by its path or a directory", async () => {
    const db = path.join(tmp.path, "pg", ".s.PGSQL.5432");
    const cache = path.join(tmp.path, "cache", "daemon.sock");
    await listen(db);
    await listen(cache);
    const sandbox = `{ deny_read: ["${path.dirname(db)}", "${cache}"] }`;
    const got = await dial(adapter("denied", sandbox), [db, cache, other]);
    assert.notEqual(got[db], "connected", JSON.stringify(got));
    assert.notEqual(got[cache], "connected", JSON.stringify(got));
    assert.equal(got[other], "connected", JSON.stringify(got));
  });

  it("control: with sandbox: off each answers", async () => {
    const mine = [...Object.values(ours), other, ...made.keys()];
    const got = await dial(adapter("control", "off"), mine);
    for (const at of mine) assert.equal(got[at], "connected", `${at}: ${JSON.stringify(got)}`);
  });
});
