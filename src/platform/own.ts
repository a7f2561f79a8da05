/**
 * Reading and writing a plain object keyed by names someone else chose (an upstream's tool
 * names, the servers of a manifest or a lock): only the object's own keys count. `tools.constructor`
 * on a plain object is `Object`, and `tools["__proto__"] = x` replaces its prototype instead of
 * adding a key; these two never do either. Pure.
 */

/** `rec[key]` when `rec` has it as its own key; otherwise undefined (never a prototype's member). */
export function own<T>(rec: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return rec !== undefined && Object.hasOwn(rec, key) ? rec[key] : undefined;
}

/** `rec[key] = value` as an own key, `__proto__` too. */
export function setOwn<T>(rec: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(rec, key, { value, enumerable: true, writable: true, configurable: true });
}
