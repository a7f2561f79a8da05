/**
 * Every confined entry gets its own SysV IPC and its own `/dev/shm`: the user's other processes'
 * shared memory (X's MIT-SHM buffers, databases, POSIX shm files), theirs to read and write, is
 * out of its sight; its own shared memory works. Before, a `network: none` tool read a segment
 * another process of the user held and wrote into it, and read a /dev/shm file; later a tool with
 * the network open and nothing to hide by a mount (no namespace asked for) still did. A control
 * with `sandbox: off` reads it. The compiled launcher (which enters the namespaces) only; python3
 * for shmget.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { runHermit } from "../helpers/hermit.ts";
import { Reaper, waitFor } from "../helpers/procs.ts";
import { requirements, toolNeeds } from "../helpers/requirements.ts";
import { sandboxRequirements } from "../helpers/sandbox.ts";
import { tempDir } from "../helpers/tmp.ts";

const kernel = sandboxRequirements();
const python = requirements(toolNeeds({ python3: "python3" }));
const SECRET = "SYSV-SHM-SECRET";

/** Holds a 0600 segment with the secret; writes its id to argv[1], then waits to be killed. */
const HOLDER = `
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
sid = libc.shmget(int(sys.argv[2]), 4096, 0o1000 | 0o600)
addr = libc.shmat(sid, None, 0)
ctypes.memmove(addr, b"${SECRET}\\0", ${SECRET.length + 1})
open(sys.argv[1], "w").write(str(sid))
while True: time.sleep(1)
`;

/** The tool: the segment by its key, and the host's /dev/shm file ("absent" when not there); its own /dev/shm file works. */
const PEEK = `
import ctypes, errno, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
out = {}
sid = libc.shmget(int(sys.argv[1]), 0, 0)
if sid < 0:
    out["segment"] = "absent"
else:
    addr = libc.shmat(sid, None, 0o10000)  # SHM_RDONLY
    out["segment"] = ctypes.string_at(addr, 64).split(b"\\0")[0].decode()
try:
    out["shm_file"] = open(sys.argv[2]).read()
except OSError as e:
    out["shm_file"] = "absent" if e.errno == errno.ENOENT else errno.errorcode[e.errno]
own = "/dev/shm/hermit-own-%d" % os.getpid()
with open(own, "w") as f: f.write("mine")
out["own"] = open(own).read()
os.unlink(own)
print(json.dumps(out))
`;

describe("SysV shared memory of the user's other processes", { skip: kernel.skip || python.skip }, () => {
  const tmp = tempDir("hermit-sandbox-ipc-");
  const reaper = new Reaper();
  const key = String(0x48000000 + (process.pid % 0xffff) * 16 + Math.floor(Math.random() * 16));
  const shmFile = `/dev/shm/hermit-ipc-test-${process.pid}-${key}`;
  let holder: ChildProcess;
  let sid = "";
  let env: Record<string, string>;

  function adapter(name: string, sandbox: string): string {
    const dir = path.join(tmp.path, name);
    mkdirSync(path.join(dir, "tools"), { recursive: true });
    writeFileSync(path.join(dir, "tools", "peek.py"), PEEK);
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      [
        `name: ${name}`,
        "exports: { tools: [peek] }",
        "tools:",
        "  peek:",
        `    run: [python3, tools/peek.py, "${key}", "${shmFile}"]`,
        "    read_only: true",
        `    sandbox: ${sandbox}`,
      ].join("\n") + "\n",
    );
    return dir;
  }

  before(async () => {
    kernel.assertReady();
    python.assertReady();
    const idFile = path.join(tmp.path, "sid");
    writeFileSync(path.join(tmp.path, "holder.py"), HOLDER);
    writeFileSync(shmFile, "SHM-FILE-SECRET");
    holder = spawn("python3", [path.join(tmp.path, "holder.py"), idFile, key], { stdio: "ignore" });
    reaper.track(holder.pid);
    sid = await waitFor(() => {
      try {
        return readFileSync(idFile, "utf8") || undefined;
      } catch {
        return undefined;
      }
    }, { timeoutMs: 20_000, what: "the segment" });
    env = {
      ...process.env as Record<string, string>,
      HOME: path.join(tmp.path, "home"),
      HERMIT_HOME: path.join(tmp.path, "state"),
    };
    mkdirSync(env.HOME);
  });
  after(async () => {
    await reaper.reap();
    if (sid) {
      spawnSync("python3", ["-c", `import ctypes; ctypes.CDLL(None).shmctl(${Number(sid)}, 0, None)`]);
    }
    rmSync(shmFile, { force: true });
    tmp.cleanup();
  });

  it("a tool with network: none does not see it", async () => {
    const r = await runHermit(["call", adapter("confined", "{ network: none }"), "peek"], {
      env,
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { segment: "absent", shm_file: "absent", own: "mine" }, r.stderr);
  });

  it("a tool with the network open and nothing to hide does not see it either", async () => {
    // an empty workspace and no agent: before, nothing asked for a namespace and it shared the user's
    const ws = path.join(tmp.path, "ws");
    mkdirSync(ws, { recursive: true });
    const open = { ...env };
    delete open.SSH_AUTH_SOCK;
    delete open.XDG_RUNTIME_DIR;
    const r = await runHermit(["call", adapter("open", "{}"), "peek"], {
      env: open,
      cwd: ws,
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { segment: "absent", shm_file: "absent", own: "mine" }, r.stderr);
  });

  it("control: with sandbox: off it reads the secret", async () => {
    const r = await runHermit(["call", adapter("control", "off"), "peek"], { env, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { segment: SECRET, shm_file: "SHM-FILE-SECRET", own: "mine" });
  });
});
