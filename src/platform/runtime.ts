/**
 * The only module that knows which runtime hermit runs on (Deno, Bun, or the Bun-compiled binary)
 * and how to start another copy of itself.
 */
import process from "node:process";

interface DenoLike {
  execPath(): string;
}
interface BunLike {
  main: string;
}

const g = globalThis as unknown as { Deno?: DenoLike; Bun?: BunLike };

export const runtime: "deno" | "bun" | "node" = g.Deno ? "deno" : g.Bun ? "bun" : "node";

/** Is `moduleUrl` inside a `bun build --compile` (or `deno compile`) executable? Pure. */
export function isCompiledUrl(moduleUrl: string): boolean {
  // Windows: file:///B:/%7EBUN/root/… (the tilde arrives URL-encoded); elsewhere /$bunfs/root/….
  const url = decodeURIComponent(moduleUrl);
  return url.includes("$bunfs") || url.includes("~BUN") || url.includes("/deno-compile-");
}

/** True inside a `bun build --compile` (or `deno compile`) executable. */
export const compiled: boolean = isCompiledUrl(import.meta.url);

// node:url is loaded only here: the relay reads `compiled` and should not pay for it
const mainModule = (): string =>
  (process.getBuiltinModule("node:url") as typeof import("node:url")).fileURLToPath(
    new URL("../main.ts", import.meta.url),
  );

/**
 * argv that starts hermit again: the binary itself when compiled, otherwise the runtime plus
 * `src/main.ts`. `HERMIT_SELF` (a path to a hermit executable) overrides, which tests use to run
 * children from `dist/hermit`.
 */
export function selfCommand(): string[] {
  const override = process.env.HERMIT_SELF;
  if (override) return [override];
  if (compiled) return [process.execPath];
  if (runtime === "deno") return [g.Deno!.execPath(), "run", "-A", "--no-check", mainModule()];
  return [process.execPath, mainModule()];
}
