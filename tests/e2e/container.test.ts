/**
 * The Dockerfile, run without Docker (these machines have no engine): its layout rebuilt as a
 * root file system — the binary at /usr/local/bin/hermit, tini, the non-root user from its
 * useradd line, /adapter owned by root with only .serve/ writable, the token as a read-only
 * secret in /run/secrets — and its ENTRYPOINT + CMD run there as that user, with tini as PID 1 of
 * a fresh pid namespace, the environment from its ENV line. Then what a deployment relies on:
 * /health answers without a token, /mcp refuses a request without one and serves an
 * authenticated MCP client, the HEALTHCHECK command passes when run inside the "container"
 * (nsenter, as `docker exec` does), and a `docker stop` (SIGTERM to PID 1) ends it cleanly.
 * Differences from the image, on purpose: the glibc files come from this machine (the image's
 * debian:12-slim has the same), the adapter is a command-tool one (the image's default needs
 * Node.js), and the port is a free one instead of 8080 (this runs in the host's network).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import process from "node:process";
import { hermitBin, root } from "../helpers/hermit.ts";
import { readUntil, Reaper, waitFor } from "../helpers/procs.ts";
import { collect, findTool, isRoot, requirements, Rootfs } from "../helpers/rootfs.ts";
import { httpClient } from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";

const version: string = JSON.parse(readFileSync(path.join(root, "deno.json"), "utf8")).version;
const dockerfile = readFileSync(path.join(root, "Dockerfile"), "utf8");

/** The facts of the Dockerfile this test rebuilds. */
function parseDockerfile(text: string) {
  const lines = text.replace(/\\\n/g, " ").split("\n").filter((l) => !l.startsWith("#"));
  const instr = (name: string) =>
    lines.filter((l) => l.startsWith(name + " ")).map((l) => l.slice(name.length + 1));
  const json = (s: string) => JSON.parse(s.slice(s.indexOf("["))) as string[];
  const useradd = instr("RUN").find((r) => r.includes("useradd"))!;
  const env: Record<string, string> = {};
  for (const e of instr("ENV")) for (const m of e.matchAll(/(\w+)=(\S+)/g)) env[m[1]] = m[2];
  return {
    from: instr("FROM")[0],
    user: instr("USER")[0],
    uid: Number(/--uid (\d+)/.exec(useradd)![1]),
    gid: Number(/--gid (\d+)/.exec(instr("RUN").find((r) => r.includes("groupadd"))!)![1]),
    home: /--home-dir (\S+)/.exec(useradd)![1],
    copies: instr("COPY"),
    workdir: instr("WORKDIR")[0],
    env,
    healthcheck: json(instr("HEALTHCHECK")[0].slice(instr("HEALTHCHECK")[0].indexOf("CMD"))),
    entrypoint: json(instr("ENTRYPOINT")[0]),
    cmd: json(instr("CMD")[0]),
  };
}

const nsenter = findTool("nsenter");
const req = requirements([
  { what: "root (for unshare --root)", ok: isRoot(), fix: "run the tests as root, as CI does" },
  {
    what: "unshare and nsenter",
    ok: !!findTool("unshare") && !!nsenter,
    fix: "apt-get install -y util-linux",
  },
  { what: "tini", ok: existsSync("/usr/bin/tini"), fix: "apt-get install -y tini" },
]);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().once("error", reject).listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

describe("the Dockerfile's layout, in a chroot", { skip: req.skip }, () => {
  const d = parseDockerfile(dockerfile);
  const work = tempDir("hermit-container-");
  const reaper = new Reaper();
  const token = "container-test-token-" + Math.random().toString(36).slice(2);
  const user = { uid: d.uid, gid: d.gid };
  let fs: Rootfs;
  let unshare: ReturnType<Rootfs["spawn"]>;
  let port = 0;
  let stdout = "";
  let stderr = "";

  before(async () => {
    req.assertReady();
    fs = new Rootfs(path.join(work.path, "root"));
    fs.glibcFor(hermitBin());
    fs.glibcFor("/usr/bin/tini");
    fs.copy("/usr/bin/tini", "/usr/bin/tini", 0o755);
    fs.copy(hermitBin(), "/usr/local/bin/hermit", 0o755);
    fs.write(
      "/etc/passwd",
      `root:x:0:0:root:/root:/bin/sh\n${d.user}:x:${d.uid}:${d.gid}::${d.home}:/usr/sbin/nologin\n`,
    );
    fs.write("/etc/group", `root:x:0:\n${d.user}:x:${d.gid}:\n`);
    fs.mkdir(d.home, user);
    fs.write(
      "/adapter/hermit.yaml",
      "name: boxed\nversion: 0.1.0\ndescription: container layout test\nexports:\n  tools: [version]\n" +
        "tools:\n  version:\n    description: hermit's version\n    input: { type: object }\n" +
        "    run: [/usr/local/bin/hermit, --version]\n    read_only: true\n",
    );
    fs.mkdir("/adapter/.serve", user, 0o700);
    fs.write("/run/secrets/hermit_token", token + "\n", 0o444);
    port = await freePort();
    const argv = [...d.entrypoint, ...d.cmd].map((a) => (a === "8080" ? String(port) : a));
    unshare = fs.spawn(argv, {
      user,
      env: { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", ...d.env },
    });
    reaper.track(unshare.pid);
    unshare.stderr!.setEncoding("utf8").on("data", (t) => (stderr += t));
    stdout = await readUntil(unshare.stdout!, "/mcp\n", 60_000).catch((e) => {
      throw new Error(`${e.message}\nstderr: ${stderr}`);
    });
  });

  after(async () => {
    await reaper.reap();
    work.cleanup();
  });

  /** Host pids of the namespace's processes: [PID 1 (tini), its descendants…]. */
  const nsInit = () =>
    Number(readFileSync(`/proc/${unshare.pid}/task/${unshare.pid}/children`, "utf8").trim());

  it("is built as the issue asks: a slim base, a non-root user, the binary, tini, serve --standalone", () => {
    assert.match(d.from, /^debian:\d+-slim$/);
    assert.notEqual(d.uid, 0);
    assert.ok(d.copies.some((c) => c === "dist/hermit-linux-x64 /usr/local/bin/hermit"), String(d.copies));
    assert.deepEqual(d.entrypoint.slice(0, 2), ["/usr/bin/tini", "--"]);
    assert.deepEqual(d.cmd.slice(0, 5), ["serve", "/adapter", "--standalone", "--host", "0.0.0.0"]);
    assert.ok(d.cmd.includes("--token-file") && d.cmd.includes("/run/secrets/hermit_token"));
    assert.deepEqual(d.healthcheck.slice(1), ["status", "/adapter"]);
  });

  it("runs as the non-root user, with tini as PID 1", () => {
    const init = nsInit();
    assert.equal(readFileSync(`/proc/${init}/cmdline`, "utf8").split("\0")[0], "/usr/bin/tini");
    const status = readFileSync(`/proc/${init}/status`, "utf8");
    assert.match(status, new RegExp(`^Uid:\\s+${d.uid}\\s`, "m"));
    assert.match(status, /^NSpid:\s+\d+\s+1$/m, "PID 1 in its namespace");
    assert.match(stdout, new RegExp(`^http://localhost:${port}/mcp$`, "m"));
    assert.match(stderr, /without TLS/, "a non-loopback bind warns about TLS");
  });

  it("answers /health without a token (its status; the details with it) and refuses /mcp without one", async () => {
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: "ok" });
    const full = await fetch(`http://127.0.0.1:${port}/health`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = await full.json() as { status: string; adapter: string; tools: number };
    assert.deepEqual([body.status, body.adapter, body.tools], ["ok", "boxed", 1]);
    const anon = await fetch(`http://127.0.0.1:${port}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    assert.equal(anon.status, 401);
    await anon.body?.cancel();
  });

  it("serves an MCP client that sends the token from the secret", async () => {
    const client = await httpClient(`http://127.0.0.1:${port}/mcp`, token);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ["version"]);
      const r = await client.callTool({ name: "version", arguments: {} });
      assert.deepEqual(r.content, [{ type: "text", text: `hermit ${version}` }]);
    } finally {
      await client.close();
    }
  });

  it("passes its HEALTHCHECK, run inside the container", async () => {
    const check = spawn(
      nsenter!,
      [
        `--target=${nsInit()}`,
        "--mount",
        "--pid",
        "--root",
        "--wd",
        `--setuid=${d.uid}`,
        `--setgid=${d.gid}`,
        "--",
        ...d.healthcheck,
      ],
      { env: { PATH: "/usr/local/bin:/usr/bin:/bin", ...d.env }, stdio: ["pipe", "pipe", "pipe"] },
    );
    const r = await collect(check, undefined, 30_000, "the HEALTHCHECK");
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, new RegExp(`boxed: running at http://localhost:${port}/mcp`));
  });

  it("stops cleanly on docker stop (SIGTERM to PID 1), removing its endpoint file", async () => {
    const exited = new Promise<number | null>((resolve) => unshare.once("exit", (code) => resolve(code)));
    assert.ok(existsSync(fs.at("/adapter/.serve/endpoint")));
    process.kill(nsInit(), "SIGTERM");
    const code = await Promise.race([
      exited,
      new Promise<string>((r) => setTimeout(() => r("timeout"), 20_000)),
    ]);
    assert.equal(code, 0, stderr);
    await waitFor(() => !existsSync(fs.at("/adapter/.serve/endpoint")), { what: "the endpoint file to go" });
  });
});
