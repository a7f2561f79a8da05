/**
 * The two foreign-function interfaces hermit calls native libraries through: `bun:ffi` (the
 * compiled binary, and Bun) and `Deno.dlopen` (Deno, with --allow-ffi). Only their shapes and how
 * to reach them live here; `libc.ts` and `win_api.ts` bind what they need.
 */

export interface BunFfi {
  dlopen(
    lib: string,
    symbols: Record<string, { args: string[]; returns: string }>,
  ): { symbols: Record<string, (...a: unknown[]) => unknown> };
  ptr(view: ArrayBufferView): number;
}

export interface DenoFfi {
  dlopen(
    lib: string,
    symbols: Record<string, { parameters: string[]; result: string }>,
  ): { symbols: Record<string, (...a: unknown[]) => unknown> };
}

const g = globalThis as unknown as { Deno?: Partial<DenoFfi>; Bun?: unknown };

/** `bun:ffi` under Bun (and in the compiled binary); undefined elsewhere. */
export function bunFfi(): BunFfi | undefined {
  if (!g.Bun) return undefined;
  return (import.meta as unknown as { require?: (s: string) => BunFfi }).require?.("bun:ffi");
}

/** Deno's FFI under Deno; undefined elsewhere. */
export function denoFfi(): DenoFfi | undefined {
  return g.Deno?.dlopen ? (g.Deno as DenoFfi) : undefined;
}
