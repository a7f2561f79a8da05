/** Temporary directories for tests, removed afterwards. */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export function tempDir(prefix = "hermit-test-"): { path: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { path: dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A private copy of an adapter directory (tests may write into it). */
export function copyAdapter(from: string, into: string, name = path.basename(from)): string {
  const to = path.join(into, name);
  cpSync(from, to, { recursive: true });
  return to;
}
