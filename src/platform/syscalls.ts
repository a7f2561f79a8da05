/**
 * Raw Linux system calls through the runtime's FFI (`bun:ffi` in the compiled binary and under
 * Bun, `Deno.dlopen` under Deno), for the sandbox launcher and the Landlock probe. Two libc
 * symbols only, `syscall` and `__errno_location`, which glibc and musl both export; everything
 * else is a syscall number per architecture (x86_64 and arm64). Undefined without FFI.
 */
import process from "node:process";
import { bunFfi, denoFfi } from "./ffi.ts";

export type Arch = "x64" | "arm64";

/** Syscall numbers that differ between x86_64 and arm64 (Landlock's 444-446 do not). */
const NR = {
  x64: {
    write: 1,
    close: 3,
    ioctl: 16,
    socket: 41,
    execve: 59,
    fcntl: 72,
    capset: 126,
    prctl: 157,
    mount: 165,
    statfs: 137,
    openat: 257,
    unshare: 272,
    prlimit64: 302,
    waitid: 247,
  },
  arm64: {
    write: 64,
    close: 57,
    ioctl: 29,
    socket: 198,
    execve: 221,
    fcntl: 25,
    capset: 91,
    prctl: 167,
    mount: 40,
    statfs: 43,
    openat: 56,
    unshare: 97,
    prlimit64: 261,
    waitid: 95,
  },
} as const;

export type SyscallName =
  | keyof typeof NR.x64
  | "landlock_create_ruleset"
  | "landlock_add_rule"
  | "landlock_restrict_self";

/** Open flags that differ by architecture. */
export const O_FLAGS = {
  x64: { O_NOFOLLOW: 0x20000, O_DIRECTORY: 0x10000 },
  arm64: { O_NOFOLLOW: 0x8000, O_DIRECTORY: 0x4000 },
} as const;
export const O_RDONLY = 0;
export const O_PATH = 0x200000;
export const O_CLOEXEC = 0x80000;
export const AT_FDCWD = -100;

export interface Libc {
  arch: Arch;
  /** The raw call: the result, or -errno when it failed. */
  call(name: SyscallName, ...args: (number | bigint)[]): number;
  /** The address of a buffer, to pass as a pointer argument (keep the buffer referenced). */
  address(buf: ArrayBufferView): bigint;
}

/** glibc's name first; musl answers to it too (and to its own). */
const LIBC_NAMES = ["libc.so.6", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1", "libc.so"];

function number(name: SyscallName, arch: Arch): number {
  if (name === "landlock_create_ruleset") return 444;
  if (name === "landlock_add_rule") return 445;
  if (name === "landlock_restrict_self") return 446;
  return NR[arch][name];
}

function tryOpen<T>(open: (lib: string) => T): T | undefined {
  for (const lib of LIBC_NAMES) {
    try {
      return open(lib);
    } catch {
      // the next name
    }
  }
  return undefined;
}

function bind(arch: Arch): Libc | undefined {
  const six = ["i64", "i64", "i64", "i64", "i64", "i64", "i64"];
  const ffi = bunFfi();
  if (ffi) {
    const lib = tryOpen((name) =>
      ffi.dlopen(name, {
        syscall: { args: six, returns: "i64" },
        __errno_location: { args: [], returns: "ptr" },
      }).symbols
    );
    if (!lib) return undefined;
    return {
      arch,
      call(name, ...args) {
        const a = [number(name, arch), ...args];
        while (a.length < 7) a.push(0);
        const r = Number(lib.syscall(...a));
        return r === -1 ? -ffi.read.i32(lib.__errno_location() as number, 0) : r;
      },
      address: (buf) => BigInt(ffi.ptr(buf)),
    };
  }
  const deno = denoFfi();
  if (deno) {
    const lib = tryOpen((name) =>
      deno.dlopen(name, {
        syscall: { parameters: six, result: "i64" },
        __errno_location: { parameters: [], result: "pointer" },
      }).symbols
    );
    if (!lib) return undefined;
    return {
      arch,
      call(name, ...args) {
        const a: (number | bigint)[] = [number(name, arch), ...args];
        while (a.length < 7) a.push(0);
        const r = Number(lib.syscall(...a.map(BigInt)));
        return r === -1 ? -new deno.UnsafePointerView(lib.__errno_location()).getInt32(0) : r;
      },
      address: (buf) => deno.UnsafePointer.value(deno.UnsafePointer.of(buf)),
    };
  }
  return undefined;
}

let bound: Libc | null | undefined;

/** The bound calls; null off Linux, on another architecture, or without FFI. */
export function libc(): Libc | null {
  if (bound === undefined) {
    const arch = process.arch === "x64" || process.arch === "arm64" ? process.arch : undefined;
    try {
      bound = process.platform === "linux" && arch ? bind(arch) ?? null : null;
    } catch {
      bound = null;
    }
  }
  return bound;
}

/** A NUL-terminated copy of `s` for a `const char *` argument. */
export function cString(s: string): Uint8Array {
  const bytes = new TextEncoder().encode(s);
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  return out;
}
