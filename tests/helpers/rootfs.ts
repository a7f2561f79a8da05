/**
 * Minimal root file systems for running a hermit binary with nothing else around it: a temporary
 * directory holding exactly the files a test puts there (a C library, the binary, an adapter),
 * entered with `unshare --root` in fresh mount and pid namespaces with their own /proc — which is
 * what a container is, minus the image. Everything is gone when the directory is removed and the
 * namespace's first process dies (`--kill-child`: killing unshare kills the whole namespace), so
 * nothing is mounted on the host and nothing can be left behind.
 *
 * Also raw JSON-RPC lines for driving `hermit serve` over stdio. (Which tools a suite needs is
 * `requirements.ts`, re-exported here.)
 */
import { execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  mkdirSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import process from "node:process";
import type { RunResult } from "./hermit.ts";
import { collect } from "./procs.ts";

/** Moved to procs.ts (it is not about root file systems); re-exported for existing callers. */
export { collect };
/** Moved to requirements.ts (what tests need from the machine); re-exported for existing callers. */
export { CI, findTool, type Need, requirements } from "./requirements.ts";

export const isRoot = () => process.getuid?.() === 0;

/**
 * The environment inside unless a test gives one. HOME is set because hermit asks the OS for the
 * home directory (os.homedir()), which fails where neither HOME nor a passwd entry exists.
 */
const DEFAULT_ENV: Record<string, string> = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/tmp" };

/** A root file system in `dir` (which the caller creates and removes). */
export class Rootfs {
  constructor(readonly dir: string) {
    for (const d of ["dev", "proc", "tmp", "etc"]) mkdirSync(path.join(dir, d), { recursive: true });
    chmodSync(path.join(dir, "tmp"), 0o1777);
    // The one device programs expect; a node, not a mount (nothing to undo).
    execFileSync("mknod", ["-m", "666", path.join(dir, "dev", "null"), "c", "1", "3"]);
    writeFileSync(path.join(dir, "etc", "hosts"), "127.0.0.1 localhost\n::1 localhost\n");
  }

  at(p: string): string {
    return path.join(this.dir, p);
  }

  /** Copy a host file in (symlinks followed) at `to` (default: the same path). */
  copy(from: string, to = from, mode?: number): this {
    mkdirSync(path.dirname(this.at(to)), { recursive: true });
    copyFileSync(realpathSync(from), this.at(to));
    if (mode !== undefined) chmodSync(this.at(to), mode);
    return this;
  }

  write(to: string, text: string | Uint8Array, mode = 0o644): this {
    mkdirSync(path.dirname(this.at(to)), { recursive: true });
    writeFileSync(this.at(to), text, { mode });
    chmodSync(this.at(to), mode);
    return this;
  }

  mkdir(to: string, owner?: { uid: number; gid: number }, mode = 0o755): this {
    mkdirSync(this.at(to), { recursive: true, mode });
    chmodSync(this.at(to), mode);
    if (owner) chownSync(this.at(to), owner.uid, owner.gid);
    return this;
  }

  link(to: string, target: string): this {
    mkdirSync(path.dirname(this.at(to)), { recursive: true });
    symlinkSync(target, this.at(to));
    return this;
  }

  /** busybox (static) as /bin/busybox with the applets named, e.g. sh, wget, sha256sum. */
  busybox(busybox: string, applets: string[]): this {
    this.copy(busybox, "/bin/busybox", 0o755);
    for (const a of applets) this.link(`/bin/${a}`, "busybox");
    return this;
  }

  /** The glibc files `binary` links (from `ldd`), at the same paths; returns them. */
  glibcFor(binary: string): string[] {
    const libs = glibcLibs(binary);
    for (const lib of libs) this.copy(lib);
    return libs;
  }

  /**
   * A musl C library (Debian's `musl`) plus the C++ runtime Bun's musl build links: Debian's
   * libstdc++ and libgcc_s, with the compat shim (`fixtures/musl/gcompat.c`, built as `shim`).
   */
  musl(shim: string): this {
    this.copy("/lib/ld-musl-x86_64.so.1");
    this.link("/lib/libc.musl-x86_64.so.1", "ld-musl-x86_64.so.1");
    this.copy("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/lib/libstdc++.so.6");
    this.copy("/lib/x86_64-linux-gnu/libgcc_s.so.1", "/usr/lib/libgcc_s.so.1");
    this.copy(shim, "/usr/lib/ld-linux-x86-64.so.2");
    return this;
  }

  /** `argv` inside, as `user` (uid:gid) when given, with exactly `env`. */
  spawn(argv: string[], opts: { env?: Record<string, string>; user?: { uid: number; gid: number } } = {}) {
    const user = opts.user ? ["--setgid", String(opts.user.gid), "--setuid", String(opts.user.uid)] : [];
    return spawn(
      "unshare",
      [
        "--fork",
        "--pid",
        "--kill-child",
        "--mount-proc=/proc",
        `--root=${this.dir}`,
        "--wd=/",
        ...user,
        ...argv,
      ],
      { env: opts.env ?? DEFAULT_ENV, stdio: ["pipe", "pipe", "pipe"] },
    );
  }

  run(
    argv: string[],
    opts: {
      env?: Record<string, string>;
      user?: { uid: number; gid: number };
      input?: string;
      timeoutMs?: number;
    } = {},
  ): Promise<RunResult> {
    return collect(this.spawn(argv, opts), opts.input, opts.timeoutMs ?? 60_000, argv.join(" "));
  }
}

/** The shared libraries `binary` needs, from the host's ldd (absolute paths, vdso left out). */
export function glibcLibs(binary: string): string[] {
  const out = execFileSync("ldd", [binary], { encoding: "utf8" });
  return [...out.matchAll(/(\/\S+\.so[.\d]*)\s/g)].map((m) => m[1]);
}

/** JSON-RPC lines a host would send: initialize, initialized, then `requests` (ids 2, 3, …). */
export function mcpInput(requests: { method: string; params?: unknown }[], eol = "\n"): string {
  const lines: unknown[] = [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "smoke", version: "0" },
      },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    ...requests.map((r, i) => ({ jsonrpc: "2.0", id: i + 2, ...r })),
  ];
  return lines.map((l) => JSON.stringify(l) + eol).join("");
}

/** Responses by id from a server's stdout (other lines are ignored). */
export function responses(
  stdout: string,
): Map<number, { result?: Record<string, unknown>; error?: unknown }> {
  const out = new Map<number, { result?: Record<string, unknown>; error?: unknown }>();
  for (const line of stdout.split(/\r?\n/)) {
    try {
      const m = JSON.parse(line);
      if (typeof m.id === "number") out.set(m.id, m);
    } catch { /* not JSON-RPC */ }
  }
  return out;
}

/** The text of a tools/call result. */
export function callText(r: { result?: Record<string, unknown> } | undefined): string {
  const content = (r?.result?.content ?? []) as { text?: string }[];
  return content.map((c) => c.text ?? "").join("\n");
}
