/**
 * This process's file descriptors, where the OS tells (Linux `/proc/self`): how many are open and
 * the soft limit on them. Undefined elsewhere.
 */
import { readdirSync, readFileSync } from "node:fs";

/** How many are open; Infinity when none is left to look (EMFILE), undefined where unknown. */
export function openDescriptors(): number | undefined {
  try {
    return readdirSync("/proc/self/fd").length;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "EMFILE" || code === "ENFILE" ? Infinity : undefined;
  }
}

export function descriptorLimit(): number | undefined {
  try {
    const line = readFileSync("/proc/self/limits", "utf8").split("\n").find((l) =>
      l.startsWith("Max open files")
    );
    const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
    return soft && /^\d+$/.test(soft) ? Number(soft) : undefined;
  } catch {
    return undefined;
  }
}
