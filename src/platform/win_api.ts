/**
 * The thin layer over the Windows API that hermit's process control needs, called through the
 * runtime's FFI (`bun:ffi` in the compiled binary and under Bun, `Deno.dlopen` under Deno):
 * the process table with parent pids and creation times (ntdll NtQuerySystemInformation), one
 * process's creation time and liveness (OpenProcess, GetProcessTimes, WaitForSingleObject), and
 * TerminateProcess. No process is spawned for any of it (a `tasklist` or PowerShell per poll
 * would cost hundreds of milliseconds). Every function answers undefined/false when there is no
 * FFI; `proc.ts` then falls back to `tasklist`/`taskkill`. Decisions live in `win_tree.ts`.
 */
import process from "node:process";
import { bunFfi, denoFfi } from "./ffi.ts";
import { parseProcessInformation, type ProcEntry, type ProcessId } from "./win_tree.ts";

type Handle = unknown;

interface Kernel {
  open(access: number, pid: number): Handle | null;
  close(h: Handle): void;
  /** Creation, exit, kernel and user time of a process, as FILETIMEs. */
  times(h: Handle, out: BigUint64Array): boolean;
  wait(h: Handle, ms: number): number;
  terminate(h: Handle, code: number): boolean;
  query(infoClass: number, buf: Uint8Array, returned: Uint32Array): number;
}

const PROCESS_TERMINATE = 0x0001;
const PROCESS_QUERY_LIMITED_INFORMATION = 0x1000;
const SYNCHRONIZE = 0x00100000;
const WAIT_TIMEOUT = 0x102;
const SYSTEM_PROCESS_INFORMATION = 5;
const STATUS_INFO_LENGTH_MISMATCH = 0xC0000004 | 0;

/** The same six functions, in each FFI's own spelling of the types. */
function signatures(ptr: string, buf: string) {
  return {
    kernel32: {
      OpenProcess: [["u32", "i32", "u32"], ptr],
      CloseHandle: [[ptr], "i32"],
      GetProcessTimes: [[ptr, buf, buf, buf, buf], "i32"],
      WaitForSingleObject: [[ptr, "u32"], "u32"],
      TerminateProcess: [[ptr, "u32"], "i32"],
    },
    ntdll: { NtQuerySystemInformation: [["u32", buf, "u32", buf], "i32"] },
  } as const;
}

function bind(): Kernel | undefined {
  const ffi = bunFfi();
  if (ffi) {
    const sig = signatures("ptr", "ptr");
    const open = (lib: keyof typeof sig) =>
      ffi.dlopen(
        `${lib}.dll`,
        Object.fromEntries(
          Object.entries(sig[lib]).map(([n, [args, returns]]) => [n, { args: [...args], returns }]),
        ),
      ).symbols;
    const k = open("kernel32");
    const nt = open("ntdll");
    const p = (view: ArrayBufferView, byteOffset = 0) =>
      ffi.ptr(new Uint8Array(view.buffer, view.byteOffset + byteOffset));
    return {
      open: (access, pid) => (k.OpenProcess(access, 0, pid) as Handle) || null,
      close: (h) => void k.CloseHandle(h),
      times: (h, out) => k.GetProcessTimes(h, p(out), p(out, 8), p(out, 16), p(out, 24)) !== 0,
      wait: (h, ms) => k.WaitForSingleObject(h, ms) as number,
      terminate: (h, code) => k.TerminateProcess(h, code) !== 0,
      query: (cls, buf, ret) => nt.NtQuerySystemInformation(cls, p(buf), buf.byteLength, p(ret)) as number,
    };
  }
  const deno = denoFfi();
  if (deno) {
    const sig = signatures("pointer", "buffer");
    const open = (lib: keyof typeof sig) =>
      deno.dlopen(
        `${lib}.dll`,
        Object.fromEntries(
          Object.entries(sig[lib]).map((
            [n, [parameters, result]],
          ) => [n, { parameters: [...parameters], result }]),
        ),
      ).symbols;
    const k = open("kernel32");
    const nt = open("ntdll");
    const at = (view: ArrayBufferView, byteOffset = 0) =>
      new Uint8Array(view.buffer, view.byteOffset + byteOffset);
    return {
      open: (access, pid) => (k.OpenProcess(access, 0, pid) as Handle) ?? null,
      close: (h) => void k.CloseHandle(h),
      times: (h, out) => k.GetProcessTimes(h, at(out), at(out, 8), at(out, 16), at(out, 24)) !== 0,
      wait: (h, ms) => k.WaitForSingleObject(h, ms) as number,
      terminate: (h, code) => k.TerminateProcess(h, code) !== 0,
      query: (cls, buf, ret) => nt.NtQuerySystemInformation(cls, buf, buf.byteLength, at(ret)) as number,
    };
  }
  return undefined;
}

let kernel: Kernel | null | undefined;

/** The bound API; null off Windows or without FFI (Node, or Deno without --allow-ffi). */
function api(): Kernel | null {
  if (kernel === undefined) {
    try {
      kernel = process.platform === "win32" ? bind() ?? null : null;
    } catch {
      kernel = null;
    }
  }
  return kernel;
}

export function winApiAvailable(): boolean {
  return api() !== null;
}

/** Creation time of the live process `pid`; undefined when none runs under it (or no FFI). */
export function winCreationTime(pid: number): bigint | undefined {
  const k = api();
  if (!k || !Number.isInteger(pid) || pid <= 0) return undefined;
  const h = k.open(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, pid);
  if (!h) return undefined;
  try {
    // An exited process stays openable while anyone holds a handle to it: ask whether it runs.
    if (k.wait(h, 0) !== WAIT_TIMEOUT) return undefined;
    const t = new BigUint64Array(4);
    return k.times(h, t) ? t[0] : undefined;
  } finally {
    k.close(h);
  }
}

/** Every process: pid, parent pid, creation time. Undefined without FFI or on failure. */
export function winProcessTable(): ProcEntry[] | undefined {
  const k = api();
  if (!k) return undefined;
  let size = 512 * 1024;
  for (let attempt = 0; attempt < 6; attempt++) {
    const buf = new Uint8Array(size);
    const returned = new Uint32Array(1);
    const status = k.query(SYSTEM_PROCESS_INFORMATION, buf, returned);
    if (status === 0) return parseProcessInformation(buf, returned[0] || buf.byteLength);
    if (status !== STATUS_INFO_LENGTH_MISMATCH) return undefined;
    size = Math.max(size * 2, returned[0] + 64 * 1024);
  }
  return undefined;
}

/**
 * TerminateProcess, but only if `target.pid` still belongs to the process created at
 * `target.start` (never a stranger that inherited the pid). True when it was terminated.
 */
export function winTerminate(target: ProcessId, exitCode = 1): boolean {
  const k = api();
  if (!k) return false;
  const h = k.open(PROCESS_TERMINATE | PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, target.pid);
  if (!h) return false;
  try {
    const t = new BigUint64Array(4);
    if (!k.times(h, t) || t[0] !== target.start || k.wait(h, 0) !== WAIT_TIMEOUT) return false;
    return k.terminate(h, exitCode);
  } finally {
    k.close(h);
  }
}
