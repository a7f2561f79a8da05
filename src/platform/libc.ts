/**
 * The few libc calls hermit makes on POSIX through the runtime's FFI (`bun:ffi` in the compiled
 * binary and under Bun, `Deno.dlopen` under Deno): flock(2) for the lock, and on Linux prctl(2)
 * (to become a child subreaper) and waitpid(2) (to reap the orphans that brings). libc is found
 * under the names glibc, musl and macOS give it. Every caller gets null where there is no FFI
 * (Node, Deno without --allow-ffi, Windows) or no libc could be opened, and then does without.
 */
import process from "node:process";
import { bunFfi, denoFfi } from "./ffi.ts";

export interface Libc {
  flock(fd: number, op: number): number;
  /** Linux only: prctl(option, arg2, 0, 0, 0). */
  prctl(option: number, arg2: number): number;
  /** waitpid(pid, &status, options): the pid reaped, 0 if still running, -1 on error. */
  waitpid(pid: number, options: number): number;
}

/** Where libc is, by platform: glibc's soname, then musl's loader (which is its libc). */
export function libcNames(platform: NodeJS.Platform, arch: string): string[] {
  if (platform === "darwin") return ["/usr/lib/libSystem.B.dylib", "libc.dylib"];
  const muslArch = arch === "arm64" ? "aarch64" : arch === "x64" ? "x86_64" : arch;
  return ["libc.so.6", "libc.so", `/lib/ld-musl-${muslArch}.so.1`];
}

/** The symbols, in each FFI's spelling of the types; prctl only where Linux has it. */
function symbols(i32: string, u64: string, buf: string) {
  return {
    flock: [[i32, i32], i32],
    waitpid: [[i32, buf, i32], i32],
    ...(process.platform === "linux" ? { prctl: [[i32, u64, u64, u64, u64], i32] } : {}),
  } as Record<string, [string[], string]>;
}

function bind(): Libc | null {
  const status = new Int32Array(1);
  const ffi = bunFfi();
  if (ffi) {
    const spec = Object.fromEntries(
      Object.entries(symbols("i32", "u64", "ptr")).map(([n, [args, returns]]) => [n, { args, returns }]),
    );
    const s = open((lib) => ffi.dlopen(lib, spec).symbols as Symbols);
    return s && {
      flock: (fd, op) => s.flock(fd, op),
      prctl: (option, arg2) => s.prctl(option, arg2, 0, 0, 0),
      waitpid: (pid, options) => s.waitpid(pid, ffi.ptr(status), options),
    };
  }
  const deno = denoFfi();
  if (deno) {
    const spec = Object.fromEntries(
      Object.entries(symbols("i32", "u64", "buffer")).map((
        [n, [parameters, result]],
      ) => [n, { parameters, result }]),
    );
    const s = open((lib) => deno.dlopen(lib, spec).symbols as Symbols);
    return s && {
      flock: (fd, op) => s.flock(fd, op),
      prctl: (option, arg2) => s.prctl(option, BigInt(arg2), 0n, 0n, 0n),
      waitpid: (pid, options) => s.waitpid(pid, status, options),
    };
  }
  return null;
}

type Symbols = Record<string, (...a: unknown[]) => number>;

function open(dlopen: (lib: string) => Symbols): Symbols | null {
  for (const lib of libcNames(process.platform, process.arch)) {
    try {
      return dlopen(lib);
    } catch { /* try the next name */ }
  }
  return null;
}

let bound: Libc | null | undefined;

/** libc, bound on first use; null where there is no FFI or no libc. */
export function libc(): Libc | null {
  if (bound === undefined) {
    try {
      bound = process.platform === "win32" ? null : bind();
    } catch {
      bound = null;
    }
  }
  return bound;
}
