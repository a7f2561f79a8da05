/**
 * SHA-256 of a text, as lowercase hex. Under Bun (and in the compiled binary) through
 * `Bun.CryptoHasher`, because loading `node:crypto` there costs a relay about 2 MiB of its memory;
 * elsewhere through `node:crypto`, loaded on first use. Same digest either way.
 */
import process from "node:process";

interface Hasher {
  update(data: string): Hasher;
  digest(encoding: "hex"): string;
}
const bun = (globalThis as unknown as { Bun?: { CryptoHasher: new (algorithm: "sha256") => Hasher } }).Bun;

export function sha256Hex(text: string): string {
  if (bun) return new bun.CryptoHasher("sha256").update(text).digest("hex");
  const crypto = process.getBuiltinModule("node:crypto") as typeof import("node:crypto");
  return crypto.createHash("sha256").update(text).digest("hex");
}
