/**
 * Reading a file hermit parses (the manifest, context, skills, roles) with a size limit, so a huge
 * or endless file (a 100 MB manifest, a link to /dev/zero) is a one-line error, found quickly and
 * without reading more than the limit into memory.
 */
import process from "node:process";
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

export const MiB = 1024 * 1024;

/** The file holds more than `limit` bytes (`size` is what stat said, when it knew). */
export class FileTooLarge extends Error {
  constructor(readonly file: string, readonly limit: number, readonly size?: number) {
    super(
      `${file} is ${size === undefined ? "larger than" : `${size} bytes, over`} the limit of ${
        describeBytes(limit)
      }`,
    );
    this.name = "FileTooLarge";
  }
}

/** The file is a FIFO or a socket: nothing to read without waiting on whoever is at the other end. */
export class NotAFile extends Error {
  constructor(readonly file: string, readonly kind: string) {
    super(`${file} is not a regular file (a ${kind})`);
    this.name = "NotAFile";
  }
}

/** The file is not UTF-8 text: decoding it would silently turn its bad bytes into U+FFFD. */
export class NotUtf8 extends Error {
  constructor(readonly file: string, readonly line: number) {
    super(`${file} is not UTF-8 text (line ${line})`);
    this.name = "NotUtf8";
  }
}

/** The 1-based line of the first byte sequence that is not UTF-8. Pure. */
function badLine(bytes: Uint8Array): number {
  const strict = new TextDecoder("utf-8", { fatal: true });
  let line = 1;
  let start = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i < bytes.length && bytes[i] !== 0x0a) continue;
    try {
      strict.decode(bytes.subarray(start, i));
    } catch {
      return line;
    }
    line++;
    start = i + 1;
  }
  return line;
}

/** `n` bytes for people: `1 MiB`, `11.5 MiB`, `512 bytes`. */
export function describeBytes(n: number): string {
  if (n < MiB) return `${n} bytes`;
  const mib = n / MiB;
  return `${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB`;
}

/** What `st` is, when it is not a regular file. */
function kindOf(
  st: { isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isDirectory(): boolean },
) {
  if (st.isFIFO()) return "FIFO";
  if (st.isSocket()) return "socket";
  if (st.isCharacterDevice()) return "character device";
  return st.isDirectory() ? "directory" : "block device";
}

/**
 * The UTF-8 text of `file` (a BOM dropped), or `FileTooLarge` past `limit` bytes, `NotUtf8` for
 * bytes that are not UTF-8, `NotAFile` for a FIFO or socket — and with `regularOnly`, for anything
 * but a regular file (a device, a directory)
 * (opened without blocking, so a FIFO no one writes to is refused at once; I/O errors are thrown
 * as they are).
 */
export function readTextCapped(file: string, limit: number, opts: { regularOnly?: boolean } = {}): string {
  const nonBlocking = process.platform === "win32" ? 0 : constants.O_NONBLOCK;
  const fd = openSync(file, constants.O_RDONLY | nonBlocking);
  try {
    const st = fstatSync(fd);
    if (st.isFIFO() || st.isSocket() || (opts.regularOnly && !st.isFile())) {
      throw new NotAFile(file, kindOf(st));
    }
    if (st.isFile() && st.size > limit) throw new FileTooLarge(file, limit, st.size);
    const chunks: Buffer[] = [];
    let got = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.min(64 * 1024, limit + 1 - got));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      got += n;
      if (got > limit) throw new FileTooLarge(file, limit); // it grew, or is not a regular file
    }
    const bytes = Buffer.concat(chunks, got);
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw new NotUtf8(file, badLine(bytes));
    }
  } finally {
    closeSync(fd);
  }
}
