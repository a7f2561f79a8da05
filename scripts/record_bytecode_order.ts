/**
 * Records which bytecode a relay uses, for `build.ts` to lay it out together at the front of the
 * executable (`bun build --bytecode-order`): a relay then faults in about a MiB less of the binary.
 * Runs the built binary as a host would: a relay that launches its standalone service, then one
 * that attaches to it, each through `initialize`, `tools/list` and a run of `tools/call`s to
 * server-everything. Writes `scripts/bytecode-order/relay-attach.order` (the common start, listed
 * first by the build) and `relay-launch.order`. A profile recorded from an older build still
 * applies (functions that changed since are laid out as if unprofiled), so re-record when the
 * relay's code moved a lot, and commit the files.
 *
 *   deno run -A scripts/record_bytecode_order.ts [--bin dist/hermit]
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const ORDER_DIR = path.join(root, "scripts", "bytecode-order");
/** The recorded starts, most common first (the order `--bytecode-order` wants them in). */
const ORDER_FILES = ["relay-attach.order", "relay-launch.order"];
const CALLS = 200;
/** A pause in the middle of the calls, longer than the relay's slowest timer that fires while it runs. */
const HOLD_MS = 2500;

function usage(message: string): never {
  console.error(`record_bytecode_order: ${message}`);
  process.exit(2);
}

/** One relay run as a host drives it; resolves when the relay has exited. */
function relaySession(bin: string, dir: string, env: Record<string, string>): Promise<void> {
  const child = spawn(bin, ["serve", dir], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, ...env },
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const waiting = new Map<number, () => void>();
  let buf = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    buf += d;
    for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
      const id = (JSON.parse(buf.slice(0, nl)) as { id?: number }).id;
      buf = buf.slice(nl + 1);
      if (id !== undefined) waiting.get(id)?.();
    }
  });
  let next = 0;
  const send = (m: Record<string, unknown>) =>
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
  const call = (method: string, params: unknown) =>
    new Promise<void>((resolve, reject) => {
      const id = ++next;
      const timer = setTimeout(() => reject(new Error(`no answer to ${method} within 60 s`)), 60_000);
      waiting.set(id, () => (clearTimeout(timer), resolve()));
      send({ id, method, params });
    });
  return (async () => {
    await call("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "record", version: "0" },
    });
    send({ method: "notifications/initialized" });
    await call("tools/list", {});
    for (let i = 0; i < CALLS; i++) {
      if (i === CALLS / 2) await new Promise((r) => setTimeout(r, HOLD_MS));
      await call("tools/call", { name: "echo", arguments: { message: `call ${i}` } });
    }
    child.stdin.end();
    await exited;
  })().finally(() => child.kill("SIGKILL"));
}

/** Stop the service the relays launched (its pid is in the endpoint file). */
async function stopService(dir: string): Promise<void> {
  let pid: number;
  try {
    pid = (JSON.parse(readFileSync(path.join(dir, ".serve", "endpoint"), "utf8")) as { pid: number }).pid;
  } catch {
    return;
  }
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  process.kill(pid, "SIGKILL");
}

async function main() {
  const at = process.argv.indexOf("--bin");
  const bin = path.resolve(
    at > 0 ? process.argv[at + 1] ?? usage("--bin needs a path") : path.join(root, "dist", "hermit"),
  );
  const everything = path.join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
  const work = mkdtempSync(path.join(os.tmpdir(), "hermit-order-"));
  const dir = path.join(work, "adapter");
  mkdirSync(dir);
  writeFileSync(
    path.join(dir, "hermit.yaml"),
    `name: order\nexports: { tools: [echo] }\nmcp_servers:\n  everything:\n    command: node\n    args: [${
      JSON.stringify(everything)
    }]\n    tools: { include: [echo] }\nserve:\n  lifecycle: standalone\n  instructions: SERVICE.md\n`,
  );
  writeFileSync(path.join(dir, "SERVICE.md"), "hermit serve . --standalone\n");
  const env = { HERMIT_HOME: path.join(work, "state") };
  try {
    // the first relay takes the slow path (and stores the manifest copy the others use)
    await relaySession(bin, dir, env);
    await stopService(dir);
    mkdirSync(ORDER_DIR, { recursive: true });
    // the launched service inherits the variable and writes its own profile when it stops, so
    // each relay's profile is copied as soon as that relay has exited
    const launch = path.join(work, "launch.order");
    await relaySession(bin, dir, { ...env, BUN_BYTECODE_ORDER_OUT: launch });
    copyFileSync(launch, path.join(ORDER_DIR, "relay-launch.order"));
    const attach = path.join(work, "attach.order");
    await relaySession(bin, dir, { ...env, BUN_BYTECODE_ORDER_OUT: attach });
    copyFileSync(attach, path.join(ORDER_DIR, "relay-attach.order"));
    console.error(
      `record_bytecode_order: wrote ${ORDER_FILES.join(", ")} in ${path.relative(root, ORDER_DIR)}/`,
    );
  } finally {
    await stopService(dir);
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) await main();
