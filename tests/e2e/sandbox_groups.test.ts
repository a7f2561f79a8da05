/**
 * In the user namespace every confined entry gets (a tool with the network open and nothing to
 * hide too: before, it got none), the user's supplementary groups still open what they open: a
 * tool run by a user whose group owns a file and a socket (mode 0640, 0660) reads the one and
 * connects to the other; the same user
 * without the group is refused (so the group is what opens them). A setuid-root program runs as
 * the user, as it already did under no-new-privileges. hermit runs as `nobody` with a group of
 * the test's through `setpriv`, so root, setpriv and a hermit and node `nobody` may run are needed.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, copyFileSync, mkdirSync, readlinkSync, writeFileSync } from "node:fs";
import type { Server } from "node:net";
import path from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { listenUnix } from "../helpers/dial.ts";
import { hermitBin } from "../helpers/hermit.ts";
import { sandboxRequirements } from "../helpers/sandbox.ts";
import { tempDir } from "../helpers/tmp.ts";

const kernel = sandboxRequirements();
const NOBODY = 65534;
const GROUP = 40000 + (process.pid % 10000);

/** Why this cannot run here, or undefined. */
function unmet(): string | undefined {
  if (process.getuid?.() !== 0) return "needs root (to run hermit as another user)";
  const probe = spawnSync("setpriv", [
    `--reuid=${NOBODY}`,
    `--regid=${NOBODY}`,
    "--clear-groups",
    "--inh-caps=-all",
    "sh",
    "-c",
    `"$1" --version >/dev/null && node -e 0`,
    "sh",
    hermitBin(),
  ], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, cwd: "/" });
  return probe.error || probe.status !== 0
    ? "needs setpriv, and a hermit and node nobody may run"
    : undefined;
}
const why = kernel.skip || unmet();

/** The tool: reads the file, connects to the socket, runs the setuid program. */
const PROBE = `
const fs = require("node:fs"), net = require("node:net"), cp = require("node:child_process");
const [file, sock, suid] = process.argv.slice(2);
const out = {};
try { out.file = fs.readFileSync(file, "utf8"); } catch (e) { out.file = e.code; }
out.euid = cp.spawnSync(suid, ["-u"], { encoding: "utf8" }).stdout.trim();
out.userns = fs.readlinkSync("/proc/self/ns/user");
const s = net.connect(sock);
const done = (v) => { out.socket = v; s.destroy(); console.log(JSON.stringify(out)); };
s.on("connect", () => done("connected"));
s.on("error", (e) => done(e.code));
`;

describe("the user's supplementary groups, in a confined entry", { skip: why }, () => {
  const tmp = tempDir("hermit-groups-");
  const servers: Server[] = [];
  const dir = path.join(tmp.path, "adapter");
  const file = path.join(tmp.path, "group-file");
  const sock = path.join(tmp.path, "group.sock");
  const suid = path.join(tmp.path, "suid-id");
  const home = path.join(tmp.path, "home");

  before(async () => {
    kernel.assertReady();
    chmodSync(tmp.path, 0o755);
    mkdirSync(dir);
    writeFileSync(path.join(dir, "probe.js"), PROBE);
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      [
        "name: groups",
        "exports: { tools: [probe] }",
        "tools:",
        "  probe:",
        `    run: [node, probe.js, "${file}", "${sock}", "${suid}"]`,
        "    read_only: true",
        "    sandbox: {}",
      ].join("\n") + "\n",
    );
    writeFileSync(file, "for the group");
    chownSync(file, 0, GROUP);
    chmodSync(file, 0o640);
    await listenUnix(sock, servers);
    chownSync(sock, 0, GROUP);
    chmodSync(sock, 0o660);
    copyFileSync("/usr/bin/id", suid);
    chmodSync(suid, 0o4755);
    for (const d of [home, path.join(tmp.path, "state"), path.join(tmp.path, "ws")]) {
      mkdirSync(d);
      chownSync(d, NOBODY, NOBODY);
    }
  });
  after(async () => {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    tmp.cleanup();
  });

  /** The probe's answer, hermit run as nobody with `groups` (none: cleared). */
  const probeAs = (groups: number[]) =>
    new Promise<Record<string, string>>((resolve, reject) => {
      const child = spawn("setpriv", [
        `--reuid=${NOBODY}`,
        `--regid=${NOBODY}`,
        groups.length ? `--groups=${groups.join(",")}` : "--clear-groups",
        "--inh-caps=-all",
        hermitBin(),
        "call",
        dir,
        "probe",
      ], {
        cwd: path.join(tmp.path, "ws"),
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: home,
          HERMIT_HOME: path.join(tmp.path, "state"),
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (d) => out += d);
      child.stderr.on("data", (d) => err += d);
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
      child.on("close", (code) => {
        clearTimeout(timer);
        try {
          assert.equal(code, 0, out + err);
          resolve(JSON.parse(out));
        } catch (e) {
          reject(e);
        }
      });
    });

  const hostUserns = readlinkSync("/proc/self/ns/user");

  it("a group the user is in opens a group-owned file and socket; setuid gives nothing", async () => {
    const { userns, ...got } = await probeAs([GROUP]);
    assert.notEqual(userns, hostUserns, "the tool runs in a user namespace of its own");
    assert.deepEqual(got, { file: "for the group", euid: String(NOBODY), socket: "connected" });
  });

  it("control: without the group both are refused", async () => {
    const { userns: _, ...got } = await probeAs([]);
    assert.deepEqual(got, { file: "EACCES", euid: String(NOBODY), socket: "EACCES" });
  });
});
