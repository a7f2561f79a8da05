/**
 * Each confined start's private temporary directory (its TMPDIR): `tmp/<pid>-<label>-XXXXXX`
 * under hermit's state directory, mode 0700, removed when the child exits or the host closes.
 * What hermit processes that are gone left there (killed before they could clean up) is swept
 * when a gateway first records its adapter (`SandboxHost`).
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { isAlive } from "../platform/proc.ts";

export class TmpDirs {
  readonly root: string;
  readonly #dirs = new Set<string>();

  constructor(stateDir: string) {
    this.root = path.join(stateDir, "tmp");
  }

  /** A new directory for one start of `label`. */
  create(label: string): string {
    mkdirSync(this.root, { recursive: true, mode: 0o700 });
    const dir = mkdtempSync(path.join(this.root, `${process.pid}-${label.replace(/[^A-Za-z0-9_-]/g, "_")}-`));
    this.#dirs.add(dir);
    return dir;
  }

  drop(dir: string | undefined): void {
    if (!dir) return;
    this.#dirs.delete(dir);
    rmSync(dir, { recursive: true, force: true });
  }

  /** Remove every directory still here (the host closes). */
  dropAll(): void {
    for (const d of this.#dirs) this.drop(d);
  }

  /** Remove temporary directories of hermit processes that are gone. */
  sweep(): void {
    let names: string[];
    try {
      names = readdirSync(this.root);
    } catch {
      return;
    }
    for (const n of names) {
      const pid = Number(/^(\d+)-/.exec(n)?.[1]);
      if (pid && pid !== process.pid && !isAlive(pid)) {
        rmSync(path.join(this.root, n), { recursive: true, force: true });
      }
    }
  }
}
