/**
 * A destination list (`network: [host:port]`) against the ways round Landlock's TCP connect check,
 * on the real kernel, through every flavor: TCP Fast Open (`sendto`/`sendmsg` with MSG_FASTOPEN
 * connect inside the send, where Landlock never looks) is refused by seccomp, so a loopback
 * listener not on the list is never reached. The probe is Python (Node has no MSG_FASTOPEN); the
 * control run (`sandbox: off`) shows each attempt reaching the listener, so none of this passes
 * vacuously. Nor can it serve: bind() is refused (Landlock), and so is listen() (seccomp), which
 * would otherwise bind an unbound socket to a random port on every address and accept from anyone.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { flavors, runHermit } from "../helpers/hermit.ts";
import { waitFor } from "../helpers/procs.ts";
import { requirements, toolNeeds } from "../helpers/requirements.ts";
import { type Counter, sandboxRequirements, tcpCounter } from "../helpers/sandbox.ts";
import { tempDir } from "../helpers/tmp.ts";

const kernel = sandboxRequirements();
const python = requirements(toolNeeds({ python3: "python3" }));

/** Each attempt on 127.0.0.1:PORT: "reached" or the errno's name. */
const PROBE = `
import errno, json, signal, socket, sys
signal.alarm(20)  # blocking sockets (a timeout would make a Fast Open send EINPROGRESS): a deadline
port = int(sys.argv[1]); dest = ("127.0.0.1", port); out = {}
def attempt(name, f):
    s = socket.socket()
    try:
        f(s); out[name] = "reached"
    except OSError as e:
        out[name] = errno.errorcode.get(e.errno, str(e))
    finally:
        s.close()
attempt("connect", lambda s: s.connect(dest))
attempt("tfo_sendto", lambda s: s.sendto(b"x", socket.MSG_FASTOPEN, dest))
attempt("tfo_sendmsg", lambda s: s.sendmsg([b"x"], [], socket.MSG_FASTOPEN, dest))
attempt("bind", lambda s: s.bind(("0.0.0.0", 0)))
# an unbound socket: listen() binds it to a random port on every address ("reached": it listens)
attempt("listen", lambda s: s.listen(1))
print(json.dumps(out))
`;

describe("a destination list: no way round Landlock's connect and bind checks", {
  skip: kernel.skip || python.skip,
}, () => {
  const tmp = tempDir("hermit-sandbox-net-");
  let listener: Counter;
  let env: Record<string, string>;
  const ws = path.join(tmp.path, "ws");

  /** An adapter whose one tool runs the probe with `sandbox`. */
  function adapter(name: string, sandbox: string): string {
    const dir = path.join(tmp.path, name);
    mkdirSync(path.join(dir, "tools"), { recursive: true });
    writeFileSync(path.join(dir, "tools", "probe.py"), PROBE);
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      [
        `name: ${name}`,
        "exports: { tools: [probe] }",
        "tools:",
        "  probe:",
        `    run: [python3, tools/probe.py, "${listener.port}"]`,
        "    read_only: true",
        `    sandbox: ${sandbox}`,
      ].join("\n") + "\n",
    );
    return dir;
  }

  before(async () => {
    kernel.assertReady();
    python.assertReady();
    listener = await tcpCounter();
    mkdirSync(ws);
    mkdirSync(path.join(tmp.path, "home"));
    env = {
      ...process.env as Record<string, string>,
      HOME: path.join(tmp.path, "home"),
      HERMIT_HOME: path.join(tmp.path, "state"),
    };
  });
  after(async () => {
    await listener?.close();
    tmp.cleanup();
  });

  for (const flavor of flavors()) {
    it(`${flavor}: TCP Fast Open and listen() are refused (EPERM) like connect and bind (EACCES); nothing reached`, async () => {
      const dir = adapter(`list-${flavor}`, '{ network: ["example.com:443"] }');
      const before = listener.count();
      const r = await runHermit(["call", dir, "probe"], { flavor, cwd: ws, env, timeoutMs: 60_000 });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), {
        connect: "EACCES",
        tfo_sendto: "EPERM",
        tfo_sendmsg: "EPERM",
        bind: "EACCES",
        listen: "EPERM",
      }, r.stderr);
      assert.equal(listener.count(), before, "the listener not on the list was reached");
    });
  }

  it("control: with sandbox: off each attempt reaches the listener, and it listens", async () => {
    const dir = adapter("control", "off");
    const before = listener.count();
    const r = await runHermit(["call", dir, "probe"], { cwd: ws, env, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      connect: "reached",
      tfo_sendto: "reached",
      tfo_sendmsg: "reached",
      bind: "reached",
      listen: "reached",
    });
    await waitFor(() => listener.count() === before + 3, { what: "the listener to count 3 connections" });
  });
});
