/**
 * The runtime's foreign-function interface, typed for what hermit uses: `bun:ffi` in the compiled
 * binary and under Bun, `Deno.dlopen` under Deno (which needs --allow-ffi; `-A` gives it). Each
 * accessor answers undefined on the other runtime. Callers bind their own symbols (`libc.ts`,
 * `win_api.ts`).
 */
type Symbols = { symbols: Record<string, (...a: unknown[]) => unknown> };

export interface BunFfi {
  dlopen(lib: string, symbols: Record<string, { args: string[]; returns: string }>): Symbols;
  ptr(view: ArrayBufferView): number;
  read: { i32(ptr: number, offset?: number): number };
}

export interface DenoFfi {
  dlopen(lib: string, symbols: Record<string, { parameters: string[]; result: string }>): Symbols;
  UnsafePointer: { of(v: ArrayBufferView): unknown; value(p: unknown): bigint };
  UnsafePointerView: new (p: unknown) => { getInt32(offset?: number): number };
}

const g = globalThis as unknown as { Deno?: Partial<DenoFfi>; Bun?: unknown };

export function bunFfi(): BunFfi | undefined {
  if (!g.Bun) return undefined;
  return (import.meta as unknown as { require?: (s: string) => BunFfi }).require?.("bun:ffi");
}

export function denoFfi(): DenoFfi | undefined {
  return g.Deno?.dlopen ? g.Deno as DenoFfi : undefined;
}
